"""How each kind of knowledge becomes a block, one row per kind. Pure.

A dependency's knowledge (:mod:`.dependencies`) and the knowledge found by
tags (:mod:`.knowledge`) look up the item's kind in :data:`INHERITED` and
:data:`TAGGED`; a kind with no row there takes the table's default (a kind
added by hand — adr, plan, module_memory, changelog — is shown as a pattern
when found by tags, and not at all when a dependency brought it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxgraph.compute.blocks import decision_block, pattern_block, question_block, warning_block
from ctxgraph.compute.budget import Block
from ctxgraph.core.models import KnowledgeItem, Severity


@dataclass(frozen=True)
class Item:
    """A knowledge item as its source meets it: freshened (compute.freshness),
    with its relevance, block fields, marker and why it is not to be shown."""

    k: KnowledgeItem
    rel: float
    common: Mapping[str, Any]
    #: ``{"stale": marker}`` when its code changed, else empty
    stale: Mapping[str, Any] = field(default_factory=dict)
    #: why it is not shown whatever its rank (compute.sections.base.Ground.knowledge_reason)
    reason: str = ""
    #: why its code retired it ("" when it is not)
    retired: str = ""
    #: the dependency that brought it ("" when found by tags)
    from_task: str = ""


@dataclass(frozen=True)
class Made:
    """The block made for an item, the reason it arrives dropped ("" if it
    does not), and the inherited count it adds to ("patterns", "warnings" or "")."""

    block: Block
    reason: str = ""
    counted: str = ""


#: Makes an item's block, or None for a kind its source does not show.
Maker = Callable[[Item], "Made | None"]


def _inherited_pattern(i: Item) -> Made:
    block = pattern_block(i.k, i.rel, i.common, from_task=i.from_task, **i.stale)
    return Made(block, i.reason or i.retired, "patterns")


def _inherited_gotcha(i: Item) -> Made:
    low = i.k.severity is Severity.LOW  # a low gotcha of a dependency is filtered
    block = warning_block(i.k, i.rel, i.common, from_task=i.from_task)
    return Made(block, "filtered" if low else i.reason or i.retired, "" if low else "warnings")


def _inherited_decision(i: Item) -> Made:
    return Made(decision_block(i.k, i.rel, i.common, from_task=i.from_task), i.reason or i.retired)


def _inherited_question(i: Item) -> Made:
    return Made(question_block(i.k, i.common, i.from_task), "" if i.k.blocking else "filtered")


def _none(i: Item) -> None:
    return None


def _tagged_pattern(i: Item) -> Made:
    return Made(pattern_block(i.k, i.rel, i.common, **i.stale), i.reason or i.retired)


def _tagged_gotcha(i: Item) -> Made:
    return Made(warning_block(i.k, i.rel, i.common), i.reason or i.retired)


def _tagged_decision(i: Item) -> Made:
    return Made(decision_block(i.k, i.rel, i.common), i.reason or i.retired)


#: A completed dependency's knowledge, by kind (the others are not shown).
INHERITED: Mapping[str, Maker] = {
    "pattern": _inherited_pattern, "gotcha": _inherited_gotcha, "decision": _inherited_decision,
    "open_question": _inherited_question,
}
INHERITED_DEFAULT: Maker = _none

#: Knowledge found by tags, by kind (open questions come from dependencies only).
TAGGED: Mapping[str, Maker] = {
    "gotcha": _tagged_gotcha, "decision": _tagged_decision, "open_question": _none,
}
TAGGED_DEFAULT: Maker = _tagged_pattern


def make(table: Mapping[str, Maker], default: Maker, item: Item) -> Made | None:
    """The block of ``item`` by the row of its kind in ``table``."""
    return table.get(item.k.kind, default)(item)


__all__ = ["INHERITED", "TAGGED", "Item", "Made", "Maker", "make"]
