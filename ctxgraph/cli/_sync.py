"""``ctxgraph sync``: check the code anchors against the work tree (docs/freshness.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ctxgraph.cli._common import CliError, echo_json, format_option, note
from ctxgraph.cli._init import root_option
from ctxgraph.cli._stores import open_service, store_options, store_params

#: Anchors from which a run shows its progress on stderr.
PROGRESS_FROM = 5_000


@click.command("sync")
@store_options
@root_option
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary (errors only; --format json "
                                                  "still prints its summary).")
@format_option
def sync_command(root: Path | None, quiet: bool, fmt: str, **kwargs: Any) -> None:
    """Bring the project's past up to date, then check every code anchor
    against the work tree.

    When the graph holds the project's imported history, the commits that
    landed since are imported (and those rewritten away retired); when it
    holds its imported ADRs and code notes, the files changed since are read
    again (docs/history.md, docs/knowledge-import.md).

    An anchor is a file a handoff named (files created or modified, with
    their lines when given; files for the next task; a pattern's location),
    recorded at ingestion with its git blob id. Each is now unchanged,
    changed (its lines, or the file), renamed (followed with git's rename
    detection) or deleted (its item is retired: never shown again). A file
    whose stat is the one last seen is not read. Contexts check their own
    anchors just in time; a sync stores what it finds for all of them.
    """
    from ctxgraph.service.freshness import NoRootError
    from ctxgraph.service.past import SYNC_EMBED_SECONDS, history_line, knowledge_line, tasks_line

    params = store_params(kwargs)
    with open_service(params) as svc:
        if root is not None:
            svc.use_root(root)
        def progress(done: int, total: int) -> None:
            # a terminal sees the count grow; a log gets the last line only
            if quiet or total < PROGRESS_FROM or (not sys.stderr.isatty() and done < total):
                return
            click.echo(f"\rsync: {done:,}/{total:,} anchors", err=True, nl=done >= total)

        try:
            past = svc.import_past(root, kept_only=True, embed_seconds=SYNC_EMBED_SECONDS)
            report = svc.sync(progress=progress)
        except NoRootError as exc:
            raise CliError(str(exc)) from None
    if fmt == "json":
        echo_json({**report.model_dump(mode="json"), "past": past.as_dict()})
    elif not quiet:
        for line in past.notes:
            note(line)
        if past.history is not None:
            click.echo(history_line(past.history))
        if past.knowledge is not None:
            click.echo(knowledge_line(past.knowledge))
        said = tasks_line(past.tasks) if past.tasks is not None else None
        if said:
            click.echo(said)
        click.echo(f"{report.anchors:,} anchors under {report.root}: {report.unchanged:,} unchanged, "
                   f"{report.changed:,} changed, {report.deleted:,} deleted; this run: {report.renamed:,} "
                   f"renamed, {report.newly_changed:,} newly changed, {report.newly_deleted:,} newly deleted "
                   f"({report.hashed:,} files read, {report.seconds:.2f} s)")


def sync_argv(index_argv: list[str]) -> list[str]:
    """The sync a post-commit hook runs beside its index (``ctxgraph hooks
    install``): the same ctxgraph and store as ``index_argv`` (``ctxgraph
    index ROOT ... --store PATH | --neo4j URI ...``), on the same root."""
    at = index_argv.index("index")
    store = next((i for i, a in enumerate(index_argv) if a in ("--store", "--neo4j")), len(index_argv))
    return [*index_argv[:at], "sync", "--root", index_argv[at + 1], "-q", *index_argv[store:]]
