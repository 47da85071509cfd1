"""The complexity tier's caps: per section, the best-ranked blocks up to the
tier's cap (:mod:`ctxgraph.compute.limits`); the rest dropped ("cap"). Pure."""

from __future__ import annotations

from collections.abc import Sequence

from ctxgraph.compute.budget import Block
from ctxgraph.compute.limits import Limits

#: Section -> the name of its cap in :class:`~ctxgraph.compute.limits.Limits`.
SECTION_CAPS = {
    "patterns": "patterns", "warnings": "gotchas", "decisions": "decisions", "prior_work": "prior_tasks",
    "code_references": "code_refs", "related_tasks": "related_tasks",
}


def apply_caps(blocks: Sequence[Block], limits: Limits) -> dict[str, int]:
    """The complexity tier: per section, the best-ranked items up to the cap;
    how many each cap dropped."""
    dropped: dict[str, int] = {}
    for section, cap_name in SECTION_CAPS.items():
        cap = getattr(limits, cap_name)
        live = sorted((b for b in blocks if b.section == section and b.fate != "dropped"), key=Block.rank_key)
        for block in live[cap:]:
            block.drop("cap")
        if len(live) > cap:
            dropped[cap_name] = len(live) - cap
    return dropped


__all__ = ["SECTION_CAPS", "apply_caps"]
