"""Related tasks: completed tasks sharing tags with this one, neither itself
nor a dependency. Pure."""

from __future__ import annotations

from ctxgraph.compute.blocks import related_block
from ctxgraph.compute.relevance import tag_relevance
from ctxgraph.compute.sections.base import Collected, Ground


def related_blocks(g: Ground, out: Collected) -> None:
    """Related tasks keep the plain tag count: the store's rarity order already
    chose the candidates, and re-ranking them by rarity too named longer tasks
    in ``ctxgraph eval`` (werkzeug +1 token a context, recall the same)."""
    dep_ids = {d.task.id for d in g.candidates.dependencies}
    for h in g.candidates.related:
        if h.task.id == g.task.id or h.task.id in dep_ids:
            continue
        out.add(related_block(h, tag_relevance(h.matched_tags, g.keywords, g.domains, {})))


__all__ = ["related_blocks"]
