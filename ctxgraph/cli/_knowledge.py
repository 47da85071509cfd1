"""``ctxgraph knowledge ...``: ADRs, patterns, decisions and the rest, by hand."""

from __future__ import annotations

from typing import Any

import click

from ctxgraph.cli._common import Group, echo_json, format_option
from ctxgraph.cli._stores import open_service, store_options, store_params

KINDS = ["adr", "pattern", "gotcha", "plan", "module_memory", "decision", "changelog"]


@click.group(cls=Group)
def knowledge() -> None:
    """Add knowledge by hand (ADRs, plans, module memories...) and revise it."""


def _knowledge_out(item: Any, fmt: str) -> None:
    if fmt == "json":
        echo_json(item.model_dump(mode="json"))
    else:
        chain = f", chain {item.chain_id} v{item.version}" if item.chain_id else ""
        until = f", superseded {item.valid_until}" if item.valid_until else ""
        replaces = f" (replaces: {'; '.join(item.replaces)})" if item.replaces else ""
        click.echo(f"{item.id} ({item.kind}, {item.scope}{chain}{until}): {item.summary}{replaces}")


@knowledge.command("add")
@click.argument("kind", type=click.Choice(KINDS))
@click.argument("summary")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable); the summary's keywords are added.")
@click.option("--scope", type=click.Choice(["global", "task", "path"]), default="global", show_default=True,
              help="Which share of the budget it competes for.")
@click.option("--importance", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Used by the important and balanced strategies.")
@click.option("--location", help="A file the knowledge is about (patterns, module memories).")
@click.option("--rationale", help="Why (decisions, ADRs).")
@click.option("--severity", type=click.Choice(["low", "medium", "high", "critical"]), help="Gotchas only.")
@store_options
@format_option
def knowledge_add(kind: str, summary: str, tags: tuple[str, ...], scope: str, importance: float,
                  location: str | None, rationale: str | None, severity: str | None, fmt: str,
                  **kwargs: Any) -> None:
    """Add a knowledge node of KIND saying SUMMARY."""
    with open_service(store_params(kwargs)) as svc:
        item = svc.add_knowledge(kind, summary, tags=tags, scope=scope, importance=importance,
                                 location=location, rationale=rationale, severity=severity)
    _knowledge_out(item, fmt)


@knowledge.command("revise")
@click.argument("knowledge_id")
@click.argument("summary")
@click.option("--rationale", help="A new rationale (default: keep the old one).")
@click.option("--importance", type=click.FloatRange(0, 1), help="A new importance.")
@store_options
@format_option
def knowledge_revise(knowledge_id: str, summary: str, rationale: str | None, importance: float | None,
                     fmt: str, **kwargs: Any) -> None:
    """Add a new version of a decision, pattern or other knowledge node.

    The new version joins the old one's chain with the next version number;
    only a chain's latest version is ever put in a context, and a revised
    decision is marked superseded.
    """
    with open_service(store_params(kwargs)) as svc:
        item = svc.revise_knowledge(knowledge_id, summary, rationale=rationale, importance=importance)
    _knowledge_out(item, fmt)


@knowledge.command("show")
@click.argument("knowledge_id")
@store_options
@format_option
def knowledge_show(knowledge_id: str, fmt: str, **kwargs: Any) -> None:
    """Show one knowledge node."""
    with open_service(store_params(kwargs), read_only=True) as svc:
        item = svc.get_knowledge(knowledge_id)
    _knowledge_out(item, fmt)


__all__ = ["knowledge"]
