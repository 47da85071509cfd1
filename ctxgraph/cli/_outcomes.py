"""``ctxgraph outcomes``: how the delivered contexts were used, by their tasks' handoffs."""

from __future__ import annotations

from typing import Any

import click

from ctxgraph.cli._common import CliError, echo_json, format_option
from ctxgraph.cli._stores import open_service, store_options, store_params


def _since(value: str | None) -> str | None:
    """--since as given, checked here so that a bad date is a usage error (exit 2)."""
    if value is None:
        return None
    from datetime import datetime

    try:
        datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise CliError(f"--since: {value!r} is not a date (YYYY-MM-DD) or an ISO time "
                       "(YYYY-MM-DDTHH:MM[:SS][+HH:MM|Z])", 2) from None
    return value


@click.command("outcomes")
@click.option("--since", metavar="DATE", help="Only deliveries made at or after DATE (YYYY-MM-DD, or an ISO "
                                              "time; UTC unless it names an offset).")
@click.option("--last", type=click.IntRange(min=1), metavar="N", help="Only the newest N deliveries (of --since's).")
@store_options
@format_option
def outcomes_command(since: str | None, last: int | None, fmt: str, **kwargs: Any) -> None:
    """Report how the delivered contexts were used.

    Every context computed for writing (the library, `ctxgraph mcp`,
    `ctxgraph context --record`, `ctxgraph demo`) is recorded: its task, its
    time, the items and files it named with their ranks, and the tokens of
    each section. When the task's handoff is ingested, the delivery is scored:
    how many of the files the handoff created or modified were among the first
    5 and 10 files the context named, which items the handoff touched (their
    files, or tags shared with the knowledge it discovered), and the tokens of
    the items it did not touch (wasted).

    Reports, over the window: recall@5 and @10 of the changed files (mean per
    delivery), the hit rates (deliveries with at least one changed file in the
    first 5 / 10), the share of items used, and per section the items
    delivered and used and the tokens wasted.
    """
    since = _since(since)
    with open_service(store_params(kwargs), read_only=True) as svc:
        report = svc.outcomes(since=since, last=last)
    if fmt == "json":
        echo_json(report.model_dump(mode="json"))
        return
    window = " ".join(x for x in (f"since {report.since}" if report.since else "",
                                  f"last {report.last}" if report.last else "") if x) or "all kept"
    click.echo(f"deliveries ({window}): {report.deliveries} — {report.scored} scored, {report.unscored} "
               f"waiting for their handoff, {report.unreadable} unreadable; {report.tasks} tasks")
    if report.first_at:
        click.echo(f"from {report.first_at} to {report.last_at}")
    if not report.scored:
        click.echo("no scored deliveries yet: a delivery is scored when its task's handoff is ingested")
        return
    click.echo(f"files: recall@5 {report.recall5:.2f}, recall@10 {report.recall10:.2f}; hit rate@5 "
               f"{report.hit_rate5:.2f}, @10 {report.hit_rate10:.2f} (over {report.with_changes} deliveries "
               "whose handoff changed files)")
    click.echo(f"items used: {report.items_used:,} of {report.items:,} ({report.used_share:.2f}); "
               f"tokens wasted: {report.wasted_tokens:,} of {report.item_tokens:,}")
    click.echo("")
    click.echo(f"{'section':<20}{'delivered':>10}{'used':>8}{'share':>8}{'tokens':>9}{'wasted':>9}"
               f"{'wasted/delivery':>17}")
    for s in report.sections:
        click.echo(f"{s.section:<20}{s.delivered:>10,}{s.used:>8,}{s.used_share:>8.2f}{s.tokens:>9,}"
                   f"{s.wasted:>9,}{s.wasted_per_delivery:>17,.1f}")
