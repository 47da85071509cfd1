"""The candidates of a context, section by section: one source per part of
it, run in the order of :data:`SOURCES` over the same
:class:`~ctxgraph.compute.sections.base.Ground`, each adding its blocks to
one :class:`~ctxgraph.compute.sections.base.Collected`. Pure.

The order matters: a dependency's knowledge is taken before the same item
found by tags (:mod:`.dependencies` before :mod:`.knowledge`), and the code
notes the knowledge keeps aside are judged against the files the code
section names (:mod:`.code`). The working memory (the last finished tasks,
the active blockers) makes no block: the store's answer is shown as it is
(:func:`ctxgraph.compute.assemble.working_memory`)."""

from __future__ import annotations

from ctxgraph.compute.sections.base import Collected, Ground, Source
from ctxgraph.compute.sections.code import code_blocks
from ctxgraph.compute.sections.dependencies import dependency_blocks
from ctxgraph.compute.sections.knowledge import knowledge_blocks
from ctxgraph.compute.sections.related import related_blocks

#: The section sources, by name, in the order they run.
SOURCES: tuple[tuple[str, Source], ...] = (
    ("dependencies", dependency_blocks),
    ("knowledge", knowledge_blocks),
    ("code", code_blocks),
    ("related", related_blocks),
)


def collect(ground: Ground) -> Collected:
    """Every source's blocks, in the order of :data:`SOURCES`."""
    out = Collected()
    for _, source in SOURCES:
        source(ground, out)
    return out


__all__ = ["SOURCES", "Collected", "Ground", "Source", "collect"]
