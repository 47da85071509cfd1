"""``ctxgraph history``: the project's git history as finished tasks
(docs/history.md)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ctxgraph.cli._common import STARTED, Group, echo_json, format_option
from ctxgraph.cli._init import root_option
from ctxgraph.cli._stores import open_service, store_options, store_params

if TYPE_CHECKING:
    from ctxgraph.service.history import HistoryReport


@click.group("history", cls=Group)
def history() -> None:
    """The project's git history as finished tasks.

    Each commit of the branch becomes a finished task (id c- and the
    commit's first 10 hex digits) with a handoff naming the files it
    changed, unless a noise rule skips it (merges, releases, reverts, mass
    changes, ...). Renames are followed; no name or e-mail address is kept.
    """


def _progress(quiet: bool) -> Any:
    """A progress line on stderr (a terminal sees it grow; a log, the last line)."""

    def show(report: HistoryReport) -> None:
        if quiet or not sys.stderr.isatty():
            return
        click.echo(f"\rhistory: {report.read:,} commits read, {report.imported:,} imported, "
                   f"{sum(report.skipped.values()):,} skipped, {report.signals:,} given signals", err=True, nl=False)

    return show


@history.command("import")
@store_options
@root_option
@click.option("--branch", default="HEAD", show_default=True, metavar="REF",
              help="The branch (or tag, or commit) whose history is imported: its commits, no other.")
@click.option("--since", metavar="DATE", help="Only commits after DATE (git's date syntax: 2024-01-31, '2 years ago').")
@click.option("--max-commits", type=click.IntRange(min=1), metavar="N", help="At most the N newest commits.")
@click.option("--path", "paths", multiple=True, metavar="FOLDER",
              help="Keep only the files under FOLDER (relative to the repository's top; repeat for more), and "
                   "skip the commits that change none: one package of a larger repository [default: the "
                   "settings' history.paths, else the last import's folders, else everything].")
@click.option("--time-limit", type=click.FloatRange(min=0.1), metavar="SECONDS",
              help="Stop after about this long (counted from the command's start); what was written stays, "
                   "and the next run goes on.")
@click.option("--signals/--no-signals", default=True, show_default=True,
              help="Give the imported tasks their signals (keywords and domains, with spaCy) after the full "
                   "text; --no-signals leaves it to a later run.")
@click.option("-q", "--quiet", is_flag=True, help="No progress line and no summary (errors only).")
@format_option
def import_command(root: Path | None, branch: str, since: str | None, max_commits: int | None,
                   paths: tuple[str, ...], time_limit: float | None, signals: bool, quiet: bool, fmt: str,
                   **kwargs: Any) -> None:
    """Import the git history of the project's root (--root) as finished tasks.

    Run again, it reads only the commits added since, retires the tasks of
    commits no longer on the branch (amended, rebased, reset away: never
    shown again) and brings back those whose commit is back. A commit whose
    message has a trailer `Task: <id>` naming an existing task becomes a
    second handoff of that task. --format json prints the summary.
    """
    from ctxgraph.service.history import HistoryOptions

    left = None if time_limit is None else max(0.1, time_limit - (time.monotonic() - STARTED))
    options = HistoryOptions(branch=branch, since=since, max_commits=max_commits, time_limit=left, signals=signals,
                             paths=paths or None)
    with open_service(store_params(kwargs)) as svc:
        report = svc.import_history(root, options, progress=_progress(quiet))
    if not quiet and sys.stderr.isatty():
        click.echo("", err=True)
    if fmt == "json":
        echo_json(report.as_dict())
    elif not quiet:
        _summary(report)


def _summary(report: HistoryReport) -> None:
    skipped = ", ".join(f"{n:,} {rule}" for rule, n in sorted(report.skipped.items(), key=lambda kv: (-kv[1], kv[0])))
    click.echo(f"history of {report.branch} ({report.head[:10]}) in {report.root}: {report.mode}; "
               f"{report.read:,} commits read, {report.imported:,} imported, {report.unchanged:,} unchanged, "
               f"{report.updated:,} updated, {report.joined:,} joined to their task; "
               f"{report.retired:,} retired, {report.revived:,} back; {report.signals:,} given signals; "
               f"{report.gotchas:,} gotchas from reverts written, {report.gotchas_removed:,} removed "
               f"({report.seconds:.2f} s)")
    if report.paths:
        click.echo("folders kept: " + ", ".join(report.paths))
    click.echo(f"skipped: {skipped or 'none'}")
    if report.files_dropped:
        click.echo("files dropped: " + ", ".join(f"{n:,} {rule}" for rule, n in sorted(report.files_dropped.items())))
    if report.conflicts:
        click.echo(f"{report.conflicts:,} tasks with an imported id were not made by an import: left as they are")
    if report.partial:
        click.echo(f"stopped early ({report.stopped}): run it again to go on")


@history.command("explain")
@click.argument("commit")
@store_options
@root_option
@click.option("--branch", default="HEAD", show_default=True, metavar="REF", help="The branch imported.")
@format_option
def explain_command(commit: str, root: Path | None, branch: str, fmt: str, **kwargs: Any) -> None:
    """Say whether COMMIT was imported, as which task, or why not."""
    with open_service(store_params(kwargs), read_only=True) as svc:
        found = svc.explain_commit(commit, root, branch=branch)
    if fmt == "json":
        echo_json(found.as_dict())
        return
    click.echo(found.verdict)
    click.echo(f"  {found.subject}")
    for change in found.files:
        moved = f" (from {change['from']})" if "from" in change else ""
        click.echo(f"  {change['status']} {change['path']}{moved}")
    for dropped in found.dropped:
        click.echo(f"  dropped ({dropped['rule']}): {dropped['path']}")
    if found.reverts:
        click.echo(f"  reverts {found.reverts}")


__all__ = ["history"]
