"""The complexity tiers (items per section for an easy, normal or complex task;
docs/concepts.md, step 5), plus ctxgraph's own caps for the sections the
original limits table does not name."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ctxgraph.core.models import Complexity


class Limits(BaseModel):
    """How many items each section may hold."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    patterns: int
    gotchas: int
    code_refs: int
    prior_tasks: int
    decisions: int
    related_tasks: int


#: patterns / gotchas / code refs / prior tasks as specified; decisions get the
#: gotcha cap and related tasks the prior-task cap (the limits table leaves them open).
TIERS: dict[Complexity, Limits] = {
    Complexity.EASY: Limits(patterns=3, gotchas=2, code_refs=5, prior_tasks=2, decisions=2, related_tasks=2),
    Complexity.NORMAL: Limits(patterns=5, gotchas=3, code_refs=10, prior_tasks=4, decisions=3, related_tasks=4),
    Complexity.COMPLEX: Limits(patterns=10, gotchas=5, code_refs=20, prior_tasks=8, decisions=5, related_tasks=8),
}

#: The candidate queries' limits (phase 2, knowledge by tags; phase 4, the context map).
KEYWORD_QUERY_LIMIT = 20
DOMAIN_QUERY_LIMIT = 10
CONTEXT_MAP_TOP = 10
RELATED_TASK_QUERY_LIMIT = 8
#: Working memory: the last finished tasks shown (docs/concepts.md, step 6).
RECENT_TASKS = 5
#: Tags on more items than this are not read by the knowledge and related-task
#: candidate queries (benchmarks/README.md, finding 3): their rarity weight is
#: small (ctxgraph.core.rarity) and their items were what made these queries
#: grow with the graph. Small graphs never reach it.
TAG_DF_CAP = 1_000
#: Other tasks in progress a context reads at most, newest first (concurrent
#: work, ctxgraph.compute.concurrent; docs/decisions.md).
CONCURRENT_TASKS_LIMIT = 20


def limits_for(complexity: Complexity | str) -> Limits:
    return TIERS[Complexity(complexity)]
