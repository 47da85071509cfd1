"""The computed-context pipeline: candidates in, a limited context out. Pure.

Phases (docs/concepts.md): 2 — knowledge by keyword tags and domain tags,
merged, deduplicated, categorized and sorted by relevance; 3 — dependency
context from completed dependencies only; 4 — the context map, ranked by the
history or by its own scores; then the complexity tiers; plus the working
memory (the last finished tasks, the active blockers).

The output models live in :mod:`ctxgraph.compute.output`, tag relevance and the
context-map filter in :mod:`ctxgraph.compute.relevance`, and how each kind of
candidate becomes a block in :mod:`ctxgraph.compute.blocks`; this module runs
them (collect, cap, fit, assemble, render).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from ctxgraph.compute.blocks import (
    code_block,
    decision_block,
    pattern_block,
    prior_block,
    question_block,
    related_block,
    snippet_block,
    warning_block,
)
from ctxgraph.compute.budget import Block, BudgetExceededError, fit_budget, score_blocks
from ctxgraph.compute.code_memory import fuse, memory_found
from ctxgraph.compute.compress import Policy
from ctxgraph.compute.concurrent import concurrent_work, expected_files
from ctxgraph.compute.config import SCOPE_ORDER, ContextConfig
from ctxgraph.compute.conflicts import likely_conflicts
from ctxgraph.compute.freshness import FileCheck, Freshness
from ctxgraph.compute.limits import CONTEXT_MAP_TOP, Limits
from ctxgraph.compute.output import (
    CodeRef,
    ComputedContext,
    ComputedMeta,
    DecisionConflict,
    DecisionRef,
    ExplainEntry,
)
from ctxgraph.compute.ranking import rank_files
from ctxgraph.compute.relevance import (
    DEPENDENCY_BONUS,
    filter_context_map,
    merge_hits,
    rarity_weights,
    tag_relevance,
)
from ctxgraph.compute.render import render
from ctxgraph.core.models import Candidates, KnowledgeItem, Severity, Task, TaskStatus, infer_component, split_location
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.signals import TaskSignals

__all__ = ["MEMORY_FILES_TOP", "apply_caps", "assemble", "collect_blocks", "compute_context"]

#: The leading files whose code notes a context may show (:func:`_off_files`).
NOTE_FILES_TOP = 5
#: Files named (snippets and code references) when the associative memory ranks them.
MEMORY_FILES_TOP = 9


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
    files: FileCheck | None = None,
) -> tuple[list[Block], ComputedMeta]:
    """Phases 2-4 as blocks with their score parts; filtered ones arrive dropped.
    ``files``: asked which candidate files are gone from the work tree (only
    those that may be shown; :class:`compute.freshness.FileCheck`)."""
    config = config or ContextConfig()
    blocks: list[Block] = []
    kw, dom = frozenset(signals.keywords), frozenset(signals.domains)
    wanted = kw | dom
    weights = rarity_weights(candidates)
    fresh = Freshness(candidates.anchors, files=files)
    moved_files = fresh.files

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

    def freshened(k: KnowledgeItem, rel: float) -> tuple[KnowledgeItem, float, str, dict[str, Any]]:
        """The item as its code anchors have it now (compute.freshness): the
        location to show, the relevance, why it is retired, its marker."""
        if not fresh:
            return k, rel, "", {}
        retired, location, stale, factor = fresh.item(k.id, k.location)
        if location != k.location:
            k = k.model_copy(update={"location": location})
        return k, rel * factor, retired, ({"stale": stale} if stale else {})

    seen: set[str] = set()
    inherited_patterns = inherited_warnings = 0
    for dep in completed:
        add(prior_block(dep, fresh))
        for k in dep.knowledge:
            k, rel, retired, stale = freshened(k, DEPENDENCY_BONUS + tag_relevance(k.tags, kw, dom, weights))
            common: dict[str, Any] = dict(id=k.id, kind=k.kind, scope="task", source="memory",
                                          policy=Policy.SUMMARIZABLE, relevance=rel,
                                          tag_matches=tuple(t for t in k.tags if t in wanted),
                                          importance=k.importance, updated_at=k.updated_at)
            if k.id in seen:
                continue
            seen.add(k.id)
            if k.kind == "pattern":
                inherited_patterns += 1
                add(pattern_block(k, rel, common, from_task=dep.task.id, **stale), knowledge_reason(k) or retired)
            elif k.kind == "gotcha":
                low = k.severity is Severity.LOW
                inherited_warnings += 0 if low else 1
                add(warning_block(k, rel, common, from_task=dep.task.id),
                    "filtered" if low else knowledge_reason(k) or retired)
            elif k.kind == "decision":
                add(decision_block(k, rel, common, from_task=dep.task.id), knowledge_reason(k) or retired)
            elif k.kind == "open_question":
                add(question_block(k, common, dep.task.id), "" if k.blocking else "filtered")

    # Phase 2: knowledge by tags (what a dependency already brought, or filtered, stays as it was).
    merged = merge_hits(candidates.keyword_hits, candidates.domain_hits, signals, weights)
    path_notes: list[tuple[Block, str]] = []
    counts = {"pattern": 0, "gotcha": 0, "decision": 0}
    for k, rel in merged:
        if k.kind in counts and not (k.kind == "decision" and k.status == "superseded"):
            counts[k.kind] += 1
        if k.id in seen:
            continue
        seen.add(k.id)
        k, rel, retired, stale = freshened(k, rel)
        common = dict(id=k.id, kind=k.kind, scope=k.scope, source="memory", policy=Policy.SUMMARIZABLE,
                      relevance=rel, tag_matches=tuple(t for t in k.tags if t in wanted),
                      importance=k.importance, updated_at=k.updated_at)
        reason = knowledge_reason(k) or retired
        if k.kind == "gotcha":
            add(warning_block(k, rel, common), reason)
            if k.scope == "path" and k.location and not reason:
                path_notes.append((blocks[-1], split_location(k.location)[0]))
        elif k.kind == "decision":
            add(decision_block(k, rel, common), reason)
        elif k.kind == "open_question":
            continue  # open questions come from dependencies only (only a dependency's question blocks)
        else:  # patterns and the kinds added by hand (adr, plan, module_memory, changelog)
            add(pattern_block(k, rel, common, **stale), reason)

    # Phase 4: context map — ranked with the history's evidence when there is
    # some, else by the context map's own scores alone.
    from_history = candidates.history is not None and bool(candidates.history.files)
    refs: Iterable[CodeRef]
    if candidates.history is not None and candidates.history.files:
        ranked = rank_files(candidates.history, signals, config.ranking)
        # without memory to fuse with, only the first CONTEXT_MAP_TOP are shown
        # (made as walked: the walk below stops there)
        refs = (
            CodeRef(file=entry.location, component=entry.component, notes=entry.notes, relevance=score,
                    seed_score=int(parts["seed"]))
            for entry, score, parts in (ranked if candidates.memory is not None or moved_files
                                        else ranked[:CONTEXT_MAP_TOP])
        )
    else:
        refs = filter_context_map(candidates.context_map, signals)
    retired_refs: list[tuple[CodeRef, str]] = []
    if moved_files:  # files deleted left out, renamed ones at their new path (compute.freshness), before any cut
        live: dict[str, CodeRef] = {}
        for ref_ in refs:
            if candidates.memory is None and len(live) >= CONTEXT_MAP_TOP:
                break  # the rest is cut below (and none of it explained): its files are not asked about
            gone, location = fresh.code_file(ref_.file)
            if gone and len(live) < CONTEXT_MAP_TOP:  # explained where it would have been shown
                retired_refs.append((ref_, gone))
            elif not gone and location not in live:
                live[location] = ref_ if location == ref_.file else ref_.model_copy(update={"file": location})
        code_refs = list(live.values())
    else:
        code_refs = list(refs)
    memory_note = ""
    snippet_files: list[str] = []
    if candidates.memory is not None:
        # Associative memory: files fused with the graph's ranking; the best
        # chunks shown as snippets, their files not repeated below.
        # (the files the history backs keep their places: compute.code_memory.kept)
        nearest = candidates.history.neighbours if candidates.history is not None else ()
        fusion = fuse([r.file for r in code_refs], candidates.memory, config,
                      [r.relevance for r in code_refs] if from_history else None,
                      max((n.score for n in nearest), default=None))
        known = {r.file: r for r in code_refs}
        shown = {s.path for s in fusion.snippets}
        snippet_files = list(dict.fromkeys(s.path for s in fusion.snippets))
        code_refs = [
            (known.get(path) or CodeRef(file=path, component=infer_component(path), notes=memory_found(found),
                                        relevance=0.0)).model_copy(update={"relevance": round(fused * 1000, 4)})
            for path, fused, found in fusion.files if path not in shown
        ]
        for n, snip in enumerate(fusion.snippets):
            add(snippet_block(snip, round(snip.score * 1000, 4) + (len(fusion.snippets) - n) * 1e-6))
        memory_note = (f"project {candidates.memory.project}: {len(candidates.memory.by_vector)} vector and "
                       f"{len(candidates.memory.by_text)} full-text matches, {len(fusion.snippets)} snippets, "
                       f"{sum(1 for f in fusion.files if 'graph' not in f[2])} files added by memory")
        # A file shown as a snippet takes the place of a code reference.
        code_refs = code_refs[:max(0, MEMORY_FILES_TOP - len(fusion.snippets))]
    code_refs = code_refs[:CONTEXT_MAP_TOP]
    _off_files(path_notes, [*snippet_files, *(r.file for r in code_refs)])
    for ref_ in code_refs:
        add(code_block(ref_))
    for ref_, gone in retired_refs:
        add(code_block(ref_), gone)

    dep_ids = {d.task.id for d in candidates.dependencies}
    for h in candidates.related:
        if h.task.id == task.id or h.task.id in dep_ids:
            continue
        # Related tasks keep the plain tag count: the store's rarity order already
        # chose the candidates, and re-ranking them by rarity too named longer
        # tasks in `ctxgraph eval` (werkzeug +1 token a context, recall the same).
        rel = tag_relevance(h.matched_tags, kw, dom, {})
        add(related_block(h, rel))

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


def _off_files(notes: Sequence[tuple[Block, str]], files: Sequence[str]) -> None:
    """A gotcha about one file (scope ``path``: a code note) found by its tags
    is shown only when its file is among the :data:`NOTE_FILES_TOP` files the
    context puts first (its snippets, then its code references): it is about
    that file, and shown for another it would name a file the ranking did not
    choose, ahead of those it did. A context that names no file keeps them:
    they displace nothing there."""
    leading = frozenset(files[:NOTE_FILES_TOP])
    if not leading:
        return
    for block, path in notes:
        if path not in leading:
            block.drop("off-files")


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
    decisions, snippets, refs = items("decisions"), items("codebase_context"), items("code_references")
    own = expected_files(meta.signals.files_mentioned, [*(s.path for s in snippets), *(r.file for r in refs)])
    return ComputedContext(
        task_id=task.id,
        patterns_to_follow=items("patterns"), warnings=items("warnings"),
        relevant_decisions=decisions, prior_work=items("prior_work"),
        blocking_questions=items("blocking_questions"), code_references=refs,
        codebase_context=snippets,
        related_tasks=items("related_tasks"),
        decision_conflicts=_conflicts_shown(decisions, candidates),
        concurrent_work=concurrent_work(own, candidates.concurrent),
        recent_tasks=candidates.recent_tasks if wm else (),
        active_blockers=candidates.active_blockers if wm else (),
        _computed=meta,
    )


def _conflicts_shown(decisions: Sequence[DecisionRef], candidates: Candidates) -> tuple[DecisionConflict, ...]:
    """The likely conflicts (``compute.conflicts``) among the decisions a context shows."""
    if len(decisions) < 2:
        return ()
    known = {k.id: k for k in (*(h.item for h in (*candidates.keyword_hits, *candidates.domain_hits)),
                               *(k for d in candidates.dependencies for k in d.knowledge))}
    shown = [known[d.id] for d in decisions if d.id in known]
    return tuple(DecisionConflict(first_id=c.first_id, first=c.first, second_id=c.second_id, second=c.second,
                                  shared_tags=c.shared_tags) for c in likely_conflicts(shown))


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
    files: FileCheck | None = None,
) -> ComputedContext:
    """Phases 2-5, the tiers and the budget over what the store returned; rendered.
    ``files``: the work tree's candidate files, asked about as they may be shown
    (the service's just-in-time check; none: every file is taken as there).

    The rendered Markdown never exceeds the budget: after the limiter has
    decided, the Markdown is measured and, should the estimate of the whole
    exceed the sum of its parts, the lowest-ranked kept blocks are dropped
    until it fits.
    """
    config = config or ContextConfig()
    now = now or datetime.now(UTC)
    blocks, meta = collect_blocks(task, signals, candidates, config, files)
    score_blocks(blocks, config, now)
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
    result = fit_budget([b for b in blocks if b.policy is not Policy.EXACT], budget=budget,
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
