"""What the MCP tools do with a service's contexts beyond ``ContextService``
(knowledge by text is :meth:`ContextService.search_knowledge`): each takes the
service and works through its ``compute`` — no second code path.

- :func:`compute_within`: ``compute`` with the budget lowered until the
  response built from the context fits a size cap (the warning a context
  computed without the store's answer carries is
  :func:`ctxgraph.compute.output.store_warning`, the CLI's too). After the
  server's first context its heap is settled (:mod:`ctxgraph.service.heap`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxgraph import Task
from ctxgraph.compute.budget import BudgetExceededError
from ctxgraph.compute.output import ComputedContext
from ctxgraph.errors import CtxgraphError
from ctxgraph.service import ContextService
from ctxgraph.service.heap import settle

#: Budget lowerings tried before a context that does not fit the cap is refused.
MAX_LOWERINGS = 6


def compute_within(
    svc: ContextService,
    task: str | Task,
    size: Callable[[ComputedContext], int],
    cap: int,
    **options: Any,
) -> tuple[ComputedContext, int | None]:
    """``svc.compute(task, **options)``; when ``size(context)`` exceeds ``cap``,
    computed again with a budget below the Markdown's tokens, lowered in
    proportion to the excess (at most :data:`MAX_LOWERINGS` times). Returns
    the context and the budget it was first computed with when that had to
    be lowered (else None). A context that cannot be made to fit (its blocks
    that are never compressed alone are too large) is a ``CtxgraphError``."""
    ctx = svc.compute(task, record=False, **options)  # only the context delivered is recorded, below
    first_budget = ctx.budget
    measured = size(ctx)
    tries = 0
    while measured > cap:
        tries += 1
        lowered = min(ctx.budget - 1, int(ctx.tokens * cap / measured * 0.9))
        if tries > MAX_LOWERINGS or lowered < 1:
            raise _too_large(ctx.task_id, cap, ctx.budget)
        try:
            ctx = svc.compute(task, record=False, **{**options, "budget": lowered})
        except BudgetExceededError:
            raise _too_large(ctx.task_id, cap, lowered) from None
        measured = size(ctx)
    svc.record_delivery(ctx)
    settle()  # once: the process is warm now (models loaded, caches filled)
    return ctx, (first_budget if tries else None)


def _too_large(task_id: str, cap: int, budget: int) -> CtxgraphError:
    return CtxgraphError(
        f"the context of {task_id} does not fit the response cap of {cap:,} tokens, not even at a budget of "
        f"{budget:,} (the blocks that are never compressed must fit); raise --max-response-tokens")
