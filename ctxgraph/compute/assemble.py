"""The context made of the blocks the limiter kept: each at its level, in
rank order per section, with the likely conflicts among the decisions shown,
the concurrent work on its files and the working memory. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxgraph.compute.budget import Block
from ctxgraph.compute.compress import Policy
from ctxgraph.compute.concurrent import concurrent_work, expected_files
from ctxgraph.compute.conflicts import likely_conflicts
from ctxgraph.compute.output import ComputedContext, ComputedMeta, DecisionConflict, DecisionRef
from ctxgraph.core.models import Blocker, Candidates, RecentTask, Task


def working_memory(task: Task, candidates: Candidates) -> tuple[tuple[RecentTask, ...], tuple[Blocker, ...]]:
    """The last finished tasks and the active blockers, for a task that asks
    for them (``requires_context``); shown as the store returned them."""
    if not task.requires_context:
        return (), ()
    return candidates.recent_tasks, candidates.active_blockers


def assemble(task: Task, blocks: Sequence[Block], candidates: Candidates, meta: ComputedMeta,
             *, exact_only: bool = False) -> ComputedContext:
    """The context made of the kept blocks, at their levels, in rank order per section."""
    def items(section: str) -> tuple[Any, ...]:
        chosen = [b for b in blocks if b.section == section and b.fate != "dropped"
                  and (not exact_only or b.policy is Policy.EXACT)]
        chosen.sort(key=Block.rank_key)
        return tuple(b.render(b.level) for b in chosen)

    recent, blockers = working_memory(task, candidates)
    decisions, snippets, refs = items("decisions"), items("codebase_context"), items("code_references")
    own = expected_files(meta.signals.files_mentioned, [*(s.path for s in snippets), *(r.file for r in refs)])
    return ComputedContext(
        task_id=task.id,
        patterns_to_follow=items("patterns"), warnings=items("warnings"),
        relevant_decisions=decisions, prior_work=items("prior_work"),
        blocking_questions=items("blocking_questions"), code_references=refs,
        codebase_context=snippets,
        related_tasks=items("related_tasks"),
        decision_conflicts=conflicts_shown(decisions, candidates),
        concurrent_work=concurrent_work(own, candidates.concurrent),
        recent_tasks=recent, active_blockers=blockers,
        _computed=meta,
    )


def conflicts_shown(decisions: Sequence[DecisionRef], candidates: Candidates) -> tuple[DecisionConflict, ...]:
    """The likely conflicts (``compute.conflicts``) among the decisions a context shows."""
    if len(decisions) < 2:
        return ()
    known = {k.id: k for k in (*(h.item for h in (*candidates.keyword_hits, *candidates.domain_hits)),
                               *(k for d in candidates.dependencies for k in d.knowledge))}
    shown = [known[d.id] for d in decisions if d.id in known]
    return tuple(DecisionConflict(first_id=c.first_id, first=c.first, second_id=c.second_id, second=c.second,
                                  shared_tags=c.shared_tags) for c in likely_conflicts(shown))


__all__ = ["assemble", "conflicts_shown", "working_memory"]
