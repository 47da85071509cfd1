"""One evaluation run: load a set into an empty store, then answer every
query with each system and score what the rendered contexts name.

The store must be empty (the CLI opens a fresh temporary one, or clears the
Neo4j server it is pointed at). ctxgraph answers through
:meth:`ContextService.compute` on an unsaved :class:`Task`, exactly as an
orchestrator calls it; the query is never written. Its "now" is the end of
the history (the latest completion), so recency ranks the same on any day.

``budget``: ctxgraph computes within it (``compute(budget=...)``, its own
limiter); the baselines, which have none, are cut to their leading whole
lines within it (:func:`~ctxgraph.evaluation.protocol.truncate_to_budget`).

Times: ctxgraph's include the query's signal extraction; the seed row's then read
the same signals from the extractor's cache, so they time the scoring and
rendering only. bm25's index is built once per run, before the queries.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxgraph.compute.ranking import RankingWeights
from ctxgraph.compute.tune import WeightFit
from ctxgraph.core.models import Complexity
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.evaluation.baselines import Bm25Files, map_score_paths, render_all, render_paths
from ctxgraph.evaluation.dataset import HISTORY, EvalSet, QueryLine
from ctxgraph.evaluation.protocol import (
    QueryOutcome,
    SystemMetrics,
    extract_paths,
    is_skipped,
    summarize,
    truncate_to_budget,
)
from ctxgraph.service import ContextService

if TYPE_CHECKING:
    from ctxgraph.compute.config import ContextConfig
    from ctxgraph.compute.output import ComputedContext
    from ctxgraph.core.models import FileEntry
    from ctxgraph.memory.index import IndexReport

log = logging.getLogger(__name__)

SYSTEMS = ("ctxgraph", "bm25", "seed", "all")
#: With the project's source indexed, the "ctxgraph" row is the default a user
#: gets (the associative memory on) and this row is ctxgraph with it off.
NO_MEMORY_SYSTEM = "ctxgraph-no-memory"
#: The row of ctxgraph with the weights ``ctxgraph tune`` fits on the loaded
#: history (never on the queries); its associative memory off.
TUNED_SYSTEM = "ctxgraph+tuned"
#: Signals are extracted in batches of this many task texts (spaCy's nlp.pipe).
SIGNAL_BATCH = 256

Tick = Callable[[int], None]
#: ``stage(label, length)`` gives a context manager yielding a ``tick(n)``
#: callable; the CLI shows a progress bar per stage.
Stage = Callable[[str, int], AbstractContextManager[Tick]]


@contextmanager
def no_progress(label: str, length: int) -> Iterator[Tick]:
    yield lambda n: None


@dataclass(frozen=True)
class EvalReport:
    set: str
    queries: int
    skipped: int
    systems: dict[str, SystemMetrics]
    outcomes: dict[str, tuple[QueryOutcome, ...]] = field(default_factory=dict)
    #: Rendered ctxgraph context per scored query id (only when asked for).
    contexts: dict[str, str] = field(default_factory=dict)
    #: Wall-clock seconds: loading the store, answering the queries.
    load_seconds: float = 0.0
    query_seconds: float = 0.0
    #: What indexing the source did (``--index-source``), else None.
    index: dict[str, Any] | None = None
    #: What tuning on the history found (one fit per weight set).
    tuning: tuple[WeightFit, ...] = ()
    #: A run from the repository (``--repo``, :mod:`ctxgraph.evaluation.repo`):
    #: what its imports did, and the imported knowledge's precision.
    imports: dict[str, Any] | None = None
    knowledge: dict[str, Any] | None = None
    #: Per system, recall at 5 and 10 with every file a context names counted (``--repo``).
    every_file: dict[str, dict[str, float]] | None = None

    def as_dict(self, *, index_paths: bool = False) -> dict[str, Any]:
        """The report as JSON: the source index's files counted, and listed too with ``index_paths``."""
        return {
            "set": self.set,
            "queries": self.queries,
            "skipped": self.skipped,
            "systems": {name: metrics.as_dict() for name, metrics in self.systems.items()},
            **({"every_file": self.every_file} if self.every_file is not None else {}),
            **({"knowledge": self.knowledge} if self.knowledge is not None else {}),
            **({"imports": self.imports} if self.imports is not None else {}),
            **({"index": index_summary(self.index, paths=index_paths)} if self.index else {}),
            **({"tuning": [f.as_dict() for f in self.tuning]} if self.tuning else {}),
        }


#: The index report's per-file parts, counted in an evaluation's report rather than listed
#: (a first index lists every file of the release: 824 paths for one set).
_LISTS = ("skipped", "added", "changed", "deleted")


def index_summary(index: dict[str, Any], *, paths: bool = False) -> dict[str, Any]:
    """``index`` (an :class:`~ctxgraph.memory.index.IndexReport`'s dict) with counts
    of its lists of paths (``files_added`` etc.; the lists themselves too with
    ``paths``) and ``redacted`` as the values redacted in all."""
    out = {k: v for k, v in index.items() if (paths or k not in _LISTS) and k != "redacted"}
    out.update({f"files_{k}": len(index.get(k) or ()) for k in _LISTS})
    out["redacted"] = sum((index.get("redacted") or {}).values())
    return out


def load_history(svc: ContextService, eval_set: EvalSet, *, stage: Stage = no_progress,
                 warn: Callable[[str], None] | None = None) -> None:
    """The history's tasks (one batch) and handoffs, then the context map."""
    tasks = [line.task() for line in eval_set.history]
    # Signal extraction dominates loading. ``add_tasks`` extracts one text at a
    # time; extracting first in nlp.pipe batches fills the extractor's cache,
    # which add_tasks then reads (same text, same type, same signals).
    with stage("Extracting signals", len(tasks)) as tick:
        for start in range(0, len(tasks), SIGNAL_BATCH):
            batch = tasks[start:start + SIGNAL_BATCH]
            svc.extractor.extract_many([t.text for t in batch], [t.type for t in batch])
            tick(len(batch))
    if tasks:
        svc.add_tasks(tasks)
    handoffs: list[tuple[str, Any]] = [
        (f"{HISTORY}:{n}", line.handoff_doc()) for n, line in enumerate(eval_set.history, start=1)
    ]
    with stage("Ingesting handoffs", len(handoffs)) as tick:
        if handoffs:
            svc.ingest_handoffs(handoffs, progress=tick)
    if eval_set.files:
        svc.add_files(list(eval_set.files))
    embed_history(svc, len(tasks), stage=stage, warn=warn)


def embed_history(svc: ContextService, count: int, *, stage: Stage = no_progress,
                  warn: Callable[[str], None] | None = None) -> None:
    """The finished tasks' vectors (neighbours by embedding), as an up-to-date
    `ctxgraph embed-tasks` leaves them (``count``: how many tasks, for the
    progress bar); a warning when the model is missing."""
    if not (svc.task_vectors and count):
        return
    from ctxgraph.memory.embed import EmbeddingUnavailableError

    try:
        with stage("Embedding tasks", count) as tick:
            svc.embed_tasks(progress=tick)
    except EmbeddingUnavailableError as exc:
        message = (f"tasks not embedded: {exc}; the ctxgraph rows rank by full text alone "
                   "(CTXGRAPH_TASK_VECTORS=0 does so on purpose, without this warning)")
        if warn is None:
            log.warning("%s", message)
        else:
            warn(message)


def _timed(fn: Callable[[], str]) -> tuple[str, float]:
    start = time.perf_counter()
    text = fn()
    return text, (time.perf_counter() - start) * 1000.0


def run_queries(
    svc: ContextService,
    eval_set: EvalSet,
    *,
    budget: int | None = None,
    complexity: Complexity | str | None = None,
    stage: Stage = no_progress,
    keep_contexts: bool = False,
    memory: bool = False,
    tuned: RankingWeights | None = None,
    systems: Sequence[str] | None = None,
    known: Sequence[str] | None = None,
    now: datetime | None = None,
    on_context: Callable[[QueryLine, ComputedContext], None] | None = None,
) -> tuple[dict[str, list[QueryOutcome]], int, dict[str, str]]:
    """Every system's outcome on every scored query, the skipped count and
    (with ``keep_contexts``) ctxgraph's rendered contexts. ``memory`` (the
    source indexed): the ctxgraph row has its associative memory on, and the
    :data:`NO_MEMORY_SYSTEM` row has it off; ``tuned``: also the
    :data:`TUNED_SYSTEM` row, ranked with these weights (memory off).
    ``systems``: only these rows (default :func:`systems_of`); ``known``: the
    paths a context can name (default the set's :attr:`~EvalSet.known_paths`);
    ``now``: the queries' "now" (default the end of the set's history);
    ``on_context``: called with each query and the ctxgraph row's context."""
    systems = systems_of(memory, tuned is not None) if systems is None else tuple(systems)
    tuned_config = svc.config.model_copy(update={"ranking": tuned}) if tuned is not None else svc.config
    known = eval_set.known_paths if known is None else known
    now = eval_set.snapshot if now is None else now
    map_paths = eval_set.map_paths
    bm25 = Bm25Files(eval_set.files, eval_set.history)
    files = list(eval_set.files)
    outcomes: dict[str, list[QueryOutcome]] = {name: [] for name in systems}
    contexts: dict[str, str] = {}
    skipped = 0
    with stage("Computing contexts", len(eval_set.queries)) as tick:
        for query in eval_set.queries:
            tick(1)
            if is_skipped(query.gold_files, map_paths):
                skipped += 1
                continue
            makers = _makers(svc, eval_set, query, complexity=complexity, budget=budget, now=now, memory=memory,
                             tuned_config=tuned_config, bm25=bm25, files=files, on_context=on_context)
            for name in systems:
                make = makers[name]
                text, ms = _timed(make)
                if name not in ("ctxgraph", NO_MEMORY_SYSTEM, TUNED_SYSTEM):  # ctxgraph fits the budget itself
                    text = truncate_to_budget(text, budget)
                if name == "ctxgraph" and keep_contexts:
                    contexts[query.id] = text
                outcomes[name].append(QueryOutcome(
                    query_id=query.id,
                    named=tuple(extract_paths(text, known)),
                    gold=tuple(query.gold_files),
                    tokens=estimate_tokens(text),
                    ms=ms,
                ))
    return outcomes, skipped, contexts


def _makers(svc: ContextService, eval_set: EvalSet, query: QueryLine, *, complexity: Complexity | str | None,
            budget: int | None, now: datetime | None, memory: bool, tuned_config: ContextConfig, bm25: Bm25Files,
            files: list[FileEntry], on_context: Callable[[QueryLine, ComputedContext], None] | None,
            ) -> dict[str, Callable[[], str]]:
    """Each system's text for ``query``, made when called."""
    task = query.task()

    def ctxgraph_text() -> str:
        ctx = svc.compute(task, complexity=complexity, budget=budget, now=now, memory=memory,
                          memory_project=eval_set.name if memory else None)
        if on_context is not None:
            on_context(query, ctx)
        return ctx.markdown

    def no_memory_text() -> str:
        return svc.compute(task, complexity=complexity, budget=budget, now=now, memory=False).markdown

    def tuned_text() -> str:
        return svc.compute(task, complexity=complexity, budget=budget, now=now, memory=False,
                           config=tuned_config).markdown

    def bm25_text() -> str:
        return render_paths(bm25.rank(query.text))

    def seed_text() -> str:
        return render_paths(map_score_paths(files, svc.signals_for(task)))

    def all_text() -> str:
        return render_all(files, eval_set.history)

    # ctxgraph goes first: it pays for the query's signal extraction;
    # the seed row (the context map's scores) then reads the same signals
    # from the extractor's cache.
    return {"ctxgraph": ctxgraph_text, NO_MEMORY_SYSTEM: no_memory_text, TUNED_SYSTEM: tuned_text,
            "bm25": bm25_text, "seed": seed_text, "all": all_text}


def systems_of(memory: bool, tuned: bool = False) -> tuple[str, ...]:
    return ("ctxgraph", *((NO_MEMORY_SYSTEM,) if memory else ()), *((TUNED_SYSTEM,) if tuned else ()), *SYSTEMS[1:])


def index_source(svc: ContextService, eval_set: EvalSet, root: Path, *, embeddings: bool = True,
                 embedder: Any = None, stage: Stage = no_progress) -> IndexReport:
    """Index the project's source at the snapshot (``root``) as project ``eval_set.name``."""
    from ctxgraph.memory.index import IndexProgress, index_project
    from ctxgraph.memory.scan import SourceFile, walk

    done = 0
    with stage("Indexing source", sum(isinstance(f, SourceFile) for f in walk(root))) as tick:
        def progress(p: IndexProgress) -> None:
            nonlocal done
            tick(p.files_done - done)
            done = p.files_done

        report = index_project(svc.store, root, project=eval_set.name, embeddings=embeddings,
                               embedder=embedder, progress=progress)
    return report


def run_eval(
    svc: ContextService,
    eval_set: EvalSet,
    *,
    budget: int | None = None,
    complexity: Complexity | str | None = None,
    stage: Stage = no_progress,
    keep_contexts: bool = False,
    source: Path | None = None,
    embeddings: bool = True,
    embedder: Any = None,
    warn: Callable[[str], None] | None = None,
    tune: bool = True,
    freshness: bool = True,
) -> EvalReport:
    """Load ``eval_set`` into ``svc``'s (empty) store and score every system;
    with ``source`` (the project's files at the snapshot), index them first
    (the ctxgraph row then has its associative memory on) and add the
    :data:`NO_MEMORY_SYSTEM` row; with ``tune``, fit the ranking's
    weights on the loaded history (:meth:`ContextService.tune`) and add the
    :data:`TUNED_SYSTEM` row. ``warn`` receives what degrades the run (the
    embedding model missing), else it is logged. No delivery is recorded.
    With ``source`` and ``freshness``, the source is the project's root while
    the queries run, so that their contexts leave out the files not in it
    (docs/freshness.md): the work tree at the snapshot."""
    started = time.perf_counter()
    svc.record_outcomes = False
    load_history(svc, eval_set, stage=stage, warn=warn)
    tuning = None
    if tune:
        with stage("Tuning on the history", 1) as tick:
            def progress(done: int, total: int) -> None:
                if done == total:
                    tick(1)

            tuning = svc.tune(progress=progress)
    indexed = index_source(svc, eval_set, source, embeddings=embeddings, embedder=embedder, stage=stage) \
        if source is not None else None
    if source is not None and freshness:
        svc.use_root(source)
    loaded = time.perf_counter()
    outcomes, skipped, contexts = run_queries(
        svc, eval_set, budget=budget, complexity=complexity, stage=stage, keep_contexts=keep_contexts,
        memory=source is not None, tuned=tuning.weights if tuning is not None else None,
    )
    done = time.perf_counter()
    return EvalReport(
        set=eval_set.name,
        queries=len(eval_set.queries),
        skipped=skipped,
        systems={name: summarize(outcomes[name], skipped, frozenset(eval_set.map_paths))
                 for name in systems_of(source is not None, tuning is not None)},
        tuning=tuning.fits if tuning is not None else (),
        index=indexed.as_dict() if indexed is not None else None,
        outcomes={name: tuple(found) for name, found in outcomes.items()},
        contexts=contexts,
        load_seconds=loaded - started,
        query_seconds=done - loaded,
    )


def format_table(report: EvalReport) -> str:
    """The human summary: the set, its counts and one row per system."""
    head = (f"set: {report.set}   queries: {report.queries}   skipped: {report.skipped}   "
            f"(loaded in {report.load_seconds:.1f}s, answered in {report.query_seconds:.1f}s)")
    columns = ("system", "recall@5", "recall@10", "recall", "stale@5", "tokens", "max_tokens", "p50_ms", "p95_ms")
    rows = [columns]
    for name, m in report.systems.items():
        rows.append((name, f"{m.recall_at_5:.3f}", f"{m.recall_at_10:.3f}", f"{m.recall:.3f}",
                     f"{m.stale_at_5:.3f}", f"{m.tokens:.0f}", str(m.max_tokens), f"{m.p50_ms:.1f}",
                     f"{m.p95_ms:.1f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(columns))]
    lines = [head, ""]
    for row in rows:
        cells = [row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


__all__ = [
    "NO_MEMORY_SYSTEM",
    "SYSTEMS",
    "TUNED_SYSTEM",
    "EvalReport",
    "Stage",
    "format_table",
    "load_history",
    "no_progress",
    "run_eval",
    "run_queries",
    "systems_of",
]
