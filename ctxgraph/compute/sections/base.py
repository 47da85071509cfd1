"""What every section source of a context reads and what it adds to. Pure.

A source (:mod:`ctxgraph.compute.sections`) gets the :class:`Ground` — the
task, its signals, the store's candidates, the settings and the candidates'
code anchors — and adds its blocks, with their score parts (the features the
limiter weighs), to the :class:`Collected`, with what the context's
metadata counts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ctxgraph.compute.budget import Block
from ctxgraph.compute.compress import Policy
from ctxgraph.compute.config import ContextConfig
from ctxgraph.compute.freshness import Freshness
from ctxgraph.compute.output import CodeRef
from ctxgraph.core.models import Candidates, DependencyHandoff, KnowledgeItem, Task, TaskStatus
from ctxgraph.signals import TaskSignals


def chain_winners(items: Sequence[KnowledgeItem]) -> dict[str, str]:
    """chain_id -> the id of its latest version."""
    best: dict[str, KnowledgeItem] = {}
    for item in items:
        if item.chain_id is None:
            continue
        cur = best.get(item.chain_id)
        if cur is None or (item.version, item.updated_at or "") > (cur.version, cur.updated_at or ""):
            best[item.chain_id] = item
    return {chain: item.id for chain, item in best.items()}


@dataclass(frozen=True)
class Ground:
    """The input every section source reads (never changed by one)."""

    task: Task
    signals: TaskSignals
    candidates: Candidates
    config: ContextConfig
    fresh: Freshness
    #: tag -> its rarity weight among the candidates (compute.relevance.rarity_weights)
    weights: Mapping[str, float]
    #: the dependencies whose knowledge a context inherits (the completed ones)
    completed: tuple[DependencyHandoff, ...]
    #: chain_id -> the id of its latest version among the candidate knowledge
    winners: Mapping[str, str]

    @classmethod
    def of(cls, task: Task, signals: TaskSignals, candidates: Candidates, config: ContextConfig,
           fresh: Freshness, weights: Mapping[str, float]) -> Ground:
        completed = tuple(d for d in candidates.dependencies if d.task.status is TaskStatus.COMPLETED)
        knowledge = [k for d in completed for k in d.knowledge] + [
            h.item for h in (*candidates.keyword_hits, *candidates.domain_hits)]
        return cls(task, signals, candidates, config, fresh, weights, completed, chain_winners(knowledge))

    @cached_property
    def keywords(self) -> frozenset[str]:
        return frozenset(self.signals.keywords)

    @cached_property
    def domains(self) -> frozenset[str]:
        return frozenset(self.signals.domains)

    @cached_property
    def wanted(self) -> frozenset[str]:
        """The task's keywords and domains: the tags an item matches."""
        return self.keywords | self.domains

    def knowledge_reason(self, k: KnowledgeItem) -> str:
        """Why a knowledge item is not shown whatever its rank: an older
        version of a chain, a superseded decision; "" when it may be."""
        if k.chain_id is not None and self.winners.get(k.chain_id) != k.id:
            return "chain"
        if k.kind == "decision" and k.status == "superseded":
            return "superseded"
        return ""

    def freshened(self, k: KnowledgeItem, rel: float) -> tuple[KnowledgeItem, float, str, dict[str, Any]]:
        """The item as its code anchors have it now (compute.freshness): the
        location to show, the relevance, why it is retired, its marker."""
        if not self.fresh:
            return k, rel, "", {}
        retired, location, stale, factor = self.fresh.item(k.id, k.location)
        if location != k.location:
            k = k.model_copy(update={"location": location})
        return k, rel * factor, retired, ({"stale": stale} if stale else {})

    def common(self, k: KnowledgeItem, rel: float, scope: str) -> dict[str, Any]:
        """The block fields of a knowledge item: its score parts."""
        wanted = self.wanted
        return dict(id=k.id, kind=k.kind, scope=scope, source="memory", policy=Policy.SUMMARIZABLE,
                    relevance=rel, tag_matches=tuple(t for t in k.tags if t in wanted),
                    importance=k.importance, updated_at=k.updated_at)


@dataclass
class Collected:
    """What the sources made so far: the blocks in the order made (filtered
    ones dropped, with the reason) and what the context's metadata counts."""

    blocks: list[Block] = field(default_factory=list)
    #: the knowledge ids a block was made for (a dependency's first, then the tags')
    seen: set[str] = field(default_factory=set)
    #: code notes (a gotcha on one file) with their file: shown only beside it
    path_notes: list[tuple[Block, str]] = field(default_factory=list)
    #: knowledge found by tags, per kind (superseded decisions not counted)
    counts: dict[str, int] = field(default_factory=lambda: {"pattern": 0, "gotcha": 0, "decision": 0})
    patterns_inherited: int = 0
    warnings_inherited: int = 0
    #: the code references shown (the context map's, ranked, after the memory)
    code_refs: list[CodeRef] = field(default_factory=list)
    #: file -> its ranking features, for the files the history ranked (``context --explain``)
    features: dict[str, dict[str, float]] = field(default_factory=dict)
    memory_note: str = ""

    def add(self, block: Block, reason: str = "") -> None:
        if reason:
            block.drop(reason)
        self.blocks.append(block)


#: A section source: adds its blocks to the collection.
Source = Callable[[Ground, Collected], None]

__all__ = ["Collected", "Ground", "Source", "chain_winners"]
