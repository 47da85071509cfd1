"""Finding things without knowing their id: ``ctxgraph search`` and
``ctxgraph knowledge list``.

:func:`search` is three searches of one text, none a ranking of its own: the
knowledge is :meth:`ContextService.search_knowledge` (what the MCP tool
``search_knowledge`` answers); the tasks, of any status, are found and
ranked as that method finds and ranks knowledge (the text's keywords and
domains as tags, ``KnowledgeStore.tasks_by_tags``, ``merge_hits``'s order);
the code is what a context of the text, as an unsaved task, shows in its
code references and codebase snippets (:meth:`ContextService.compute`, as
the MCP tool ``compute_context`` computes an unsaved task's). :func:`list_knowledge`
reads the store's listing (``KnowledgeStore.list_knowledge``) and marks
each item superseded (a later item superseded it) or stale (the code its own
anchor vouches for changed or is gone: docs/freshness.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from ctxgraph.compute import limits as lim
from ctxgraph.compute.code_memory import Snippet
from ctxgraph.compute.output import CodeRef
from ctxgraph.compute.relevance import relevance
from ctxgraph.core.models import Anchor, KnowledgeItem, Task, TaskHit
from ctxgraph.errors import InvalidArgumentError
from ctxgraph.service.knowledge import SEARCH_WINDOW, KnowledgeMatch
from ctxgraph.signals import TaskSignals

if TYPE_CHECKING:
    from ctxgraph.service.core import ContextService

#: What ``search`` looks in.
Section = Literal["knowledge", "tasks", "code"]
SECTIONS: tuple[Section, ...] = ("knowledge", "tasks", "code")
#: The id of the unsaved task whose context finds the code of a search.
SEARCH_TASK_ID = "ctxgraph-search"
#: The tier and budget of that context: the largest caps, and a budget no cap-bound list reaches.
SEARCH_COMPLEXITY = "complex"
SEARCH_BUDGET = 1_000_000

_OUT = ConfigDict(defer_build=True, frozen=True, extra="forbid")


class Listed(BaseModel):
    """One knowledge item of a listing: the tasks whose handoffs discovered it,
    whether it is superseded, and why it is stale (None when it is not)."""

    model_config = _OUT
    item: KnowledgeItem
    tasks: tuple[str, ...] = ()
    superseded: bool = False
    stale: str | None = None


class TaskMatch(BaseModel):
    """One task a text matched, with the tags it matched on and its relevance."""

    model_config = _OUT
    task: Task
    matched_tags: tuple[str, ...]
    relevance: float


class Found(BaseModel):
    """What one search found, each part best first."""

    model_config = _OUT
    query: str
    keywords: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    knowledge: tuple[KnowledgeMatch, ...] = ()
    tasks: tuple[TaskMatch, ...] = ()
    code: tuple[CodeRef, ...] = ()
    snippets: tuple[Snippet, ...] = ()


def superseded(item: KnowledgeItem) -> bool:
    """A later item superseded ``item`` (a revised node, a replaced decision)."""
    return item.valid_until is not None or item.status == "superseded"


def staleness(anchors: Sequence[Anchor]) -> str | None:
    """Why the code an item's own anchors vouch for is no longer as it was, or None."""
    gone = [a for a in anchors if a.status != "unchanged"]
    if not gone:
        return None
    return "; ".join(f"{a.status}: {a.current_path}" for a in sorted(gone, key=lambda a: a.id))


def list_knowledge(
    svc: ContextService,
    *,
    kinds: Sequence[str] | None = None,
    tags: Sequence[str] = (),
    task_id: str | None = None,
    stale: bool = False,
    only_superseded: bool = False,
) -> list[Listed]:
    """The knowledge of ``kinds`` carrying every one of ``tags`` (normalized as
    a handoff's tags are), discovered by ``task_id``'s handoff when given; with
    ``stale`` only the stale items, with ``only_superseded`` only the superseded
    ones. In id order. An unknown task is an error, not an empty list."""
    if task_id is not None:
        svc.get_task(task_id)
    wanted = [svc.extractor.normalize_tag(t) for t in tags]
    for given, tag in zip(tags, wanted, strict=True):
        if not tag:
            raise InvalidArgumentError(f"tag {given!r}: no letter or digit in it, so no item carries it")
    rows = svc.store.list_knowledge(None if kinds is None else list(kinds), wanted, task_id)
    owned: dict[str, list[Anchor]] = {}
    if rows:
        for anchor in svc.store.read_anchors(owners=[item.id for item, _ in rows]):
            owned.setdefault(anchor.owner, []).append(anchor)
    listed = [Listed(item=item, tasks=tasks, superseded=superseded(item), stale=staleness(owned.get(item.id, ())))
              for item, tasks in rows]
    return [x for x in listed if (not stale or x.stale) and (not only_superseded or x.superseded)]


def search(
    svc: ContextService,
    text: str,
    *,
    kinds: Sequence[str] | None = None,
    sections: Sequence[Section] = SECTIONS,
    memory: bool | None = None,
    memory_project: str | None = None,
) -> Found:
    """``text``'s knowledge (by :meth:`ContextService.search_knowledge`,
    ``kinds`` keeping those kinds), tasks (:func:`search_tasks`) and code (by
    the context of ``text`` as an unsaved task of the complex tier: its code
    references and codebase snippets; ``memory``, ``memory_project`` as for
    ``compute``), for the ``sections`` asked."""
    if not text.strip():
        raise InvalidArgumentError("search: the query is empty (say what to look for)")
    signals = svc.extractor.extract(text)
    found = Found(query=text, keywords=signals.keywords, domains=signals.domains)
    if "knowledge" in sections:
        found = found.model_copy(update={"knowledge": tuple(svc.search_knowledge(text, kinds=kinds)[1])})
    if "tasks" in sections:
        found = found.model_copy(update={"tasks": tuple(search_tasks(svc, signals))})
    if "code" in sections:
        ctx = svc.compute(Task(id=SEARCH_TASK_ID, objective=text), complexity=SEARCH_COMPLEXITY,
                          budget=SEARCH_BUDGET, record=False, memory=memory, memory_project=memory_project)
        found = found.model_copy(update={"code": ctx.code_references, "snippets": ctx.codebase_context})
    return found


def search_tasks(svc: ContextService, signals: TaskSignals, *, window: int = SEARCH_WINDOW) -> list[TaskMatch]:
    """The tasks sharing a tag with ``signals``, found and ranked as
    :meth:`ContextService.search_knowledge` finds and ranks knowledge: up to
    ``window`` by keyword tags and as many by domain tags (tags on more than
    ``limits.TAG_DF_CAP`` items not read), merged, then by relevance (keyword
    tags 1, domain tags 0.5), the most recently updated, the id."""
    hits: list[TaskHit] = []
    for tags in (signals.keywords, signals.domains):
        if tags:
            hits += svc.store.tasks_by_tags(tags, window, max_df=lim.TAG_DF_CAP)
    merged: dict[str, tuple[Task, set[str]]] = {}
    for hit in hits:
        merged.setdefault(hit.task.id, (hit.task, set()))[1].update(hit.matched_tags)
    order = {tag: n for n, tag in enumerate((*signals.keywords, *signals.domains))}
    found = [TaskMatch(task=task, matched_tags=tuple(sorted(tags, key=lambda t: (order.get(t, len(order)), t))),
                       relevance=relevance(tuple(tags), signals)) for task, tags in merged.values()]
    found.sort(key=lambda m: m.task.id)
    found.sort(key=lambda m: m.task.updated_at or "", reverse=True)
    found.sort(key=lambda m: m.relevance, reverse=True)
    return found


__all__ = ["SEARCH_TASK_ID", "SECTIONS", "Found", "Listed", "Section", "TaskMatch", "list_knowledge", "search",
           "search_tasks", "staleness", "superseded"]
