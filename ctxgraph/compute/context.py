"""The computed-context pipeline: candidates in, a limited context out. Pure.

Phases (seed 003): 2 — knowledge by keyword tags and domain tags, merged,
deduplicated, categorized and sorted by relevance; 3 — dependency context from
completed dependencies only; 4 — context-map filter with the seed's scores;
then the complexity tiers; plus the working memory of seed 004.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ctxgraph.compute.budget import Block, BudgetExceededError, fit, score
from ctxgraph.compute.compress import Level, Policy, first_sentence
from ctxgraph.compute.config import SCOPE_ORDER, ContextConfig
from ctxgraph.compute.limits import CONTEXT_MAP_TOP, Limits
from ctxgraph.compute.memory import Snippet, excerpt, fuse
from ctxgraph.compute.ranking import rank_files
from ctxgraph.compute.render import render
from ctxgraph.compute.seed import score_file
from ctxgraph.core.rarity import tag_weights
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.graph.models import (
    Blocker,
    Candidates,
    FileEntry,
    KnowledgeHit,
    KnowledgeItem,
    RecentTask,
    Severity,
    Task,
    TaskStatus,
)
from ctxgraph.signals import TaskSignals

_OUT = ConfigDict(frozen=True, extra="forbid")

#: Weight of one matched keyword tag and one matched domain tag.
KEYWORD_WEIGHT = 1.0
DOMAIN_WEIGHT = 0.5
#: Added to the tag relevance of knowledge a task's own dependencies discovered.
DEPENDENCY_BONUS = 2.0
#: Digits a tag relevance is rounded to (the rarity weights make it a real number).
RELEVANCE_DIGITS = 4
#: Files named (snippets and code references) when the associative memory ranks them.
MEMORY_FILES_TOP = 9

_SEVERITY_RANK = {Severity.CRITICAL: 0, Severity.HIGH: 1, Severity.MEDIUM: 2, Severity.LOW: 3}


# ----------------------------------------------------------------- output models


class PatternRef(BaseModel):
    model_config = _OUT
    level: str = "full"
    id: str
    pattern: str
    location: str | None = None
    relevance: float
    from_task: str | None = None


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


class FileRef(BaseModel):
    model_config = _OUT
    file: str
    reason: str = ""


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
    budget: int = 0
    strategy: str = "balanced"
    frame_tokens: int = 0
    scope_used: dict[str, int] = Field(default_factory=dict)
    scope_allowed: dict[str, int] = Field(default_factory=dict)
    dropped_by_budget: int = 0
    compressed: int = 0
    #: what the associative memory contributed (empty when it was not used)
    memory: str = ""


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


class ComputedContext(BaseModel):
    """What a task is given: the sections of the seed's template and metadata."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    task_id: str
    patterns_to_follow: tuple[PatternRef, ...] = ()
    warnings: tuple[WarningRef, ...] = ()
    relevant_decisions: tuple[DecisionRef, ...] = ()
    prior_work: tuple[PriorWork, ...] = ()
    blocking_questions: tuple[BlockingQuestion, ...] = ()
    codebase_context: tuple[Snippet, ...] = ()
    code_references: tuple[CodeRef, ...] = ()
    related_tasks: tuple[RelatedTask, ...] = ()
    recent_tasks: tuple[RecentTask, ...] = ()
    active_blockers: tuple[Blocker, ...] = ()
    computed: ComputedMeta = Field(alias="_computed", serialization_alias="_computed")
    markdown: str = ""
    tokens: int = 0
    budget: int = 0
    explain: tuple[ExplainEntry, ...] | None = None


# ------------------------------------------------------------------------ phases


def relevance(matched: Sequence[str], signals: TaskSignals, weights: Mapping[str, float] | None = None) -> float:
    """Keyword tags count 1, domain tags 0.5 (a tag that is both counts once, as a
    keyword), each times its rarity weight (``weights``; 1 for a tag without one)."""
    return _relevance(matched, frozenset(signals.keywords), frozenset(signals.domains), weights or {})


def _relevance(
    matched: Iterable[str], keywords: frozenset[str], domains: frozenset[str], weights: Mapping[str, float]
) -> float:
    score = 0.0
    for tag in matched:
        if tag in keywords:
            score += KEYWORD_WEIGHT * weights.get(tag, 1.0)
        elif tag in domains:
            score += DOMAIN_WEIGHT * weights.get(tag, 1.0)
    return round(score, RELEVANCE_DIGITS)


def rarity_weights(candidates: Candidates) -> dict[str, float]:
    """The query tags' rarity weights from the degrees the store returned (finding 3
    of benchmarks/README.md): two rare matched tags outrank several common ones."""
    return tag_weights(candidates.tag_df, candidates.tagged_total)


def merge_hits(
    keyword_hits: Sequence[KnowledgeHit], domain_hits: Sequence[KnowledgeHit], signals: TaskSignals,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[KnowledgeItem, float]]:
    """Phase 2: merge both queries, dedupe by id, sort by relevance (then recency, id)."""
    merged: dict[str, tuple[KnowledgeItem, set[str]]] = {}
    for hit in [*keyword_hits, *domain_hits]:
        if hit.item.id in merged:
            merged[hit.item.id][1].update(hit.matched_tags)
        else:
            merged[hit.item.id] = (hit.item, set(hit.matched_tags))
    kw, dom = frozenset(signals.keywords), frozenset(signals.domains)
    scored = [(item, _relevance(tags, kw, dom, weights or {})) for item, tags in merged.values()]
    scored.sort(key=lambda pair: pair[0].id)
    scored.sort(key=lambda pair: pair[0].updated_at or "", reverse=True)
    scored.sort(key=lambda pair: pair[1], reverse=True)
    return scored


def filter_context_map(entries: Sequence[FileEntry], signals: TaskSignals) -> list[CodeRef]:
    """Phase 4: entries with a positive score, highest first (path breaks ties), top 10."""
    refs = [
        CodeRef(file=e.location, component=e.component, notes=e.notes, relevance=s, seed_score=s)
        for e in entries
        if (s := score_file(e, signals)) > 0
    ]
    refs.sort(key=lambda r: (-r.relevance, r.file))
    return refs[:CONTEXT_MAP_TOP]




# --------------------------------------------------------------- level renders

M = TypeVar("M", bound=BaseModel)


def _once(model: type[M], **fields: Any) -> Callable[[], M]:
    """A factory that builds ``model(**fields)`` on first call and then reuses it."""
    built: list[M] = []

    def make() -> M:
        if not built:
            built.append(model(**fields))
        return built[0]
    return make



def _short(text: str, level: Level) -> str:
    if level is Level.SUMMARY:
        return first_sentence(text, 160)
    if level is Level.REFERENCE:
        return first_sentence(text, 60)
    return text


def _pattern(make: Callable[[], PatternRef]) -> Callable[[Level], PatternRef]:
    """The item at each level; built on first use (most candidates are never shown)."""
    def at(level: Level) -> PatternRef:
        ref = make()
        if level is Level.FULL:
            return ref
        keep_loc = level is Level.SUMMARY
        return ref.model_copy(update={"pattern": _short(ref.pattern, level), "level": level.value,
                                      "location": ref.location if keep_loc else None})
    return at


def _warning(make: Callable[[], WarningRef]) -> Callable[[Level], WarningRef]:
    """The item at each level; built on first use (most candidates are never shown)."""
    def at(level: Level) -> WarningRef:
        ref = make()
        if level is Level.FULL:
            return ref
        return ref.model_copy(update={"issue": _short(ref.issue, level), "level": level.value})
    return at


def _decision(make: Callable[[], DecisionRef]) -> Callable[[Level], DecisionRef]:
    """The item at each level; built on first use (most candidates are never shown)."""
    def at(level: Level) -> DecisionRef:
        ref = make()
        if level is Level.FULL:
            return ref
        rationale = first_sentence(ref.rationale, 100) if ref.rationale and level is Level.SUMMARY else None
        return ref.model_copy(update={"decision": _short(ref.decision, level), "rationale": rationale,
                                      "level": level.value})
    return at


def _prior(work: PriorWork) -> Callable[[Level], PriorWork]:
    def at(level: Level) -> PriorWork:
        if level is Level.FULL:
            return work
        if level is Level.SUMMARY:
            files = tuple(FileRef(file=f.file) for f in work.files_created)
            return work.model_copy(update={"summary": first_sentence(work.summary, 160),
                                           "files_created": files, "level": level.value})
        return work.model_copy(update={"summary": "", "files_created": (), "level": level.value})
    return at


def _code(ref: CodeRef) -> Callable[[Level], CodeRef]:
    def at(level: Level) -> CodeRef:
        if level is Level.FULL:
            return ref
        notes = first_sentence(ref.notes, 80) if level is Level.SUMMARY else ""
        return ref.model_copy(update={"notes": notes, "level": level.value})
    return at


def _snippet(snip: Snippet) -> Callable[[Level], Snippet]:
    def at(level: Level) -> Snippet:
        if level is Level.FULL:
            return snip
        text = excerpt(snip.text, 80).split("\n", 1)[0] if level is Level.SUMMARY else ""
        return snip.model_copy(update={"text": text, "level": level.value})
    return at


def _related(ref: RelatedTask) -> Callable[[Level], RelatedTask]:
    def at(level: Level) -> RelatedTask:
        if level is Level.FULL:
            return ref
        return ref.model_copy(update={"intent": _short(ref.intent, level), "level": level.value})
    return at


def _same(item: BlockingQuestion) -> Callable[[Level], BlockingQuestion]:
    return lambda level: item


# Markdown fragments for token estimates (the rendered template is measured at the end).

def _frag_pattern(p: PatternRef) -> str:
    return f"- **{p.pattern}** (see: `{p.location}`) — from {p.from_task}\n"


def _frag_warning(w: WarningRef) -> str:
    return f"- ⚠️ **{w.severity.value}**: {w.issue} — from {w.from_task}\n"


def _frag_decision(d: DecisionRef) -> str:
    return f"- {d.decision} — {d.rationale} (from {d.from_task})\n"


def _frag_prior(w: PriorWork) -> str:
    files = "".join(f"- `{f.file}`: {f.reason}\n" for f in w.files_created)
    head = "\n**Files Created:**\n" if files else ""
    return f"\n#### {w.task} ({w.task_id})\n{w.summary}\n{head}{files}"


def _frag_code(r: CodeRef) -> str:
    return f"| `{r.file}` | {r.component} | {r.notes} |\n"


def _frag_snippet(s: Snippet) -> str:
    body = "".join(f"   `{line}`\n" for line in s.text.splitlines())
    return f"1. `{s.path}` lines {s.start_line}-{s.end_line} (similarity 0.00)\n{body}"


def _frag_related(r: RelatedTask) -> str:
    return f"- {r.id}: {r.intent}\n"


def _frag_question(q: BlockingQuestion) -> str:
    return f"- **{q.question}** ({q.from_task})\n  - Context: {q.context}\n  - Recommendation: {q.recommendation}\n"


# ------------------------------------------------------------------ the pipeline


def _chain_winners(items: Sequence[KnowledgeItem]) -> dict[str, str]:
    """chain_id -> the id of its latest version."""
    best: dict[str, KnowledgeItem] = {}
    for item in items:
        if item.chain_id is None:
            continue
        cur = best.get(item.chain_id)
        if cur is None or (item.version, item.updated_at or "") > (cur.version, cur.updated_at or ""):
            best[item.chain_id] = item
    return {chain: item.id for chain, item in best.items()}


def collect_blocks(
    task: Task, signals: TaskSignals, candidates: Candidates, config: ContextConfig | None = None,
) -> tuple[list[Block], ComputedMeta]:
    """Phases 2-4 as blocks with their score parts; filtered ones arrive dropped."""
    config = config or ContextConfig()
    blocks: list[Block] = []
    kw, dom = frozenset(signals.keywords), frozenset(signals.domains)
    wanted = kw | dom
    weights = rarity_weights(candidates)

    def add(block: Block, reason: str = "") -> None:
        if reason:
            block.drop(reason)
        blocks.append(block)

    # Phase 3: dependency context, completed dependencies only.
    completed = [d for d in candidates.dependencies if d.task.status is TaskStatus.COMPLETED]
    skipped = tuple(d.task.id for d in candidates.dependencies if d.task.status is not TaskStatus.COMPLETED)
    all_knowledge = [k for d in completed for k in d.knowledge] + [
        h.item for h in (*candidates.keyword_hits, *candidates.domain_hits)]
    winners = _chain_winners(all_knowledge)

    def knowledge_reason(k: KnowledgeItem) -> str:
        if k.chain_id is not None and winners.get(k.chain_id) != k.id:
            return "chain"
        if k.kind == "decision" and k.status == "superseded":
            return "superseded"
        return ""

    seen: set[str] = set()
    inherited_patterns = inherited_warnings = 0
    for dep in completed:
        files = dep.files_to_read or dep.files_created
        work = PriorWork(task_id=dep.task.id, task=dep.task.intent,
                         summary=dep.summary or dep.task.outcome_summary or "",
                         files_created=tuple(FileRef(file=f.file, reason=f.reason) for f in files))
        add(Block(id=f"prior:{dep.task.id}", section="prior_work", kind="dependency", scope="task",
                  source="task", policy=Policy.SUMMARIZABLE, relevance=DEPENDENCY_BONUS,
                  tag_matches=(), importance=1.0, updated_at=dep.task.completed_at,
                  render=_prior(work), fragment=_frag_prior))
        for k in dep.knowledge:
            rel = DEPENDENCY_BONUS + _relevance(k.tags, kw, dom, weights)
            common: dict[str, Any] = dict(id=k.id, kind=k.kind, scope="task", source="memory",
                                          policy=Policy.SUMMARIZABLE, relevance=rel,
                                          tag_matches=tuple(t for t in k.tags if t in wanted),
                                          importance=k.importance, updated_at=k.updated_at)
            if k.id in seen:
                continue
            seen.add(k.id)
            if k.kind == "pattern":
                inherited_patterns += 1
                make_p = _once(PatternRef, id=k.id, pattern=k.summary, location=k.location, relevance=rel,
                               from_task=dep.task.id)
                add(Block(section="patterns", render=_pattern(make_p), fragment=_frag_pattern, **common),
                    knowledge_reason(k))
            elif k.kind == "gotcha":
                make_w = _once(WarningRef, id=k.id, issue=k.summary, severity=k.severity or Severity.MEDIUM,
                               relevance=rel, from_task=dep.task.id)
                low = k.severity is Severity.LOW
                inherited_warnings += 0 if low else 1
                add(Block(section="warnings", render=_warning(make_w), fragment=_frag_warning, **common),
                    "filtered" if low else knowledge_reason(k))
            elif k.kind == "decision":
                make_d = _once(DecisionRef, id=k.id, decision=k.summary, rationale=k.rationale, relevance=rel,
                               from_task=dep.task.id)
                add(Block(section="decisions", render=_decision(make_d), fragment=_frag_decision, **common),
                    knowledge_reason(k))
            elif k.kind == "open_question":
                q = BlockingQuestion(id=k.id, question=k.summary, context=k.context,
                                     recommendation=k.recommendation, from_task=dep.task.id)
                add(Block(section="blocking_questions", render=_same(q), fragment=_frag_question,
                          **{**common, "policy": Policy.EXACT, "source": "task"}),
                    "" if k.blocking else "filtered")

    # Phase 2: knowledge by tags (what a dependency already brought, or filtered, stays as it was).
    merged = merge_hits(candidates.keyword_hits, candidates.domain_hits, signals, weights)
    counts = {"pattern": 0, "gotcha": 0, "decision": 0}
    for k, rel in merged:
        if k.kind in counts and not (k.kind == "decision" and k.status == "superseded"):
            counts[k.kind] += 1
        if k.id in seen:
            continue
        seen.add(k.id)
        common = dict(id=k.id, kind=k.kind, scope=k.scope, source="memory", policy=Policy.SUMMARIZABLE,
                      relevance=rel, tag_matches=tuple(t for t in k.tags if t in wanted),
                      importance=k.importance, updated_at=k.updated_at)
        reason = knowledge_reason(k)
        if k.kind == "gotcha":
            make_w = _once(WarningRef, id=k.id, issue=k.summary, severity=k.severity or Severity.MEDIUM,
                           relevance=rel)
            add(Block(section="warnings", render=_warning(make_w), fragment=_frag_warning, **common), reason)
        elif k.kind == "decision":
            make_d = _once(DecisionRef, id=k.id, decision=k.summary, rationale=k.rationale, relevance=rel)
            add(Block(section="decisions", render=_decision(make_d), fragment=_frag_decision, **common), reason)
        elif k.kind == "open_question":
            continue  # open questions come from dependencies only (the seed's blocking filter)
        else:  # patterns and the ADR 007 kinds (adr, plan, module_memory, changelog)
            make_p = _once(PatternRef, id=k.id, pattern=k.summary, location=k.location, relevance=rel)
            add(Block(section="patterns", render=_pattern(make_p), fragment=_frag_pattern, **common), reason)

    # Phase 4: context map — ranked with the history's evidence when there is
    # some, else by the seed's scores alone.
    if candidates.history is not None and candidates.history.files:
        code_refs = [
            CodeRef(file=entry.location, component=entry.component, notes=entry.notes, relevance=score,
                    seed_score=int(parts["seed"]))
            for entry, score, parts in rank_files(candidates.history, signals)
        ]
    else:
        code_refs = filter_context_map(candidates.context_map, signals)
    memory_note = ""
    if candidates.memory is not None:
        # Associative memory: files fused with the graph's ranking; the best
        # chunks shown as snippets, their files not repeated below.
        fusion = fuse([r.file for r in code_refs], candidates.memory, config)
        known = {r.file: r for r in code_refs}
        shown = {s.path for s in fusion.snippets}
        code_refs = [
            (known.get(path) or CodeRef(file=path, component="", notes="", relevance=0.0)).model_copy(
                update={"relevance": round(fused * 1000, 4)})
            for path, fused, _ in fusion.files if path not in shown
        ]
        for n, snip in enumerate(fusion.snippets):
            add(Block(id=f"chunk:{snip.path}:{snip.start_line}", section="codebase_context", kind="code_snippet",
                      scope="path", source="code", policy=Policy.SUMMARIZABLE,
                      relevance=round(snip.score * 1000, 4) + (len(fusion.snippets) - n) * 1e-6, tag_matches=(),
                      importance=0.5, updated_at=None, render=_snippet(snip), fragment=_frag_snippet))
        memory_note = (f"project {candidates.memory.project}: {len(candidates.memory.by_vector)} vector and "
                       f"{len(candidates.memory.by_text)} full-text matches, {len(fusion.snippets)} snippets, "
                       f"{sum(1 for f in fusion.files if 'graph' not in f[2])} files added by memory")
        # A file shown as a snippet takes the place of a code reference.
        code_refs = code_refs[:max(0, MEMORY_FILES_TOP - len(fusion.snippets))]
    code_refs = code_refs[:CONTEXT_MAP_TOP]
    for ref_ in code_refs:
        add(Block(id=f"file:{ref_.file}", section="code_references", kind="code_reference", scope="path",
                  source="code", policy=Policy.SUMMARIZABLE, relevance=float(ref_.relevance), tag_matches=(),
                  importance=0.5, updated_at=None, render=_code(ref_), fragment=_frag_code))

    dep_ids = {d.task.id for d in candidates.dependencies}
    for h in candidates.related:
        if h.task.id == task.id or h.task.id in dep_ids:
            continue
        # Related tasks keep the plain tag count: the store's rarity order already
        # chose the candidates, and re-ranking them by rarity too named longer
        # tasks in `ctxgraph eval` (werkzeug +1 token a context, recall the same).
        rel = _relevance(h.matched_tags, kw, dom, {})
        rt = RelatedTask(id=h.task.id, intent=h.task.intent, summary=h.task.outcome_summary, relevance=rel)
        add(Block(id=f"task:{h.task.id}", section="related_tasks", kind="related_task", scope="task",
                  source="docs", policy=Policy.SUMMARIZABLE, relevance=rel, tag_matches=h.matched_tags,
                  importance=0.5, updated_at=h.task.completed_at, render=_related(rt), fragment=_frag_related))

    meta = ComputedMeta(
        signals=signals, complexity="normal",
        knowledge_nodes_matched=sum(counts.values()),
        dependency_count=len(completed), context_map_filtered=len(code_refs),
        keyword_hits=len(candidates.keyword_hits), domain_hits=len(candidates.domain_hits),
        patterns_found=counts["pattern"], gotchas_found=counts["gotcha"], decisions_found=counts["decision"],
        dependency_ids=tuple(d.task.id for d in candidates.dependencies), dependencies_skipped=skipped,
        patterns_inherited=inherited_patterns, warnings_inherited=inherited_warnings,
        context_map_total=candidates.context_map_total, context_map_candidates=len(candidates.context_map),
        top_relevance_score=max((r.seed_score for r in code_refs), default=0),
        working_memory=task.requires_context, notes=candidates.notes,
        memory="; ".join(x for x in (memory_note, *candidates.memory_notes) if x),
    )
    return blocks, meta


_SECTION_CAPS = {
    "patterns": "patterns", "warnings": "gotchas", "decisions": "decisions", "prior_work": "prior_tasks",
    "code_references": "code_refs", "related_tasks": "related_tasks",
}


def apply_caps(blocks: Sequence[Block], limits: Limits) -> dict[str, int]:
    """The complexity tier: per section, the best-ranked items up to the cap."""
    dropped: dict[str, int] = {}
    for section, cap_name in _SECTION_CAPS.items():
        cap = getattr(limits, cap_name)
        live = sorted((b for b in blocks if b.section == section and b.fate != "dropped"), key=Block.rank_key)
        for block in live[cap:]:
            block.drop("cap")
        if len(live) > cap:
            dropped[cap_name] = len(live) - cap
    return dropped


def assemble(task: Task, blocks: Sequence[Block], candidates: Candidates, meta: ComputedMeta,
             *, exact_only: bool = False) -> ComputedContext:
    """The context made of the kept blocks, at their levels, in rank order per section."""
    def items(section: str) -> tuple[Any, ...]:
        chosen = [b for b in blocks if b.section == section and b.fate != "dropped"
                  and (not exact_only or b.policy is Policy.EXACT)]
        chosen.sort(key=Block.rank_key)
        return tuple(b.render(b.level) for b in chosen)

    wm = task.requires_context
    return ComputedContext(
        task_id=task.id,
        patterns_to_follow=items("patterns"), warnings=items("warnings"),
        relevant_decisions=items("decisions"), prior_work=items("prior_work"),
        blocking_questions=items("blocking_questions"), code_references=items("code_references"),
        codebase_context=items("codebase_context"),
        related_tasks=items("related_tasks"),
        recent_tasks=candidates.recent_tasks if wm else (),
        active_blockers=candidates.active_blockers if wm else (),
        _computed=meta,
    )


def compute_context(
    task: Task,
    signals: TaskSignals,
    candidates: Candidates,
    limits: Limits,
    *,
    complexity: str,
    config: ContextConfig | None = None,
    now: datetime | None = None,
    debug: bool = False,
    template: str | None = None,
    explain: bool = False,
) -> ComputedContext:
    """Phases 2-5, the tiers and the budget over what the store returned; rendered.

    The rendered Markdown never exceeds the budget: after the limiter has
    decided, the Markdown is measured and, should the estimate of the whole
    exceed the sum of its parts, the lowest-ranked kept blocks are dropped
    until it fits.
    """
    config = config or ContextConfig()
    now = now or datetime.now(UTC)
    blocks, meta = collect_blocks(task, signals, candidates, config)
    score(blocks, config, now)
    dropped_by_cap = apply_caps(blocks, limits)
    budget = config.budget_for(complexity)
    meta = meta.model_copy(update={"complexity": complexity, "dropped_by_limits": dropped_by_cap,
                                   "budget": budget, "strategy": config.strategy})

    frame = assemble(task, blocks, candidates, meta, exact_only=True)
    frame_tokens = estimate_tokens(render(frame, debug=debug, template=template))
    exact = [b for b in blocks if b.fate != "dropped" and b.policy is Policy.EXACT]
    names = [f"{b.section} {b.id}" for b in exact]
    if candidates.recent_tasks or candidates.active_blockers:
        names.insert(0, "working memory")
    result = fit([b for b in blocks if b.policy is not Policy.EXACT], budget=budget,
                 frame_tokens=frame_tokens, exact_names=names, config=config)

    def finished() -> ComputedContext:
        used = meta.model_copy(update={
            "frame_tokens": result.frame_tokens, "scope_used": result.scope_used,
            "scope_allowed": result.scope_allowed,
            "dropped_by_budget": sum(1 for b in blocks if b.reason == "budget" and b.fate == "dropped"),
            "compressed": sum(1 for b in blocks if b.fate == "compressed"),
        })
        ctx = assemble(task, blocks, candidates, used)
        markdown = render(ctx, debug=debug, template=template)
        entries = None
        if explain:
            entries = tuple(
                ExplainEntry(id=b.id, section=b.section, kind=b.kind, scope=b.scope, source=b.source,
                             tag_matches=b.tag_matches, relevance=round(b.relevance, 4),
                             type_priority=b.type_priority, strategy_term=round(b.strategy_term, 6),
                             level=b.level.value, tokens=b.cost(b.level), fate=b.fate, reason=b.reason)
                for b in sorted(blocks, key=lambda b: (b.section, b.rank_key()))
            )
        return ctx.model_copy(update={"markdown": markdown, "tokens": estimate_tokens(markdown),
                                      "budget": budget, "explain": entries})

    ctx = finished()
    while ctx.tokens > budget:
        kept = [b for b in blocks if b.fate != "dropped" and b.policy is not Policy.EXACT]
        if not kept:
            raise BudgetExceededError(
                f"the context needs {ctx.tokens} tokens with nothing optional left; the budget is {budget}")
        worst = max(kept, key=lambda b: (SCOPE_ORDER.index(b.scope), b.rank_key()))
        worst.drop("budget")
        ctx = finished()
    return ctx
