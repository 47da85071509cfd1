"""``ctxgraph init``: the store and its schema, then the first index of the
project's root (the associative memory on by default, issue 31)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ctxgraph.cli._common import CliError, F, note, warn
from ctxgraph.cli._stores import note_new_gitignore, open_service, store_options, store_params
from ctxgraph.errors import CtxgraphError


def root_option(fn: F) -> F:
    """--root PATH: the project's root, instead of the one found."""
    return click.option(
        "--root", type=click.Path(exists=True, file_okay=False, path_type=Path), metavar="PATH",
        help="The project's root: the folder whose code the associative memory indexes and searches "
             "[default: the settings file's folder, else the git work tree around the store (a Neo4j "
             "store: around the current folder)].")(fn)


@click.command("init")
@store_options
@click.option("--reset", is_flag=True, help="Delete everything in the store first.")
@root_option
@click.option("--index/--no-index", "index", default=True, show_default=True,
              help="Index the project's root for the associative memory after the schema (as "
                   "`ctxgraph index ROOT`; later runs of it are incremental).")
@click.option("--embeddings/--no-embeddings", default=True, show_default=True,
              help="Embed the chunks (all-MiniLM-L6-v2, local), or make the lightweight index. Without "
                   "the model installed, the lightweight index is made and a warning says so.")
@click.option("--history/--no-history", default=True, show_default=True,
              help="Import the git history of the root's checked-out branch as finished tasks (as `ctxgraph "
                   "history import`); `sync` and the post-commit hook then import new commits as they land.")
@click.option("--knowledge/--no-knowledge", default=True, show_default=True,
              help="Import the root's ADRs as decisions and its code notes (NOTE, WARNING, HACK, ...) as "
                   "gotchas (as `ctxgraph knowledge import`; the [knowledge] settings choose which).")
@click.option("-q", "--quiet", is_flag=True, help="No progress line on stderr.")
def init_command(reset: bool, root: Path | None, index: bool, embeddings: bool, history: bool, knowledge: bool,
                 quiet: bool, **kwargs: Any) -> None:
    """Create the store (or check the server), apply the schema, and index
    the project's code.

    The project's root is --root, else the folder of the settings file
    (ctxgraph.toml, or pyproject.toml with [tool.ctxgraph]), else the git
    work tree around the store (a Neo4j store: around the current folder).
    When one is known, its files are indexed for the associative memory
    (the progress line of `ctxgraph index`), as the project named after the
    root's folder: contexts then show the code that matches their task with
    no `ctxgraph index` typed. --no-index skips it.

    Then the project's past becomes the graph's: in a git work tree, each
    commit of the checked-out branch a finished task (docs/history.md), and
    its ADRs decisions, its code's notes gotchas (docs/knowledge-import.md),
    so that the first context already knows the prior work.
    """
    params = store_params(kwargs)
    note_new_gitignore(params)
    # The store is made, initialized and closed first; the index runs on the store opened
    # again, so an index that fails (or is stopped) can never remove it as a failed
    # command's new store: it stays initialized, and the error is said.
    with open_service(params) as svc:
        svc.initialize(reset=reset)
        location = svc.location
        found = svc.root if root is None else svc.use_root(root)
    click.echo(f"ready: {location}")
    if found is None:
        if index:
            note("no project root known (no settings file, no git work tree around the store): "
                 "the code is not indexed; pass --root PATH, or run `ctxgraph index PATH`")
        return
    if index:
        _index(params, found, embeddings, quiet)
    if history or knowledge:
        _past(params, found.path, history, knowledge, embeddings, quiet)


def _past(params: dict[str, Any], root: Path, history: bool, knowledge: bool, embeddings: bool,
          quiet: bool) -> None:
    """The root's history, ADRs and code notes into the store, then the
    imported tasks embedded (for at most ``INIT_EMBED_SECONDS``), a line each."""
    from ctxgraph.service.past import INIT_EMBED_SECONDS, history_line, knowledge_line, tasks_line

    shown = not quiet and sys.stderr.isatty()

    def progress(report: Any) -> None:  # as `ctxgraph history import` shows it, on a terminal
        if shown:
            click.echo(f"\rhistory: {report.read:,} commits read, {report.imported:,} imported", err=True, nl=False)

    def embedding(done: int, total: int) -> None:
        if shown:
            click.echo(f"\rtasks: {done:,}/{total:,} embedded", err=True, nl=done >= total)

    with open_service(params) as svc:
        done = svc.import_past(root, history=history, knowledge=knowledge, progress=progress,
                               embed_seconds=INIT_EMBED_SECONDS if embeddings else None, embed_progress=embedding)
    if done.history is not None and shown:
        click.echo("", err=True)  # the end of the progress line
    for line in done.notes:
        note(line)
    if done.history is not None:
        click.echo(history_line(done.history))
    if done.knowledge is not None:
        click.echo(knowledge_line(done.knowledge))
    said = tasks_line(done.tasks) if done.tasks is not None else None
    if said:
        click.echo(said)


def _index(params: dict[str, Any], found: Any, embeddings: bool, quiet: bool) -> None:
    """The first index of the root, its report on stdout (the store stays when it fails)."""
    from ctxgraph.cli._index import ProgressLine, _print_report
    from ctxgraph.memory.embed import EmbeddingUnavailableError

    failed: CliError | None = None
    with open_service(params) as svc:
        try:
            try:
                with ProgressLine(quiet=quiet) as line:
                    report = svc.index_project(found.path, project=found.project, embeddings=embeddings,
                                               progress=line.update)
            except EmbeddingUnavailableError as exc:
                warn(f"{exc}; making the lightweight index (file names and first lines, full text) instead: "
                     f"run `ctxgraph index {found.path}` once the model is installed")
                with ProgressLine(quiet=quiet) as line:
                    report = svc.index_project(found.path, project=found.project, embeddings=False,
                                               progress=line.update)
        except CtxgraphError as exc:
            failed = CliError(f"indexing {found.path}: {exc}", exc.exit_code)
    if failed is not None:
        raise failed
    _print_report(report, "markdown")


__all__ = ["init_command", "root_option"]
