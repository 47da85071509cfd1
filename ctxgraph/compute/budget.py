"""The limiter: the one place that decides what fits. Pure.

Every candidate becomes a :class:`Block` with its score parts. Blocks the
tiers cap, chain deduplication or the dependency filters removed arrive
already dropped (with that reason). The rest are fitted into the token budget:

1. The frame — headings, empty-section wording, working memory and blocks
   whose policy is ``exact`` — is reserved first; if it alone exceeds the
   budget, that is an error naming the exact blocks.
2. If all remaining blocks at their default level exceed what is left, they
   are degraded lowest block priority first (docs 40, code 60, memory 80,
   task 100), worst-ranked first within a priority, one step at a time
   (summarizable -> reference; structural -> summarizable -> reference),
   until they fit or nothing can degrade further (Phase 4).
3. What is left is split over the scopes global / task / path (50/30/20 %),
   filled in that order with unused budget rolling over to the next scope.
   Within a scope, blocks go in rank order — relevance first, then type
   priority, then the strategy term — and each is kept if it fits (at a
   lower level if only that fits), otherwise dropped and the fill goes on
   (a greedy fill: a block too big never stops a smaller one after it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from ctxgraph.compute.compress import LADDER, Level, Policy
from ctxgraph.compute.config import SCOPE_ORDER, ContextConfig, Scope
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.errors import CtxgraphError

Fate = Literal["kept", "compressed", "dropped"]


class BudgetExceededError(CtxgraphError):
    """The blocks that may never be compressed do not fit in the budget."""

    exit_code = 6


@dataclass
class Block:
    """One candidate piece of context with everything the limiter weighs."""

    id: str
    section: str
    kind: str
    scope: Scope
    source: str
    policy: Policy
    relevance: float
    tag_matches: tuple[str, ...]
    importance: float
    updated_at: str | None
    #: the item as shown at each level it can take (an output model instance)
    render: Callable[[Level], Any]
    #: the Markdown fragment of the item at a level, for token estimates
    fragment: Callable[[Any], str]
    fate: Fate = "kept"
    reason: str = ""
    level: Level = Level.FULL
    type_priority: float = 0.0
    strategy_term: float = 0.0
    tokens: dict[Level, int] = field(default_factory=dict)
    #: a code reference's ranking features, by name (compute.features; the history ranked it)
    features: dict[str, float] = field(default_factory=dict)

    def levels(self) -> tuple[Level, ...]:
        return LADDER[self.policy]

    def cost(self, level: Level) -> int:
        if level not in self.tokens:
            self.tokens[level] = estimate_tokens(self.fragment(self.render(level)))
        return self.tokens[level]

    def drop(self, reason: str) -> None:
        self.fate, self.reason = "dropped", reason

    def rank_key(self) -> tuple[float, float, float, str]:
        return (-self.relevance, self.type_priority, -self.strategy_term, self.id)


def _hours_since(stamp: str | None, now: datetime) -> float | None:
    if not stamp:
        return None
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, (now - then).total_seconds() / 3600.0)


def strategy_term(block: Block, config: ContextConfig, now: datetime) -> float:
    """ADR-006's strategies as a score (higher first): ``recent`` — newer first;
    ``important`` — importance; ``balanced`` — importance x 1/(1 + hours/decay)."""
    hours = _hours_since(block.updated_at, now)
    if config.strategy == "important":
        return block.importance
    if config.strategy == "recent":
        return 0.0 if hours is None else 1.0 / (1.0 + hours)
    if hours is None:
        return 0.0
    return block.importance * (1.0 / (1.0 + hours / config.decay_hours))


def score_blocks(blocks: Sequence[Block], config: ContextConfig, now: datetime) -> None:
    """Fill in each block's type priority and strategy term."""
    for block in blocks:
        block.type_priority = config.type_priority.get(block.kind, max(config.type_priority.values()) + 1)
        block.strategy_term = strategy_term(block, config, now)


@dataclass(frozen=True)
class BudgetFit:
    budget: int
    frame_tokens: int
    scope_used: dict[str, int]
    scope_allowed: dict[str, int]


def fit_budget(blocks: Sequence[Block], *, budget: int, frame_tokens: int, exact_names: Sequence[str],
        config: ContextConfig) -> BudgetFit:
    """Decide level and fate of every block still kept (see the module doc)."""
    if frame_tokens > budget:
        names = ", ".join(exact_names) or "section headings"
        raise BudgetExceededError(
            f"the blocks that are never compressed need {frame_tokens} tokens but the budget is "
            f"{budget}: {names}; raise --budget or lower the complexity"
        )
    live = [b for b in blocks if b.fate != "dropped"]
    for block in live:
        block.level = block.levels()[0]
    room = budget - frame_tokens

    # Phase 4: degrade the lowest-priority blocks first while everything is over.
    total = sum(b.cost(b.level) for b in live)
    if total > room:
        # lowest block priority first; within a priority, the worst-ranked first
        order = sorted(live, key=Block.rank_key, reverse=True)
        order = sorted((b for b in order if len(b.levels()) > 1),
                       key=lambda b: config.source_priority.get(b.source, 0))
        changed = True
        while total > room and changed:
            changed = False
            for block in order:
                steps = block.levels()
                i = steps.index(block.level)
                if i + 1 < len(steps):
                    total -= block.cost(block.level)
                    block.level = steps[i + 1]
                    total += block.cost(block.level)
                    changed = True
                    if total <= room:
                        break

    # Scopes in order with rollover; greedy by rank within a scope.
    used: dict[str, int] = {}
    allowed: dict[str, int] = {}
    carry = 0
    for scope in SCOPE_ORDER:
        share = math.floor(room * config.scope_split[scope]) + carry
        allowed[scope] = share
        left = share
        for block in sorted((b for b in live if b.scope == scope), key=Block.rank_key):
            options = block.levels()[block.levels().index(block.level):]
            chosen = next((lv for lv in options if block.cost(lv) <= left), None)
            if chosen is None:
                block.drop("budget")
                continue
            block.level = chosen
            left -= block.cost(chosen)
        used[scope] = share - left
        carry = left
    for block in live:
        if block.fate != "dropped" and block.level != block.levels()[0]:
            block.fate, block.reason = "compressed", "budget"
    return BudgetFit(budget=budget, frame_tokens=frame_tokens, scope_used=used, scope_allowed=allowed)
