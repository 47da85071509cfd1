"""``ctxgraph knowledge import``: the project's ADRs and code notes as decisions
and gotchas (docs/knowledge-import.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ctxgraph.cli._common import CliError, echo_json, format_option
from ctxgraph.cli._init import root_option
from ctxgraph.cli._knowledge import knowledge
from ctxgraph.cli._stores import open_service, store_options, store_params

#: Files looked at from which a run shows its progress on stderr.
PROGRESS_FROM = 5_000


@knowledge.command("import")
@store_options
@root_option
@click.option("--adrs/--no-adrs", default=None,
              help="Import the ADRs as decisions [default: the settings' knowledge.adrs, else yes].")
@click.option("--notes/--no-notes", default=None,
              help="Import the code's notes as gotchas [default: the settings' knowledge.notes, else yes].")
@click.option("--adr-dir", "adr_dirs", multiple=True, metavar="DIR",
              help="An ADR folder besides the usual ones, relative to the root (repeatable) [default: the "
                   "settings' knowledge.adr_dirs].")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary (errors only; --format json "
                                                  "still prints its summary).")
@format_option
def knowledge_import(root: Path | None, adrs: bool | None, notes: bool | None, adr_dirs: tuple[str, ...],
                     quiet: bool, fmt: str, **kwargs: Any) -> None:
    """Import the project's ADRs and the notes in its code.

    ADRs (Nygard's format or MADR, in docs/adr, docs/decisions and the other
    usual folders) become decisions with their status; a superseded ADR is
    shown as replaced by the one that supersedes it. Comment markers (NOTE,
    WARNING, HACK, XXX, FIXME, BUG, SAFETY...), docstring warning sections and
    docs admonitions become gotchas anchored to their lines. Only files
    changed since the last import are read; what a file no longer says is
    removed.
    """
    from ctxgraph.service.project_notes import NoImportRootError

    params = store_params(kwargs)
    with open_service(params) as svc:
        def progress(done: int) -> None:
            if quiet or done < PROGRESS_FROM or not sys.stderr.isatty():
                return
            click.echo(f"\rknowledge import: {done:,} files looked at", err=True, nl=False)

        try:
            report = svc.import_project_knowledge(root, adrs=adrs, notes=notes, adr_dirs=adr_dirs or None,
                                                  progress=progress)
        except NoImportRootError as exc:
            raise CliError(str(exc)) from None
    if fmt == "json":
        echo_json(report.as_dict())
    elif not quiet:
        dropped = sum(report.dropped.values())
        folders = ", ".join(report.adr_folders) or "no ADR folder"
        click.echo(f"decisions: {report.decisions:,} from ADRs in {folders} ({report.superseded:,} superseded; "
                   f"{report.not_in_force:,} ADRs not in force); gotchas: {report.gotchas:,} from code notes "
                   f"({dropped:,} markers dropped as noise); files: {report.read:,} of {report.files:,} read; "
                   f"items: {report.written:,} written, {report.removed:,} removed ({report.seconds:.2f} s)")
