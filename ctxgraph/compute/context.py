"""The computed-context pipeline: candidates in, a limited context out. Pure.

The stages, in order (docs/concepts.md):

1. candidates per section, with the features the limiter weighs
   (relevance, tag matches, importance, age): :mod:`ctxgraph.compute.sections`
   — the dependencies (phase 3), the knowledge by tags (phase 2), the code
   (phase 4, ranked by :mod:`ctxgraph.compute.ranking`), the related tasks;
2. scores: :func:`ctxgraph.compute.budget.score_blocks`;
3. caps and budget: :mod:`ctxgraph.compute.caps` (the complexity tiers) and
   :func:`ctxgraph.compute.budget.fit_budget`;
4. render: :mod:`ctxgraph.compute.assemble` and :mod:`ctxgraph.compute.render`,
   measured and trimmed until the Markdown fits (:func:`compute_context`).

Every input is data the service gathered before: the store's candidates,
their code anchors and the work tree's file states (:class:`FileStates`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from ctxgraph.compute.assemble import assemble
from ctxgraph.compute.budget import Block, BudgetExceededError, BudgetFit, fit_budget, score_blocks
from ctxgraph.compute.caps import apply_caps
from ctxgraph.compute.compress import Policy
from ctxgraph.compute.config import SCOPE_ORDER, ContextConfig
from ctxgraph.compute.freshness import FileCheck, Freshness
from ctxgraph.compute.limits import Limits
from ctxgraph.compute.output import ComputedContext, ComputedMeta, ExplainEntry
from ctxgraph.compute.relevance import rarity_weights
from ctxgraph.compute.render import render
from ctxgraph.compute.sections import Collected, Ground, collect
from ctxgraph.core.models import Candidates, Task, TaskStatus
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.signals import TaskSignals

__all__ = ["apply_caps", "assemble", "collect_blocks", "compute_context"]


def collect_blocks(
    task: Task, signals: TaskSignals, candidates: Candidates, config: ContextConfig | None = None,
    files: FileCheck | None = None,
) -> tuple[list[Block], ComputedMeta]:
    """Every section's blocks with their score parts (filtered ones arrive
    dropped) and the context's metadata. ``files``: asked which candidate
    files are gone from the work tree (:class:`compute.freshness.FileCheck`)."""
    config = config or ContextConfig()
    ground = Ground.of(task, signals, candidates, config, Freshness(candidates.anchors, files=files),
                       rarity_weights(candidates))
    found = collect(ground)
    return found.blocks, _meta(ground, found)


def _meta(g: Ground, found: Collected) -> ComputedMeta:
    c, counts = g.candidates, found.counts
    return ComputedMeta(
        signals=g.signals, complexity="normal",
        knowledge_nodes_matched=sum(counts.values()),
        dependency_count=len(g.completed), context_map_filtered=len(found.code_refs),
        keyword_hits=len(c.keyword_hits), domain_hits=len(c.domain_hits),
        patterns_found=counts["pattern"], gotchas_found=counts["gotcha"], decisions_found=counts["decision"],
        dependency_ids=tuple(d.task.id for d in c.dependencies),
        dependencies_skipped=tuple(d.task.id for d in c.dependencies if d.task.status is not TaskStatus.COMPLETED),
        patterns_inherited=found.patterns_inherited, warnings_inherited=found.warnings_inherited,
        context_map_total=c.context_map_total, context_map_candidates=len(c.context_map),
        top_relevance_score=max((r.seed_score for r in found.code_refs), default=0),
        working_memory=g.task.requires_context, notes=c.notes,
        memory="; ".join(x for x in (found.memory_note, *c.memory_notes) if x),
    )


def _explained(blocks: Sequence[Block]) -> tuple[ExplainEntry, ...]:
    return tuple(
        ExplainEntry(id=b.id, section=b.section, kind=b.kind, scope=b.scope, source=b.source,
                     tag_matches=b.tag_matches, relevance=round(b.relevance, 4),
                     type_priority=b.type_priority, strategy_term=round(b.strategy_term, 6),
                     level=b.level.value, tokens=b.cost(b.level), fate=b.fate, reason=b.reason,
                     features=b.features)
        for b in sorted(blocks, key=lambda b: (b.section, b.rank_key()))
    )


def _finished(task: Task, blocks: Sequence[Block], candidates: Candidates, meta: ComputedMeta, fit: BudgetFit,
              budget: int, *, debug: bool, template: str | None, explain: bool) -> ComputedContext:
    """The context of the blocks as they stand, rendered and measured."""
    used = meta.model_copy(update={
        "frame_tokens": fit.frame_tokens, "scope_used": fit.scope_used, "scope_allowed": fit.scope_allowed,
        "dropped_by_budget": sum(1 for b in blocks if b.reason == "budget" and b.fate == "dropped"),
        "compressed": sum(1 for b in blocks if b.fate == "compressed"),
    })
    ctx = assemble(task, blocks, candidates, used)
    markdown = render(ctx, debug=debug, template=template)
    return ctx.model_copy(update={"markdown": markdown, "tokens": estimate_tokens(markdown), "budget": budget,
                                  "explain": _explained(blocks) if explain else None})


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
    """The stages over what the store returned; rendered.
    ``files``: the work tree's candidate files (the service's gathered file
    states; none: every file is taken as there).

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
    names = [f"{b.section} {b.id}" for b in blocks if b.fate != "dropped" and b.policy is Policy.EXACT]
    if candidates.recent_tasks or candidates.active_blockers:
        names.insert(0, "working memory")
    fit = fit_budget([b for b in blocks if b.policy is not Policy.EXACT], budget=budget,
                     frame_tokens=frame_tokens, exact_names=names, config=config)
    ctx = _finished(task, blocks, candidates, meta, fit, budget, debug=debug, template=template, explain=explain)
    while ctx.tokens > budget:
        kept = [b for b in blocks if b.fate != "dropped" and b.policy is not Policy.EXACT]
        if not kept:
            raise BudgetExceededError(
                f"the context needs {ctx.tokens} tokens with nothing optional left; the budget is {budget}")
        worst = max(kept, key=lambda b: (SCOPE_ORDER.index(b.scope), b.rank_key()))
        worst.drop("budget")
        ctx = _finished(task, blocks, candidates, meta, fit, budget, debug=debug, template=template,
                        explain=explain)
    return ctx
