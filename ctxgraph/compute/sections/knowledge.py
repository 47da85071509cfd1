"""Phase 2 (docs/concepts.md): the knowledge found by keyword and domain tags,
merged and sorted by relevance (:func:`ctxgraph.compute.relevance.merge_hits`),
every item not already brought by a dependency by the row of its kind
(:data:`.kinds.TAGGED`). Pure."""

from __future__ import annotations

from ctxgraph.compute.relevance import merge_hits
from ctxgraph.compute.sections.base import Collected, Ground
from ctxgraph.compute.sections.kinds import TAGGED, TAGGED_DEFAULT, Item, make
from ctxgraph.core.models import split_location


def knowledge_blocks(g: Ground, out: Collected) -> None:
    """The tagged knowledge; a gotcha on one file (scope ``path``) kept aside as
    a code note, shown only beside its file (:func:`.code.off_files`)."""
    merged = merge_hits(g.candidates.keyword_hits, g.candidates.domain_hits, g.signals, g.weights)
    for k, rel in merged:
        if k.kind in out.counts and not (k.kind == "decision" and k.status == "superseded"):
            out.counts[k.kind] += 1
        if k.id in out.seen:
            continue
        out.seen.add(k.id)
        k, rel, retired, stale = g.freshened(k, rel)
        item = Item(k, rel, g.common(k, rel, k.scope), stale, g.knowledge_reason(k), retired)
        made = make(TAGGED, TAGGED_DEFAULT, item)
        if made is None:
            continue
        out.add(made.block, made.reason)
        if k.kind == "gotcha" and k.scope == "path" and k.location and not made.reason:
            out.path_notes.append((made.block, split_location(k.location)[0]))


__all__ = ["knowledge_blocks"]
