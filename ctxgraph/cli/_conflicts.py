"""``ctxgraph conflicts``: decisions in force that likely contradict each other."""

from __future__ import annotations

from typing import Any

import click

from ctxgraph.cli._common import echo_json, format_option
from ctxgraph.cli._stores import open_service, store_options, store_params


def _cut(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@click.command("conflicts")
@store_options
@format_option
def conflicts_command(fmt: str, **kwargs: Any) -> None:
    """List likely conflicts among the decisions in force.

    Two decisions likely conflict when neither is superseded, they share at
    least 3 tags with a Jaccard similarity of their tags of at least 0.4
    (tags: the applies_to tags and the text's keywords and domains), and the
    words of their texts
    have a Jaccard similarity under 0.8 (at or over it, one restates the
    other). Resolve one by ingesting a handoff whose decision names the
    decision it replaces (`supersedes: [ID or exact text]`), or by `ctxgraph
    knowledge revise ID TEXT`. A context showing both decisions says so.

    Exits 0 whether or not conflicts are found; `--format json` gives a list
    of {first_id, first, second_id, second, shared_tags, tag_similarity,
    text_similarity}. See docs/decisions.md.
    """
    with open_service(store_params(kwargs), read_only=True) as svc:
        found = svc.conflicts()
    if fmt == "json":
        echo_json([c.model_dump(mode="json") for c in found])
        return
    if not found:
        click.echo("no likely conflicts among the decisions in force")
        return
    click.echo(f"{len(found)} likely conflict{'s' if len(found) != 1 else ''} among the decisions in force:")
    click.echo(f"{'tags':>5} {'text':>5}  {'decision':<26} {'decision':<26} shared tags")
    for c in found:
        click.echo(f"{c.tag_similarity:5.2f} {c.text_similarity:5.2f}  {c.first_id:<26} {c.second_id:<26} "
                   f"{', '.join(c.shared_tags)}")
        click.echo(f"{'':12}  {_cut(c.first, 60)}")
        click.echo(f"{'':12}  {_cut(c.second, 60)}")


__all__ = ["conflicts_command"]
