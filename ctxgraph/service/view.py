"""What ``ctxgraph view`` reads: a task's neighbourhood from its own computed
context, or the whole graph when it is small (the drawing is
:mod:`ctxgraph.view`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxgraph.errors import CtxgraphError
from ctxgraph.service.find import list_knowledge, staleness
from ctxgraph.view.graph import KNOWLEDGE_SECTIONS, ViewGraph, overview_graph, task_graph

if TYPE_CHECKING:
    from ctxgraph.core.models import Anchor
    from ctxgraph.service.core import ContextService

#: Nodes (tasks, knowledge items, files) the whole-graph overview draws at most:
#: past a few hundred a force layout is a hairball and slow to settle.
OVERVIEW_LIMIT = 400


def task_view(svc: ContextService, task_id: str, *, memory: bool | None = None,
              memory_project: str | None = None) -> ViewGraph:
    """``task_id``'s neighbourhood: its context is computed (with every
    candidate's fate, not recorded as delivered) and what it drew on drawn."""
    task = svc.get_task(task_id)
    ctx = svc.compute(task_id, explain=True, record=False, memory=memory, memory_project=memory_project)
    ids = sorted({*(p.id for p in ctx.patterns_to_follow), *(w.id for w in ctx.warnings),
                  *(d.id for d in ctx.relevant_decisions), *(q.id for q in ctx.blocking_questions),
                  *(e.id for e in ctx.explain or () if e.section in KNOWLEDGE_SECTIONS and e.fate == "dropped")})
    items = {item.id: item for item in svc.store.get_knowledge(ids)} if ids else {}
    stale = _stale(svc.store.read_anchors(owners=ids)) if ids else {}
    dependencies = svc.store.get_tasks(task.depends_on)
    return task_graph(task, dependencies, ctx, items, stale)


def _stale(anchors: list[Anchor]) -> dict[str, str]:
    owned: dict[str, list[Anchor]] = {}
    for anchor in anchors:
        owned.setdefault(anchor.owner, []).append(anchor)
    return {owner: why for owner, found in owned.items() if (why := staleness(found))}


def overview(svc: ContextService, *, limit: int = OVERVIEW_LIMIT) -> ViewGraph:
    """Every task, knowledge item and handed-off file; refused past ``limit`` nodes."""
    tasks = svc.list_tasks()
    listed = list_knowledge(svc)
    files = svc.store.handoff_files([t.id for t in tasks]) if tasks else {}
    count = len(tasks) + len(listed) + len({path for paths in files.values() for path in paths})
    if count > limit:
        raise CtxgraphError(
            f"the graph has {count:,} nodes (tasks, knowledge items, files), more than the overview draws "
            f"({limit:,}); name a task to see its neighbourhood: ctxgraph view TASK_ID")
    return overview_graph(tasks, [(x.item, x.tasks, x.stale) for x in listed], files)


__all__ = ["OVERVIEW_LIMIT", "overview", "task_view"]
