"""``ctxgraph eval DIR``: the retrieval evaluation (docs/evaluation.md).

Register with ``main.add_command(eval_command)`` (after ``CliError`` is
defined in :mod:`ctxgraph.cli`).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ctxgraph.cli._common import COMPLEXITIES, CliError, format_option, warn
from ctxgraph.cli._stores import neo4j_database_option, neo4j_user_option
from ctxgraph.errors import CtxgraphError


@contextmanager
def _progress(label: str, length: int) -> Iterator[Any]:
    # Only on a terminal: piped or captured, stderr keeps to warnings and errors.
    with click.progressbar(length=length, label=label, file=sys.stderr, hidden=not sys.stderr.isatty()) as bar:
        yield bar.update


@contextmanager
def _service(neo4j_uri: str | None, neo4j_user: str | None, neo4j_database: str | None) -> Iterator[Any]:
    """A fresh temporary embedded store, or the Neo4j server emptied first."""
    from ctxgraph.service import ContextService, chosen_location

    with tempfile.TemporaryDirectory(prefix="ctxgraph-eval-") as tmp:
        place = chosen_location(Path(tmp) / "graph.db", neo4j_uri=neo4j_uri, database=neo4j_database)
        svc = ContextService.open(place, neo4j_user=neo4j_user)
        try:
            if place.path is None:  # a server: what it held is not the set's
                svc.initialize(reset=True)
                click.echo(f"emptied the Neo4j database at {svc.location}", err=True)
            yield svc
        finally:
            svc.close()


def _eval(directory: Path, fmt: str, budget: int | None, complexity: str | None, neo4j_uri: str | None,
          neo4j_user: str | None, neo4j_database: str | None, limit_queries: int | None,
          index_source: bool | None, embeddings: bool, tune: bool | None, repo: Path | None,
          index_scope: str | None, index_paths: bool, source_dir: Path | None) -> None:
    """Measure ctxgraph's retrieval on an evaluation set against baselines.

    DIR holds history.jsonl (completed tasks with their handoffs),
    context_map.jsonl and queries.jsonl (later tasks with the files their
    real commits changed; docs/evaluation.md describes the sets). The history and the
    context map are loaded into a fresh temporary embedded store; each query's
    context is computed as an orchestrator would (the query is never stored)
    and scored by the files it names, next to three baselines: bm25, seed
    (the context-map scoring alone) and all (everything, unranked).

    Figures per system: recall_at_5, recall_at_10, recall (share of the gold
    files among the first 5 / 10 / all distinct files named, mean over
    queries), tokens (mean) and max_tokens, p50_ms and p95_ms (nearest-rank
    percentiles of the time to compute one context), skipped (queries none
    of whose gold files is in the context map; not scored).

    When meta.json names the project's release ("pypi"), its source at the
    snapshot (fetched with pip into .ctxgraph/cache or $CTXGRAPH_CACHE_DIR)
    is indexed into the same store, as a user's project is by `ctxgraph
    init`: the "ctxgraph" row is then the default, its associative memory on,
    and a "ctxgraph-no-memory" row gives it off. --no-index-source skips the
    source (no memory, no download); --index-source requires the release.
    Vectors are cached by text in that folder, so only the first run pays for
    embedding.

    The "ctxgraph+tuned" row ranks with the weights `ctxgraph tune` fits on
    the loaded history alone (never on the queries); its memory is off, as
    the "ctxgraph" row's. The JSON report's "tuning" says what the fit found.

    --repo GIT_DIR measures the set the way a user gets ctxgraph: GIT_DIR (a
    clone of the project meta.json names) is checked out at the set's
    snapshot (cached beside the release sources), and the history, the ADRs
    and the code notes are imported from it instead of read from
    history.jsonl; the source indexed is the checkout's (its package folder,
    or with --index-scope tree all of it). Its report has the
    "ctxgraph" row (everything, memory on), "ctxgraph-day-zero" (the context
    map and the source alone, memory on, in a second fresh store), the
    baselines, what the imports did ("imports") and how often a shown
    imported item comes from a gold file, beside as many picked by BM25
    ("knowledge").
    """
    _check_set(directory)
    if source_dir is not None:
        if repo is not None or index_source is False:
            raise CliError("--source names the source to index: not with --repo nor --no-index-source", 2)
        if not source_dir.is_dir():
            raise CliError(f"{source_dir}: not a folder", 2)
        index_source = True
    if repo is not None:
        if index_source is False:
            raise CliError("--repo indexes the source from its checkout: --no-index-source does not apply", 2)
        _eval_repo(directory, repo, fmt, budget, complexity, (neo4j_uri, neo4j_user, neo4j_database),
                   limit_queries, embeddings, bool(tune), index_scope or "package", index_paths)
        return
    if index_scope is not None:
        raise CliError("--index-scope applies to a --repo run only", 2)
    tune = True if tune is None else tune
    _eval_set(directory, fmt, budget, complexity, (neo4j_uri, neo4j_user, neo4j_database), limit_queries,
              index_source, embeddings, tune, index_paths, source_dir)


def _check_set(directory: Path) -> None:
    """Refuse ``directory`` unless it is a folder holding an evaluation set's files."""
    from ctxgraph.evaluation.dataset import missing_files

    if not directory.exists():
        raise CliError(f"{directory}: no such folder", 2)
    if not directory.is_dir():
        raise CliError(f"{directory}: not a folder; expected an evaluation set folder", 2)
    missing = missing_files(directory)
    if missing:
        raise CliError(f"{directory}: not an evaluation set: missing {', '.join(missing)}", 2)


def _eval_set(directory: Path, fmt: str, budget: int | None, complexity: str | None,
              neo4j: tuple[str | None, str | None, str | None], limit_queries: int | None,
              index_source: bool | None, embeddings: bool, tune: bool, index_paths: bool,
              source_dir: Path | None) -> None:
    """A run on the set's history.jsonl (not ``--repo``): :func:`ctxgraph.evaluation.runner.run_eval`."""
    from ctxgraph.evaluation.dataset import load_set
    from ctxgraph.evaluation.runner import run_eval

    try:
        eval_set = load_set(directory, limit_queries=limit_queries)
        if index_source is None:  # the default: the source whenever the set names its release
            index_source = bool(eval_set.meta.get("pypi"))
        if not embeddings and not index_source:
            raise CliError("--no-embeddings applies to the source's index only (meta.json names no release, "
                           "or --no-index-source)", 2)
        source = embedder = None
        if index_source:
            from ctxgraph.evaluation.source import cache_dir, source_tree
            from ctxgraph.memory.embed import CachedEmbedder

            source = source_dir or source_tree(eval_set.meta, eval_set.name)
            if embeddings:
                embedder = CachedEmbedder(cache_dir() / "embeddings" / "all-MiniLM-L6-v2.npz")
        with _service(*neo4j) as svc:
            try:
                report = run_eval(svc, eval_set, budget=budget, complexity=complexity, stage=_progress,
                                  source=source, embeddings=embeddings, embedder=embedder, warn=warn,
                                  tune=tune)
            finally:
                if embedder is not None:
                    embedder.save()
    except CtxgraphError as exc:
        raise CliError(str(exc), exc.exit_code) from None
    _print(report, fmt, index_paths)


def _print(report: Any, fmt: str, index_paths: bool = False) -> None:
    from ctxgraph.evaluation.runner import format_table

    if fmt == "json":
        import json

        click.echo(json.dumps(report.as_dict(index_paths=index_paths), indent=2, ensure_ascii=False))
        return
    click.echo(format_table(report), nl=False)
    if report.imports is not None:  # a --repo run
        from ctxgraph.evaluation.repo import format_imports

        click.echo("\n" + "\n".join(format_imports(report)))


def _eval_repo(directory: Path, repo: Path, fmt: str, budget: int | None, complexity: str | None,
               neo4j: tuple[str | None, str | None, str | None], limit_queries: int | None, embeddings: bool,
               tune: bool, scope: str, index_paths: bool) -> None:
    """``--repo``: the run of :mod:`ctxgraph.evaluation.repo`."""
    from ctxgraph.evaluation.dataset import load_set
    from ctxgraph.evaluation.repo import prepare, run_repo_eval
    from ctxgraph.evaluation.source import cache_dir

    if not repo.exists():
        raise CliError(f"{repo}: no such folder", 2)
    embedder = None
    try:
        eval_set = load_set(directory, limit_queries=limit_queries)
        with _progress("Checking out the snapshot", 1) as tick:
            source = prepare(repo, eval_set, scope=scope)
            tick(1)
        if embeddings:
            from ctxgraph.memory.embed import CachedEmbedder

            embedder = CachedEmbedder(cache_dir() / "embeddings" / "all-MiniLM-L6-v2.npz")
        try:
            report = run_repo_eval(lambda: _service(*neo4j), eval_set, source, budget=budget,
                                   complexity=complexity, stage=_progress, embeddings=embeddings,
                                   embedder=embedder, warn=warn, tune=tune)
        finally:
            if embedder is not None:
                embedder.save()
    except CtxgraphError as exc:
        raise CliError(str(exc), exc.exit_code) from None
    _print(report, fmt, index_paths)


_options = [
    click.argument("directory", metavar="DIR", type=click.Path(path_type=Path)),
    format_option,
    click.option("--budget", type=click.IntRange(min=1), metavar="N",
                 help="Token budget: ctxgraph computes every context within N tokens (as `context "
                      "--budget`); the baselines are cut to their leading whole lines within N tokens "
                      "before the files they name are read [default: ctxgraph's tier budget, baselines "
                      "uncut]."),
    click.option("--complexity", type=click.Choice(COMPLEXITIES),
                 help="Compute every query on this tier instead of its own."),
    click.option("--neo4j", "neo4j_uri", metavar="URI",
                 help="Run on this Neo4j server instead of a temporary embedded store. The database is "
                      "EMPTIED first: never point this at a graph you keep. Not read from NEO4J_URI, on "
                      "purpose. Password from NEO4J_PASSWORD or NEO4J_PASSWORD_FILE."),
    neo4j_user_option,
    neo4j_database_option,
    click.option("--limit-queries", type=click.IntRange(min=1), metavar="N",
                 help="Only the first N queries of the set."),
    click.option("--index-source/--no-index-source", default=None,
                 help="Index the project's source at the snapshot (the PyPI release in meta.json, fetched "
                      "with pip): ctxgraph's row then has its associative memory on, as a user's indexed "
                      "project does, and a ctxgraph-no-memory row is added [default: when meta.json names "
                      "the release]."),
    click.option("--tune/--no-tune", default=None,
                 help="Fit the ranking's weights on the history (as `ctxgraph tune`) and add the "
                      "ctxgraph+tuned row [default: --tune, with --repo --no-tune]."),
    click.option("--embeddings/--no-embeddings", default=True, show_default=True,
                 help="The source's index: with embeddings, or the lightweight one (file names and first "
                      "lines, no ML)."),
    click.option("--repo", type=click.Path(path_type=Path), metavar="GIT_DIR",
                 help="Import the history, ADRs and code notes from this clone of the project (meta.json's "
                      "\"project\"), checked out at the set's snapshot, instead of reading history.jsonl; "
                      "index the source from the same checkout; add the ctxgraph-day-zero row."),
    click.option("--index-scope", type=click.Choice(["package", "tree"]), default=None,
                 help="With --repo: index only the package folder of the checkout (meta.json's src_prefix, "
                      "the files the gold answers are among, as the release a plain run indexes) or its whole "
                      "tree, as `ctxgraph init` indexes a project (tests and docs then take places among the "
                      "files a context names: docs/evaluation.md) [default: package]."),
    click.option("--source", "source_dir", type=click.Path(path_type=Path, file_okay=False), metavar="DIR",
                 help="Index this folder as the project's source instead of fetching its release: the "
                      "project's files at their repository paths (a checkout at the snapshot, say); "
                      "indexed whole."),
    click.option("--index-paths", is_flag=True,
                 help="With --format json: list the source index's paths (added, changed, deleted, skipped) "
                      "beside their counts."),
]
for _option in reversed(_options):
    _eval = _option(_eval)

eval_command = click.command("eval")(_eval)

__all__ = ["eval_command"]
