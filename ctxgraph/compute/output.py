"""What a computed context is: the sections of the default template, their items,
and the ``_computed`` metadata. Frozen pydantic models, no logic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ctxgraph.compute.code_memory import Snippet
from ctxgraph.core.models import Blocker, RecentTask, Severity
from ctxgraph.signals import TaskSignals

_OUT = ConfigDict(defer_build=True, frozen=True, extra="forbid")


class PatternRef(BaseModel):
    model_config = _OUT
    level: str = "full"
    id: str
    pattern: str
    location: str | None = None
    relevance: float
    from_task: str | None = None
    #: set when the code its location names changed since (compute.freshness)
    stale: str | None = None


class WarningRef(BaseModel):
    model_config = _OUT
    level: str = "full"
    id: str
    issue: str
    severity: Severity
    relevance: float
    from_task: str | None = None


class DecisionRef(BaseModel):
    model_config = _OUT
    level: str = "full"
    id: str
    decision: str
    rationale: str | None = None
    relevance: float
    from_task: str | None = None
    #: the decisions this one superseded (docs/decisions.md)
    replaces: tuple[str, ...] = ()


class FileRef(BaseModel):
    model_config = _OUT
    file: str
    reason: str = ""
    #: set when the file changed since the handoff named it (compute.freshness)
    stale: str | None = None


class PriorWork(BaseModel):
    model_config = _OUT
    level: str = "full"
    task_id: str
    task: str
    summary: str
    files_created: tuple[FileRef, ...] = ()


class BlockingQuestion(BaseModel):
    model_config = _OUT
    id: str
    question: str
    context: str | None = None
    recommendation: str | None = None
    from_task: str


class CodeRef(BaseModel):
    model_config = _OUT
    level: str = "full"
    file: str
    component: str
    notes: str
    relevance: float
    seed_score: int = 0


class RelatedTask(BaseModel):
    model_config = _OUT
    level: str = "full"
    id: str
    intent: str
    summary: str | None = None
    relevance: float


class ComputedMeta(BaseModel):
    """The context's ``_computed`` metadata plus what the debug section shows."""

    model_config = _OUT
    signals: TaskSignals
    complexity: str
    knowledge_nodes_matched: int
    dependency_count: int
    context_map_filtered: int
    keyword_hits: int = 0
    domain_hits: int = 0
    patterns_found: int = 0
    gotchas_found: int = 0
    decisions_found: int = 0
    dependency_ids: tuple[str, ...] = ()
    dependencies_skipped: tuple[str, ...] = ()
    patterns_inherited: int = 0
    warnings_inherited: int = 0
    context_map_total: int = 0
    context_map_candidates: int = 0
    top_relevance_score: int = 0
    working_memory: bool = True
    dropped_by_limits: dict[str, int] = Field(default_factory=dict)
    notes: tuple[str, ...] = ()
    budget: int = 0
    strategy: str = "balanced"
    frame_tokens: int = 0
    scope_used: dict[str, int] = Field(default_factory=dict)
    scope_allowed: dict[str, int] = Field(default_factory=dict)
    dropped_by_budget: int = 0
    compressed: int = 0
    #: what the associative memory contributed (empty when it was not used)
    memory: str = ""


class DecisionConflict(BaseModel):
    """Two decisions the context shows that likely conflict (``compute.conflicts``)."""

    model_config = _OUT
    first_id: str
    first: str
    second_id: str
    second: str
    shared_tags: tuple[str, ...]


class ConcurrentWork(BaseModel):
    """Another task in progress that expects to change some of the files this
    context names (``compute.concurrent``)."""

    model_config = _OUT
    task_id: str
    intent: str
    files: tuple[str, ...]


class ExplainEntry(BaseModel):
    """One candidate, its score parts, and what became of it."""

    model_config = _OUT
    id: str
    section: str
    kind: str
    scope: str
    source: str
    tag_matches: tuple[str, ...]
    relevance: float
    type_priority: float
    strategy_term: float
    level: str
    tokens: int
    fate: str
    reason: str
    #: a code reference's ranking features by name, in the registry's order
    #: (:mod:`ctxgraph.compute.features`), when the history ranked it
    features: dict[str, float] = Field(default_factory=dict)


class ComputedContext(BaseModel):
    """What a task is given: the sections of the default template and metadata."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid", populate_by_name=True)

    task_id: str
    patterns_to_follow: tuple[PatternRef, ...] = ()
    warnings: tuple[WarningRef, ...] = ()
    relevant_decisions: tuple[DecisionRef, ...] = ()
    prior_work: tuple[PriorWork, ...] = ()
    blocking_questions: tuple[BlockingQuestion, ...] = ()
    codebase_context: tuple[Snippet, ...] = ()
    code_references: tuple[CodeRef, ...] = ()
    related_tasks: tuple[RelatedTask, ...] = ()
    #: pairs of the decisions shown that likely conflict (docs/decisions.md)
    decision_conflicts: tuple[DecisionConflict, ...] = ()
    #: other tasks in progress expecting to change files this one does
    concurrent_work: tuple[ConcurrentWork, ...] = ()
    recent_tasks: tuple[RecentTask, ...] = ()
    active_blockers: tuple[Blocker, ...] = ()
    computed: ComputedMeta = Field(alias="_computed", serialization_alias="_computed")
    markdown: str = ""
    tokens: int = 0
    budget: int = 0
    explain: tuple[ExplainEntry, ...] | None = None


def store_warning(ctx: ComputedContext) -> str | None:
    """What ``ctxgraph context`` says on stderr (and an MCP result carries as
    its warning) when the store did not (fully) answer, without the
    ``ctxgraph: warning: `` prefix; None when it did."""
    notes = ctx.computed.notes
    if not notes:
        return None
    more = len(notes) - 1
    extra = f" (and {more} more parts; --debug lists them)" if more else ""
    return f"context computed without the store's answer: {notes[0]}{extra}"
