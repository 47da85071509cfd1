"""Service-level operations the MCP tools need that ``ContextService`` does not
have (yet): each takes the service and does its work through the service's
own extractor, store and ``compute`` — no second code path.

- :func:`search_knowledge`: knowledge by text, with the tag matching a
  context uses (the text's keywords and domains, ``knowledge_by_tags`` with
  the same document-frequency cap, merged and ranked as phase 2 ranks them);
- :func:`compute_within`: ``compute`` with the budget lowered until the
  response built from the context fits a size cap;
- :func:`store_warning`: the warning ``ctxgraph context`` prints when a
  context was computed without (part of) the store's answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ctxgraph.compute import limits as lim
from ctxgraph.compute.budget import BudgetExceededError
from ctxgraph.compute.output import ComputedContext
from ctxgraph.compute.relevance import merge_hits, relevance
from ctxgraph.errors import CtxgraphError
from ctxgraph.graph.models import KnowledgeItem, Task
from ctxgraph.service import ContextService
from ctxgraph.signals import TaskSignals

#: Knowledge items a text search reads at most from each of its two tag queries.
SEARCH_WINDOW = 500
#: Budget lowerings tried before a context that does not fit the cap is refused.
MAX_LOWERINGS = 6


class KnowledgeMatch(BaseModel):
    """One knowledge item a text matched, with the tags it matched on and its relevance."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item: KnowledgeItem
    matched_tags: tuple[str, ...]
    relevance: float


def search_knowledge(
    svc: ContextService, text: str, *, kinds: Sequence[str] | None = None, window: int = SEARCH_WINDOW
) -> tuple[TaskSignals, list[KnowledgeMatch]]:
    """The knowledge a text's signals match, best first.

    The text's keywords and domains (the extractor a task's signals come
    from) are the tags; ``knowledge_by_tags`` is asked for up to ``window``
    items by keyword tags and as many by domain tags (tags on more than
    ``limits.TAG_DF_CAP`` items are not read, as for a context); the hits are
    merged, deduplicated and ranked by relevance (keyword tags 1, domain tags
    0.5), then the most recently updated, then the id. ``kinds`` keeps only
    those kinds (``pattern``, ``gotcha``...)."""
    signals = svc.extractor.extract(text)
    keyword_hits = (svc.store.knowledge_by_tags(signals.keywords, window, max_df=lim.TAG_DF_CAP)
                    if signals.keywords else [])
    domain_hits = (svc.store.knowledge_by_tags(signals.domains, window, max_df=lim.TAG_DF_CAP)
                   if signals.domains else [])
    matched: dict[str, set[str]] = {}
    for hit in [*keyword_hits, *domain_hits]:
        matched.setdefault(hit.item.id, set()).update(hit.matched_tags)
    wanted = set(kinds) if kinds else None
    order = {tag: n for n, tag in enumerate((*signals.keywords, *signals.domains))}
    found = []
    for item, _ in merge_hits(keyword_hits, domain_hits, signals):
        if wanted is not None and item.kind not in wanted:
            continue
        tags = tuple(sorted(matched[item.id], key=lambda t: (order.get(t, len(order)), t)))
        found.append(KnowledgeMatch(item=item, matched_tags=tags, relevance=relevance(tags, signals)))
    return signals, found


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
    return ctx, (first_budget if tries else None)


def _too_large(task_id: str, cap: int, budget: int) -> CtxgraphError:
    return CtxgraphError(
        f"the context of {task_id} does not fit the response cap of {cap:,} tokens, not even at a budget of "
        f"{budget:,} (the blocks that are never compressed must fit); raise --max-response-tokens")


def store_warning(ctx: ComputedContext) -> str | None:
    """What ``ctxgraph context`` says on stderr when the store did not (fully)
    answer, without its ``ctxgraph: warning: `` prefix; None when it did."""
    notes = ctx.computed.notes
    if not notes:
        return None
    more = len(notes) - 1
    extra = f" (and {more} more parts; --debug lists them)" if more else ""
    return f"context computed without the store's answer: {notes[0]}{extra}"
