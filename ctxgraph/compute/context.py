"""The computed-context pipeline: candidates in, a limited context out. Pure.

Phases (seed 003): 2 — knowledge by keyword tags and domain tags, merged,
deduplicated, categorized and sorted by relevance; 3 — dependency context from
completed dependencies only; 4 — context-map filter with the seed's scores;
then the complexity tiers; plus the working memory of seed 004.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ctxgraph.compute.limits import CONTEXT_MAP_TOP, Limits
from ctxgraph.graph.models import (
    Blocker,
    DependencyHandoff,
    FileEntry,
    KnowledgeHit,
    KnowledgeItem,
    RecentTask,
    Severity,
    Task,
    TaskHit,
    TaskStatus,
)
from ctxgraph.signals import TaskSignals

_OUT = ConfigDict(frozen=True, extra="forbid")

#: Weight of one matched keyword tag and one matched domain tag.
KEYWORD_WEIGHT = 1.0
DOMAIN_WEIGHT = 0.5
#: Added to the tag relevance of knowledge a task's own dependencies discovered.
DEPENDENCY_BONUS = 2.0

_SEVERITY_RANK = {Severity.CRITICAL: 0, Severity.HIGH: 1, Severity.MEDIUM: 2, Severity.LOW: 3}


# ----------------------------------------------------------------- output models


class PatternRef(BaseModel):
    model_config = _OUT
    id: str
    pattern: str
    location: str | None = None
    relevance: float
    from_task: str | None = None


class WarningRef(BaseModel):
    model_config = _OUT
    id: str
    issue: str
    severity: Severity
    relevance: float
    from_task: str | None = None


class DecisionRef(BaseModel):
    model_config = _OUT
    id: str
    decision: str
    rationale: str | None = None
    relevance: float
    from_task: str | None = None


class FileRef(BaseModel):
    model_config = _OUT
    file: str
    reason: str = ""


class PriorWork(BaseModel):
    model_config = _OUT
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
    file: str
    component: str
    notes: str
    relevance: int


class RelatedTask(BaseModel):
    model_config = _OUT
    id: str
    intent: str
    summary: str | None = None
    relevance: float


class ComputedMeta(BaseModel):
    """The seed's ``_computed`` metadata plus what the debug section shows."""

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


class ComputedContext(BaseModel):
    """What a task is given: the sections of the seed's template and metadata."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    task_id: str
    patterns_to_follow: tuple[PatternRef, ...] = ()
    warnings: tuple[WarningRef, ...] = ()
    relevant_decisions: tuple[DecisionRef, ...] = ()
    prior_work: tuple[PriorWork, ...] = ()
    blocking_questions: tuple[BlockingQuestion, ...] = ()
    code_references: tuple[CodeRef, ...] = ()
    related_tasks: tuple[RelatedTask, ...] = ()
    recent_tasks: tuple[RecentTask, ...] = ()
    active_blockers: tuple[Blocker, ...] = ()
    computed: ComputedMeta = Field(alias="_computed", serialization_alias="_computed")
    markdown: str = ""
    tokens: int = 0


class Candidates(BaseModel):
    """Everything the store returned for one task, before ranking."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    keyword_hits: tuple[KnowledgeHit, ...] = ()
    domain_hits: tuple[KnowledgeHit, ...] = ()
    dependencies: tuple[DependencyHandoff, ...] = ()
    context_map: tuple[FileEntry, ...] = ()
    context_map_total: int = 0
    related: tuple[TaskHit, ...] = ()
    recent_tasks: tuple[RecentTask, ...] = ()
    active_blockers: tuple[Blocker, ...] = ()
    notes: tuple[str, ...] = ()


# ------------------------------------------------------------------------ phases


def relevance(matched: Sequence[str], signals: TaskSignals) -> float:
    """Keyword tags count 1, domain tags 0.5 (a tag that is both counts once, as a keyword)."""
    keywords, domains = set(signals.keywords), set(signals.domains)
    score = 0.0
    for tag in matched:
        if tag in keywords:
            score += KEYWORD_WEIGHT
        elif tag in domains:
            score += DOMAIN_WEIGHT
    return score


def merge_hits(
    keyword_hits: Sequence[KnowledgeHit], domain_hits: Sequence[KnowledgeHit], signals: TaskSignals
) -> list[tuple[KnowledgeItem, float]]:
    """Phase 2: merge both queries, dedupe by id, sort by relevance (then recency, id)."""
    merged: dict[str, tuple[KnowledgeItem, set[str]]] = {}
    for hit in [*keyword_hits, *domain_hits]:
        if hit.item.id in merged:
            merged[hit.item.id][1].update(hit.matched_tags)
        else:
            merged[hit.item.id] = (hit.item, set(hit.matched_tags))
    scored = [(item, relevance(sorted(tags), signals)) for item, tags in merged.values()]
    scored.sort(key=lambda pair: pair[0].id)
    scored.sort(key=lambda pair: pair[0].updated_at or "", reverse=True)
    scored.sort(key=lambda pair: pair[1], reverse=True)
    return scored


def score_file(entry: FileEntry, signals: TaskSignals) -> int:
    """Phase 4, the seed's rule: component +2, location +1, domain in notes +1,
    mentioned file +3 (each keyword, domain and file counted separately)."""
    score = 0
    component, location, notes = entry.component.lower(), entry.location.lower(), entry.notes.lower()
    for keyword in signals.keywords:
        if keyword in component:
            score += 2
        if keyword in location:
            score += 1
    for domain in signals.domains:
        if domain in notes:
            score += 1
    for mentioned in signals.files_mentioned:
        if mentioned in entry.location:
            score += 3
    return score


def filter_context_map(entries: Sequence[FileEntry], signals: TaskSignals) -> list[CodeRef]:
    """Phase 4: entries with a positive score, highest first (path breaks ties), top 10."""
    refs = [
        CodeRef(file=e.location, component=e.component, notes=e.notes, relevance=s)
        for e in entries
        if (s := score_file(e, signals)) > 0
    ]
    refs.sort(key=lambda r: (-r.relevance, r.file))
    return refs[:CONTEXT_MAP_TOP]


R = TypeVar("R", PatternRef, WarningRef, DecisionRef)
X = TypeVar("X")


def _by_relevance(items: list[R]) -> list[R]:
    """Stable sort, highest relevance first (earlier items win ties)."""
    return sorted(items, key=lambda item: -item.relevance)


def _dedupe_by_id(items: Sequence[R]) -> list[R]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item.id not in seen:
            seen.add(item.id)
            out.append(item)
    return out


def compute_context(
    task: Task,
    signals: TaskSignals,
    candidates: Candidates,
    limits: Limits,
    *,
    complexity: str,
) -> ComputedContext:
    """Phases 2-5 and the tiers, over what the store returned. No IO."""
    dropped: dict[str, int] = {}

    def cap(name: str, items: Sequence[X], limit: int) -> tuple[X, ...]:
        if len(items) > limit:
            dropped[name] = len(items) - limit
        return tuple(items[:limit])

    # Phase 3: dependency context, completed dependencies only.
    completed = [d for d in candidates.dependencies if d.task.status is TaskStatus.COMPLETED]
    skipped = tuple(d.task.id for d in candidates.dependencies if d.task.status is not TaskStatus.COMPLETED)
    prior_work: list[PriorWork] = []
    inherited_patterns: list[PatternRef] = []
    inherited_warnings: list[WarningRef] = []
    inherited_decisions: list[DecisionRef] = []
    blocking: list[BlockingQuestion] = []
    # Knowledge a dependency filtered out (low gotchas, non-blocking questions)
    # stays out even when the tag query finds it too.
    filtered_out: set[str] = set()

    def inherited(item: KnowledgeItem) -> float:
        return DEPENDENCY_BONUS + relevance(item.tags, signals)

    for dep in completed:
        files = dep.files_to_read or dep.files_created

        prior_work.append(
            PriorWork(
                task_id=dep.task.id,
                task=dep.task.intent,
                summary=dep.summary or dep.task.outcome_summary or "",
                files_created=tuple(FileRef(file=f.file, reason=f.reason) for f in files),
            )
        )
        for k in dep.knowledge:
            if k.kind == "pattern":
                inherited_patterns.append(
                    PatternRef(id=k.id, pattern=k.summary, location=k.location, relevance=inherited(k),
                               from_task=dep.task.id)
                )
            elif k.kind == "gotcha" and k.severity is not Severity.LOW:
                inherited_warnings.append(
                    WarningRef(id=k.id, issue=k.summary, severity=k.severity or Severity.MEDIUM,
                               relevance=inherited(k), from_task=dep.task.id)
                )
            elif k.kind == "decision" and k.status != "superseded":
                inherited_decisions.append(
                    DecisionRef(id=k.id, decision=k.summary, rationale=k.rationale, relevance=inherited(k),
                                from_task=dep.task.id)
                )
            elif k.kind == "open_question" and k.blocking:
                blocking.append(
                    BlockingQuestion(id=k.id, question=k.summary, context=k.context,
                                     recommendation=k.recommendation, from_task=dep.task.id)
                )
            else:
                filtered_out.add(k.id)

    # Phase 2: knowledge by tags.
    scored = [
        (k, r) for k, r in merge_hits(candidates.keyword_hits, candidates.domain_hits, signals)
        if k.id not in filtered_out
    ]
    patterns = [
        PatternRef(id=k.id, pattern=k.summary, location=k.location, relevance=r)
        for k, r in scored if k.kind == "pattern"
    ]
    gotchas = [
        WarningRef(id=k.id, issue=k.summary, severity=k.severity or Severity.MEDIUM, relevance=r)
        for k, r in scored if k.kind == "gotcha"
    ]
    gotchas.sort(key=lambda w: (-w.relevance, _SEVERITY_RANK[w.severity]))
    decisions = [
        DecisionRef(id=k.id, decision=k.summary, rationale=k.rationale, relevance=r)
        for k, r in scored if k.kind == "decision" and k.status != "superseded"
    ]

    # Inherited knowledge wins ties and duplicates: the task's own dependencies
    # learned it. Gotchas of equal relevance go by severity.
    all_patterns = _by_relevance(_dedupe_by_id([*inherited_patterns, *patterns]))
    all_warnings = _by_relevance(_dedupe_by_id([*inherited_warnings, *gotchas]))
    all_warnings.sort(key=lambda w: (-w.relevance, _SEVERITY_RANK[w.severity]))
    all_decisions = _by_relevance(_dedupe_by_id([*inherited_decisions, *decisions]))

    # Phase 4: context map.
    code_refs = filter_context_map(candidates.context_map, signals)

    dep_ids = {d.task.id for d in candidates.dependencies}
    related = [
        RelatedTask(id=h.task.id, intent=h.task.intent, summary=h.task.outcome_summary,
                    relevance=relevance(h.matched_tags, signals))
        for h in candidates.related
        if h.task.id != task.id and h.task.id not in dep_ids
    ]
    related.sort(key=lambda r: -r.relevance)

    working_memory = task.requires_context
    meta = ComputedMeta(
        signals=signals,
        complexity=complexity,
        knowledge_nodes_matched=len(patterns) + len(gotchas) + len(decisions),
        dependency_count=len(completed),
        context_map_filtered=len(code_refs),
        keyword_hits=len(candidates.keyword_hits),
        domain_hits=len(candidates.domain_hits),
        patterns_found=len(patterns),
        gotchas_found=len(gotchas),
        decisions_found=len(decisions),
        dependency_ids=tuple(d.task.id for d in candidates.dependencies),
        dependencies_skipped=skipped,
        patterns_inherited=len(inherited_patterns),
        warnings_inherited=len(inherited_warnings),
        context_map_total=candidates.context_map_total,
        context_map_candidates=len(candidates.context_map),
        top_relevance_score=code_refs[0].relevance if code_refs else 0,
        working_memory=working_memory,
        dropped_by_limits=dropped,
        notes=candidates.notes,
    )
    context = ComputedContext(
        task_id=task.id,
        patterns_to_follow=cap("patterns", all_patterns, limits.patterns),
        warnings=cap("gotchas", all_warnings, limits.gotchas),
        relevant_decisions=cap("decisions", all_decisions, limits.decisions),
        prior_work=cap("prior_tasks", prior_work, limits.prior_tasks),
        blocking_questions=tuple(blocking),
        code_references=cap("code_refs", code_refs, limits.code_refs),
        related_tasks=cap("related_tasks", related, limits.related_tasks),
        recent_tasks=candidates.recent_tasks if working_memory else (),
        active_blockers=candidates.active_blockers if working_memory else (),
        _computed=meta,
    )
    # `dropped` was filled while building the context; store the final counts.
    return context.model_copy(update={"computed": meta.model_copy(update={"dropped_by_limits": dict(dropped)})})
