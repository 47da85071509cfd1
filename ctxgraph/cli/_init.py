"""``ctxgraph init``: the store and its schema, then the first index of the
project's root (the associative memory on by default, issue 31)."""

from __future__ import annotations

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
@click.option("-q", "--quiet", is_flag=True, help="No progress line on stderr.")
def init_command(reset: bool, root: Path | None, index: bool, embeddings: bool, quiet: bool,
                 **kwargs: Any) -> None:
    """Create the store (or check the server), apply the schema, and index
    the project's code.

    The project's root is --root, else the folder of the settings file
    (ctxgraph.toml, or pyproject.toml with [tool.ctxgraph]), else the git
    work tree around the store (a Neo4j store: around the current folder).
    When one is known, its files are indexed for the associative memory
    (the progress line of `ctxgraph index`), as the project named after the
    root's folder: contexts then show the code that matches their task with
    no `ctxgraph index` typed. --no-index skips it.
    """
    from ctxgraph.cli._index import ProgressLine, _print_report
    from ctxgraph.memory.embed import EmbeddingUnavailableError

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
    if not index:
        return
    if found is None:
        note("no project root known (no settings file, no git work tree around the store): "
             "the code is not indexed; pass --root PATH, or run `ctxgraph index PATH`")
        return
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
