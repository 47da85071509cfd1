"""``ctxgraph eval SET --repo GIT_DIR``: a set measured the way a user gets
ctxgraph (issue 44) — the history, the ADRs and the code notes imported from
the project's repository at the set's snapshot, not read from
``history.jsonl`` (docs/evaluation.md, "From the repository").

The repository is checked out at the snapshot (:mod:`.checkout`). Two fresh
stores are then loaded and asked, one after the other:

1. ``ctxgraph``: the history imported by
   :meth:`~ctxgraph.service.ContextService.import_history` from the checkout
   (the commits reachable from the snapshot, with the import's noise rules;
   no query's own commit can be among them — the count is checked, reported,
   and any found is retired: never shown), the ADRs and code notes imported by
   :meth:`~ctxgraph.service.ContextService.import_project_knowledge`, the
   set's context map, the tasks' vectors, and the source indexed for the
   associative memory from the checkout (the ``src_prefix`` folder alone, the
   package a plain run indexes from its release, and the commits keep that
   folder's files alone, as ``ctxgraph history import --path`` keeps them;
   with ``scope="tree"`` the whole tree and every file, as ``ctxgraph init``
   imports and indexes a project); the memory on.
2. ``ctxgraph-day-zero``: the context map and the same source index alone —
   no history, no imported knowledge; the memory on.

The baselines (``bm25``, ``seed``, ``all``) are a plain run's, from the
set's files. The queries' "now" is the snapshot's commit time.

Scoring is a plain run's: the files a context names are the set's known
paths (its context map's and those ``history.jsonl`` touched — the project's
source files, which the gold files are) in order of first appearance, so
the rows compare with a plain run's. A context may also name other files (a
test or a docs page the memory shows, the file an imported note was read
from): ``every_file`` gives recall at 5 and 10 with every file tracked at
the snapshot or touched by an imported commit counted among the files named,
so that such a file takes a place as a source file does.

``knowledge``: for each scored query, the imported items (decisions from
ADRs, gotchas from code notes) the ``ctxgraph`` row's context shows, each by
the file it was read from, scored against the query's gold files beside as
many items picked by BM25 (:class:`~ctxgraph.evaluation.knowledge.KnowledgeScore`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ctxgraph.core.models import Complexity, TaskStatus, utcnow
from ctxgraph.evaluation.checkout import checkout, commit_time, package_tree, src_prefix_of, tracked_files
from ctxgraph.evaluation.dataset import EvalSet, QueryLine
from ctxgraph.evaluation.knowledge import KnowledgeScore
from ctxgraph.evaluation.protocol import QueryOutcome, distinct, is_skipped, summarize
from ctxgraph.evaluation.runner import (
    SYSTEMS,
    TUNED_SYSTEM,
    EvalReport,
    Stage,
    embed_history,
    index_source,
    no_progress,
    run_queries,
)
from ctxgraph.service import ContextService
from ctxgraph.service.history_types import HistoryOptions, HistoryReport
from ctxgraph.service.project_notes import SOURCE, KnowledgeImportReport
from ctxgraph.sources.git_log import run_git
from ctxgraph.sources.history import ID_PREFIX, is_commit_task

#: The row of ctxgraph on a store holding the context map and the source alone.
DAY_ZERO_SYSTEM = "ctxgraph-day-zero"
#: What the memory indexes: ``src_prefix`` alone, or the checkout's whole tree.
SCOPES = ("package", "tree")
#: The prefix of a query's id: ``q-`` and the first 10 hex digits of its commit.
QUERY_PREFIX = "q-"

#: Opens a fresh, empty store's service (closed on leaving the ``with``).
ServiceFactory = Callable[[], AbstractContextManager[ContextService]]


@dataclass(frozen=True)
class RepoSource:
    """The checkout at the snapshot and what of it the memory indexes."""

    tree: Path
    index_root: Path
    scope: str
    #: The snapshot's commit time: the queries' "now".
    now: datetime
    #: The files tracked at the snapshot.
    files: tuple[str, ...]
    #: The folders whose files the imported commits keep (the package's with
    #: ``scope="package"``, as its index; ``()``: all).
    history_paths: tuple[str, ...] = ()


def prepare(repo: Path, eval_set: EvalSet, *, scope: str = "package", cache: Path | None = None) -> RepoSource:
    """Check ``repo`` out at the set's snapshot (cached) and pick the folder to index."""
    if scope not in SCOPES:
        raise ValueError(f"scope: {scope!r} is not one of {', '.join(SCOPES)}")
    tree = checkout(repo, eval_set.meta, eval_set.name, cache)
    prefix = src_prefix_of(eval_set.meta, eval_set.name)
    root = tree if scope == "tree" else package_tree(tree, prefix)
    return RepoSource(tree=tree, index_root=root, scope=scope, now=commit_time(tree),
                      files=tuple(tracked_files(tree)), history_paths=() if scope == "tree" else (prefix,))


def query_commits(svc: ContextService, eval_set: EvalSet) -> int:
    """How many queries' own commits are among the store's finished tasks
    (``q-`` + 10 hex is ``c-`` + the same 10); those found are retired (never
    shown), so that no query ever sees its own commit."""
    ids = [ID_PREFIX + q.id[len(QUERY_PREFIX):] for q in eval_set.queries if q.id.startswith(QUERY_PREFIX)]
    ids = [i for i in ids if is_commit_task(i)]
    found = [t.id for t in svc.store.get_tasks(ids) if t.status is not TaskStatus.RETIRED] if ids else []
    if found:
        svc.store.set_statuses(found, TaskStatus.RETIRED, utcnow())
    return len(found)


def load_repo(svc: ContextService, eval_set: EvalSet, source: RepoSource, *, stage: Stage = no_progress,
              warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Load the ``ctxgraph`` row's store (steps of the module's text, all but
    the source's index); what each import did."""
    count = int(run_git(source.tree, "rev-list", "--count", "--no-merges", "HEAD").stdout.strip() or 0)
    with stage("Importing the history", count) as tick:
        read = 0

        def progress(report: HistoryReport) -> None:
            nonlocal read
            tick(report.read - read)
            read = report.read

        history = svc.import_history(source.tree, HistoryOptions(paths=source.history_paths), progress=progress)
    leaked = query_commits(svc, eval_set)
    with stage("Importing ADRs and code notes", 1) as tick:
        knowledge = svc.import_project_knowledge(source.tree, adrs=True, notes=True, adr_dirs=(),
                                                 at=source.now.isoformat())
        tick(1)
    if eval_set.files:
        svc.add_files(list(eval_set.files))
    started = time.perf_counter()
    embed_history(svc, history.imported, stage=stage, warn=warn)
    return {"history": history_figures(history), "query_commits": leaked,
            "knowledge": knowledge_figures(knowledge), "embed_seconds": round(time.perf_counter() - started, 3)}


def history_figures(report: HistoryReport) -> dict[str, Any]:
    """What the history import did, for the report: commits read, imported,
    skipped per rule, files dropped per rule, seconds."""
    return {"head": report.head, "read": report.read, "imported": report.imported,
            "skipped": dict(sorted(report.skipped.items())),
            "files_dropped": dict(sorted(report.files_dropped.items())),
            "seconds": report.seconds, "full_text_seconds": report.full_text_seconds,
            "signals_seconds": report.signals_seconds}


def knowledge_figures(report: KnowledgeImportReport) -> dict[str, Any]:
    out = report.as_dict()
    out.pop("root", None)
    return out


def imported_items(svc: ContextService) -> tuple[dict[str, str], dict[str, str]]:
    """The imported knowledge: item id -> the file it was read from, and item id -> its text."""
    files = {i: f.path for f in svc.store.imported_files(SOURCE) for i in f.items}
    texts = {k.id: k.summary for k in svc.store.get_knowledge(sorted(files))} if files else {}
    return files, texts


def every_path(svc: ContextService, eval_set: EvalSet, source: RepoSource) -> list[str]:
    """Every path a context can name: the set's, the files tracked at the
    snapshot, the files the imported commits touched."""
    touched = svc.store.handoff_files(sorted(svc.store.history_tasks(ID_PREFIX)))
    return distinct([*eval_set.known_paths, *source.files, *(p for files in touched.values() for p in files)])


def shown_items(ctx: Any) -> list[str]:
    """The ids of the knowledge items a computed context shows, in its order."""
    return [*(p.id for p in ctx.patterns_to_follow), *(w.id for w in ctx.warnings),
            *(d.id for d in ctx.relevant_decisions)]


def run_repo_eval(
    open_service: ServiceFactory,
    eval_set: EvalSet,
    source: RepoSource,
    *,
    budget: int | None = None,
    complexity: Complexity | str | None = None,
    stage: Stage = no_progress,
    embeddings: bool = True,
    embedder: Any = None,
    warn: Callable[[str], None] | None = None,
    tune: bool = False,
) -> EvalReport:
    """The run of the module's text: both stores, the baselines, the
    knowledge's precision; with ``tune``, also the ``ctxgraph+tuned`` row
    (weights fitted on the imported history, memory off)."""
    started = time.perf_counter()
    shown: dict[str, list[str]] = {}
    queried = 0.0
    with open_service() as svc:
        _quiet(svc, embedder)
        imports = load_repo(svc, eval_set, source, stage=stage, warn=warn)
        tuning = svc.tune() if tune else None
        indexed = index_source(svc, eval_set, source.index_root, embeddings=embeddings, embedder=embedder,
                               stage=stage)
        svc.use_root(source.tree)
        known = every_path(svc, eval_set, source)
        files, texts = imported_items(svc)
        systems = ("ctxgraph", *((TUNED_SYSTEM,) if tuning is not None else ()), *SYSTEMS[1:])
        mark = time.perf_counter()
        outcomes, skipped, _ = run_queries(
            svc, eval_set, budget=budget, complexity=complexity, stage=stage, memory=True, systems=systems,
            tuned=tuning.weights if tuning is not None else None, known=known, now=source.now,
            on_context=lambda query, ctx: shown.__setitem__(query.id, shown_items(ctx)))
        queried += time.perf_counter() - mark
    with open_service() as svc:
        _quiet(svc, embedder)
        if eval_set.files:
            svc.add_files(list(eval_set.files))
        index_source(svc, eval_set, source.index_root, embeddings=embeddings, embedder=embedder, stage=stage)
        svc.use_root(source.tree)
        mark = time.perf_counter()
        zero, _, _ = run_queries(svc, eval_set, budget=budget, complexity=complexity, stage=stage, memory=True,
                                 systems=("ctxgraph",), known=known, now=source.now)
        queried += time.perf_counter() - mark
    outcomes[DAY_ZERO_SYSTEM] = zero["ctxgraph"]
    order = (systems[0], DAY_ZERO_SYSTEM, *systems[1:])
    in_set = frozenset(eval_set.known_paths)
    scored_outcomes = {name: [replace(o, named=tuple(p for p in o.named if p in in_set)) for o in outcomes[name]]
                       for name in order}
    snapshot = frozenset(eval_set.map_paths)
    return EvalReport(
        set=eval_set.name, queries=len(eval_set.queries), skipped=skipped,
        systems={name: summarize(scored_outcomes[name], skipped, snapshot) for name in order},
        outcomes={name: tuple(scored_outcomes[name]) for name in order},
        every_file={name: _every_file(outcomes[name], skipped) for name in order},
        tuning=tuning.fits if tuning is not None else (),
        index={**indexed.as_dict(), "scope": source.scope},
        imports={"snapshot": source.now.isoformat(), **imports},
        knowledge=knowledge_score(eval_set, files, texts, shown),
        load_seconds=time.perf_counter() - started - queried, query_seconds=queried)


def _every_file(outcomes: Sequence[QueryOutcome], skipped: int) -> dict[str, float]:
    metrics = summarize(outcomes, skipped)
    return {"recall_at_5": round(metrics.recall_at_5, 4), "recall_at_10": round(metrics.recall_at_10, 4)}


def _quiet(svc: ContextService, embedder: Any) -> None:
    """No delivery recorded; the vectors of tasks and queries through ``embedder`` (cached by text) when given."""
    svc.record_outcomes = False
    if embedder is not None:
        svc.embedder = embedder


def knowledge_score(eval_set: EvalSet, files: dict[str, str], texts: dict[str, str],
                    shown: dict[str, list[str]]) -> dict[str, Any]:
    """:class:`KnowledgeScore` over the scored queries' shown items."""
    score = KnowledgeScore(files, texts)
    for query in scored(eval_set):
        score.add(query.text, shown.get(query.id, []), query.gold_files)
    return score.as_dict()


def scored(eval_set: EvalSet) -> Sequence[QueryLine]:
    """The queries a run scores (some gold file in the context map)."""
    return [q for q in eval_set.queries if not is_skipped(q.gold_files, eval_set.map_paths)]


def format_imports(report: EvalReport) -> list[str]:
    """The text report's lines on a ``--repo`` run: recall at 5 with every
    file counted, the imports, the knowledge's precision."""
    lines = []
    if report.every_file:
        rows = ", ".join(f"{name} {figures['recall_at_5']:.3f}" for name, figures in report.every_file.items())
        lines.append(f"recall@5 with every file named counted (tests, docs, ...): {rows}")
    imports = report.imports or {}
    history = imports.get("history")
    if history:
        skipped = ", ".join(f"{rule} {n:,}" for rule, n in history["skipped"].items()) or "none"
        lines.append(f"history: {history['read']:,} commits read, {history['imported']:,} imported "
                     f"(skipped: {skipped}) in {history['seconds']:.1f}s; query commits among them: "
                     f"{imports.get('query_commits', 0)}")
    found = imports.get("knowledge")
    if found:
        lines.append(f"knowledge: decisions from ADRs {found['decisions']:,}, gotchas from code notes "
                     f"{found['gotchas']:,} ({found['files']:,} files looked at) in {found['seconds']:.1f}s")
    knowledge = report.knowledge
    if knowledge is not None:
        ours, theirs = knowledge["ctxgraph"], knowledge["bm25"]
        lines.append(f"knowledge shown: {ours['shown']:,} imported items for {knowledge['queries_shown']} queries; "
                     f"in a gold file: ctxgraph {_figure(ours['precision'])} (hit {_figure(ours['hit'])}), "
                     f"bm25 {_figure(theirs['precision'])} (hit {_figure(theirs['hit'])})")
    return lines


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


__all__ = ["DAY_ZERO_SYSTEM", "SCOPES", "RepoSource", "ServiceFactory", "every_path", "format_imports",
           "load_repo", "prepare", "query_commits", "run_repo_eval", "shown_items"]
