"""``ctxgraph export`` and ``ctxgraph import``: the whole graph as JSON lines.

The work is :meth:`ContextService.export_to` and :meth:`ContextService.import_from`
(the format and its checks: :mod:`ctxgraph.graph.backup`); this module only
parses options and prints.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ctxgraph.cli._common import CliError, mark_stdin_used
from ctxgraph.cli._stores import open_service, store_options, store_params


@click.command("export")
@click.argument("path", metavar="FILE")
@store_options
def export_command(path: str, **kwargs: Any) -> None:
    """Write the whole graph to FILE as JSON lines (- for standard output).

    A header line, then every node sorted by (label, id), then every
    relationship sorted by (type, source, target). The same graph gives the
    same bytes from the embedded store and from Neo4j, so an export moves a
    project from one to the other (`ctxgraph import`) and serves as a backup.
    FILE is written whole or not at all.
    """
    to_stdout = path == "-"
    if not to_stdout:
        target = Path(path)
        if target.is_dir():
            raise CliError(f"{target}: is a folder; expected a file", 2)
        if not target.parent.is_dir():
            raise CliError(f"{target.parent}: no such folder", 2)
    with open_service(store_params(kwargs), read_only=True) as svc:
        try:
            summary = svc.export_to(path)
        except OSError as exc:
            raise CliError(f"{path}: cannot write: {exc.strerror or exc}") from None
        location = svc.location
    click.echo(
        f"exported {summary.nodes} nodes and {summary.relationships} relationships "
        f"from {location} to {'<stdout>' if to_stdout else path}",
        err=to_stdout,
    )


@click.command("import")
@click.argument("path", metavar="FILE")
@click.option("--check", is_flag=True, help="Only validate FILE; write nothing.")
@store_options
def import_command(path: str, check: bool, **kwargs: Any) -> None:
    """Load a `ctxgraph export` file (- for standard input) into the store.

    The whole file is validated before anything is written: a file that is
    not an export, of an unknown version, or with one malformed line is
    refused whole, naming the line. Nodes and relationships are merged:
    importing the same file twice changes nothing, and what the store holds
    beyond the file stays.
    """
    from ctxgraph.service import IMPORT_BATCH, ExportReader

    if path == "-":
        mark_stdin_used()
        reader = ExportReader.from_bytes(sys.stdin.buffer.read())
    else:
        p = Path(path)
        if p.is_dir():
            raise CliError(f"{p}: is a folder; expected a file", 2)
        if not p.is_file():
            raise CliError(f"{p}: no such file", 2)
        reader = ExportReader.from_path(p)
    try:
        summary = reader.validate()
    except OSError as exc:
        raise CliError(f"{path}: cannot read: {exc.strerror or exc}", 2) from None
    if check:
        click.echo(f"{reader.source}: valid export of {summary.nodes} nodes and "
                   f"{summary.relationships} relationships")
        return
    bar = click.progressbar(length=summary.rows, label="Importing", file=sys.stderr,
                            hidden=summary.rows < IMPORT_BATCH)
    with open_service(store_params(kwargs)) as svc, bar:
        try:
            svc.import_from(reader, progress=bar.update, validated=summary)
        except OSError as exc:
            raise CliError(f"{path}: cannot read: {exc.strerror or exc}", 2) from None
        location = svc.location
    click.echo(f"imported {summary.nodes} nodes and {summary.relationships} relationships "
               f"from {reader.source} into {location}")


__all__ = ["export_command", "import_command"]
