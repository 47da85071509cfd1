"""Settings of the limiter: budget, scope split, priorities, strategy. Pure values.

Read from ``ctxgraph.toml`` or ``[tool.ctxgraph]`` in ``pyproject.toml`` by
:mod:`ctxgraph.settings`; these are the documented defaults.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from ctxgraph.compute.ranking import DEFAULT_WEIGHTS, RankingWeights

Strategy = Literal["recent", "important", "balanced"]
STRATEGIES: tuple[str, ...] = get_args(Strategy)
Scope = Literal["global", "task", "path"]

#: The type priority of the rank order (lower first; docs/concepts.md, step 8),
#: with gotchas right after patterns and ctxgraph's own block kinds placed
#: beside the closest original type.
DEFAULT_TYPE_PRIORITY: dict[str, float] = {
    "adr": 1,
    "pattern": 2,
    "gotcha": 2.5,
    "plan": 3,
    "module_memory": 4,
    "decision": 5,
    "open_question": 5.5,
    "dependency": 6,  # a dependency's handoff (prior work)
    "code_snippet": 6.4,  # a chunk of code from the associative memory
    "code_reference": 6.5,
    "changelog": 7,
    "related_task": 7.5,
}

#: The block sources' priorities: the lowest degrades first. The names are the
#: settings' keys (``[source_priority]``) and ``--explain``'s ``source``:
#: ``task`` the dependencies' handoffs, ``memory`` the knowledge items (neither
#: the working memory nor the code memory), ``code`` the files and code
#: snippets, ``docs`` the related tasks.
DEFAULT_SOURCE_PRIORITY: dict[str, int] = {"task": 100, "memory": 80, "code": 60, "docs": 40}

#: Each tier's default budget in tokens (docs/concepts.md, step 7).
DEFAULT_TIER_BUDGETS: dict[str, int] = {"easy": 4000, "normal": 8000, "complex": 16000}

#: The budget's split over the scopes, filled in this order with rollover
#: (docs/concepts.md, step 7).
DEFAULT_SCOPE_SPLIT: dict[str, float] = {"global": 0.5, "task": 0.3, "path": 0.2}

SCOPE_ORDER: tuple[Scope, ...] = ("global", "task", "path")


class ContextConfig(BaseModel):
    """How the limiter decides what fits."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    budget: int | None = Field(default=None, ge=1, description="overrides the tier's budget")
    tier_budgets: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_TIER_BUDGETS))
    scope_split: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_SCOPE_SPLIT))
    type_priority: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_TYPE_PRIORITY))
    source_priority: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_SOURCE_PRIORITY))
    strategy: Strategy = "balanced"
    decay_hours: float = Field(default=1.0, gt=0, description="balanced: importance / (1 + hours / decay_hours)")
    # -- associative memory (ctxgraph.compute.code_memory) --
    memory: bool = Field(default=True, description="use the associative memory (false: off unless a call asks)")
    memory_snippets: int = Field(default=3, ge=0, description="code snippets injected at most")
    memory_max_bytes: int = Field(default=2048, ge=0, description="bytes of snippet text injected at most")
    memory_snippet_chars: int = Field(default=120, ge=20, description="characters of one snippet at most")
    memory_min_similarity: float = Field(default=0.3, ge=-1, le=1,
                                         description="cosine a vector match needs to count")
    memory_min_bm25: float = Field(default=2.0, ge=0, description="BM25 score a full-text match needs to count")
    memory_snippet_similarity: float = Field(default=0.5, ge=-1, le=1,
                                             description="cosine a chunk needs to be shown as a snippet")
    memory_snippet_bm25: float = Field(default=30.0, ge=0,
                                       description="BM25 a chunk needs to be shown without a vector match")
    memory_rrf_k: int = Field(default=60, ge=1, description="reciprocal rank fusion constant")
    memory_graph_keep: float = Field(
        default=0.7, ge=0,
        description="graph files scoring at least this share of its best file's lead the fused "
                    "files in the graph's order (over 1: none, plain reciprocal rank fusion)")
    memory_graph_margin: float = Field(
        default=0.1, ge=-2, le=2,
        description="they lead only when the nearest finished task's cosine exceeds the best "
                    "code chunk's by this much")
    memory_stale_hours: float = Field(default=24.0, gt=0,
                                      description="an index older than this is stale and not used")
    # -- context outcomes (ctxgraph.outcomes) --
    outcomes_keep: int = Field(default=10_000, ge=1, description="delivered contexts a store keeps (the newest)")
    # -- code references (ctxgraph.compute.ranking; `ctxgraph tune` writes them) --
    ranking: RankingWeights = Field(default=DEFAULT_WEIGHTS,
                                    description="weights of the file ranking's evidence")

    @field_validator("tier_budgets", "type_priority", "source_priority", "scope_split", mode="before")
    @classmethod
    def _merge_defaults(cls, value: object, info: ValidationInfo) -> object:
        # a config file may name only some keys; the rest keep their defaults
        defaults: dict[str, dict[str, Any]] = {
            "tier_budgets": DEFAULT_TIER_BUDGETS,
            "type_priority": DEFAULT_TYPE_PRIORITY,
            "source_priority": DEFAULT_SOURCE_PRIORITY,
            "scope_split": DEFAULT_SCOPE_SPLIT,
        }
        if isinstance(value, dict):
            return {**defaults[str(info.field_name)], **value}
        return value

    @model_validator(mode="after")
    def _check(self) -> ContextConfig:
        if set(self.scope_split) != set(SCOPE_ORDER):
            raise ValueError("scope_split must name global, task and path")
        if abs(sum(self.scope_split.values()) - 1.0) > 1e-6 or min(self.scope_split.values()) < 0:
            raise ValueError("scope_split shares must be >= 0 and add up to 1")
        if any(v < 1 for v in self.tier_budgets.values()):
            raise ValueError("tier budgets must be positive")
        return self

    def budget_for(self, complexity: str) -> int:
        return self.budget if self.budget is not None else self.tier_budgets.get(complexity, 8000)
