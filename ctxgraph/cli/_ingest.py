"""``ctxgraph ingest ...``: handoffs, tasks and context maps."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ctxgraph.cli._common import CliError, Group, echo_json, embed_finished, format_option, read_input
from ctxgraph.cli._stores import open_service, store_options, store_params

#: ctxgraph.service.HANDOFF_BATCH, spelled out so that the help needs no service
#: import (tests/unit/test_cli_imports.py checks they agree).
HANDOFF_BATCH = 500


@click.group(cls=Group)
def ingest() -> None:
    """Load handoffs, tasks and context maps."""


@ingest.command("handoff")
@click.argument("paths", nargs=-1, required=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=HANDOFF_BATCH, show_default=True,
              help="Handoffs written per transaction.")
@click.option("--embed/--no-embed", default=True, show_default=True,
              help="Then embed the finished tasks' texts that have no vector yet (as `embed-tasks`).")
@store_options
@format_option
def ingest_handoff(paths: tuple[str, ...], batch_size: int, embed: bool, fmt: str, **kwargs: Any) -> None:
    """Ingest structured handoffs (YAML or JSON): files, folders, or - for stdin.

    Every document is validated before anything is written: one bad document
    refuses the whole run. Then they are written in batches, one transaction
    each: an interrupted run keeps the batches that committed, and running it
    again finishes it. Ingesting the same handoff again changes nothing.
    Finally the tasks they finished are embedded for the history's neighbours
    by meaning, those without a vector of their current text only (--no-embed
    skips it; without the model installed it is skipped with a warning, and
    `embed-tasks` catches up later).
    """
    from ctxgraph.service import ContextService

    inputs: list[tuple[str, bytes]] = []
    for raw in paths:
        if raw == "-":
            inputs.append(read_input("-"))
            continue
        p = Path(raw)
        if not p.exists():
            raise CliError(f"{p}: no such file or folder", 2)
        files = ContextService.document_files([p])
        if p.is_dir() and not files:
            raise CliError(f"{p}: no .yaml, .yml or .json files in this folder", 2)
        inputs.extend(read_input(str(f)) for f in files)
    bar = click.progressbar(length=len(inputs), label="Ingesting handoffs", file=sys.stderr,
                            hidden=len(inputs) < 10)
    embedded = 0
    with open_service(store_params(kwargs)) as svc:
        with bar:
            results = svc.ingest_handoffs(inputs, progress=bar.update, batch_size=batch_size)
        if embed:
            embedded = embed_finished(svc, "--no-embed", tasks=sorted({r.task_id for r in results})) or 0
    if fmt == "json":
        echo_json([r.model_dump(mode="json") for r in results])
        return
    written = sum(r.written for r in results)
    for r in results:
        state = "ingested" if r.written else "unchanged"
        items = f"{r.knowledge} knowledge item{'' if r.knowledge == 1 else 's'}"
        file_count = f"{r.files} file{'' if r.files == 1 else 's'}"
        click.echo(f"{state}: {r.source} ({r.task_id}, {items}, {file_count})")
    click.echo(f"{written} written, {len(results) - written} unchanged"
               + (f"; {embedded} task{'' if embedded == 1 else 's'} embedded" if embedded else ""))


@ingest.command("tasks")
@click.argument("path")
@store_options
def ingest_tasks(path: str, **kwargs: Any) -> None:
    """Add the tasks of a file (YAML `tasks:` list, or JSON lines), all or none."""
    from ctxgraph.service import ContextService

    source, data = read_input(path)
    tasks = ContextService.read_tasks(data, source)
    with open_service(store_params(kwargs)) as svc:
        svc.add_tasks(tasks)
    click.echo(f"{len(tasks)} tasks added or updated")


@ingest.command("context-map")
@click.argument("path")
@store_options
def ingest_context_map(path: str, **kwargs: Any) -> None:
    """Load context-map entries (YAML `files:` list, or JSON lines with
    path or location, component, notes)."""
    from ctxgraph.service import ContextService

    source, data = read_input(path)
    entries = ContextService.read_context_map(data, source)
    with open_service(store_params(kwargs)) as svc:
        svc.add_files(entries)
    click.echo(f"{len(entries)} context-map entries loaded")


__all__ = ["ingest"]
