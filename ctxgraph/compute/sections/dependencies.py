"""Phase 3 (docs/concepts.md): what the completed dependencies hand on — each
one's handoff (its summary, the files to read next) and its knowledge, every
item by the row of its kind (:data:`.kinds.INHERITED`). Pure."""

from __future__ import annotations

from ctxgraph.compute.blocks import prior_block
from ctxgraph.compute.relevance import DEPENDENCY_BONUS, tag_relevance
from ctxgraph.compute.sections.base import Collected, Ground
from ctxgraph.compute.sections.kinds import INHERITED, INHERITED_DEFAULT, Item, make


def dependency_blocks(g: Ground, out: Collected) -> None:
    """Each completed dependency's handoff, then its knowledge not seen yet."""
    for dep in g.completed:
        out.add(prior_block(dep, g.fresh))
        for k in dep.knowledge:
            rel = DEPENDENCY_BONUS + tag_relevance(k.tags, g.keywords, g.domains, g.weights)
            k, rel, retired, stale = g.freshened(k, rel)
            if k.id in out.seen:
                continue
            out.seen.add(k.id)
            item = Item(k, rel, g.common(k, rel, "task"), stale, g.knowledge_reason(k), retired, dep.task.id)
            made = make(INHERITED, INHERITED_DEFAULT, item)
            if made is None:
                continue
            if made.counted == "patterns":
                out.patterns_inherited += 1
            elif made.counted == "warnings":
                out.warnings_inherited += 1
            out.add(made.block, made.reason)


__all__ = ["dependency_blocks"]
