"""Finding things without knowing their id: ``ctxgraph search`` and
``ctxgraph knowledge list``.

:func:`search` is three searches of one text, each a path ctxgraph already
has, none a second ranking: the knowledge is
:meth:`ContextService.search_knowledge` (what the MCP tool
``search_knowledge`` answers), the tasks and the code are what a context of
the text, as an unsaved task, shows in its related tasks, code references
and codebase snippets (:meth:`ContextService.compute`, as the MCP tool
``compute_context`` computes an unsaved task's). :func:`list_knowledge`
reads the store's listing (``KnowledgeStore.list_knowledge``) and marks
each item superseded (a later item superseded it) or stale (the code its own
anchor vouches for changed or is gone: docs/freshness.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from ctxgraph.compute.code_memory import Snippet
from ctxgraph.compute.output import CodeRef, RelatedTask
from ctxgraph.core.models import Anchor, KnowledgeItem, Task
from ctxgraph.errors import InvalidArgumentError
from ctxgraph.service.knowledge import KnowledgeMatch

if TYPE_CHECKING:
    from ctxgraph.service.core import ContextService

#: What ``search`` looks in.
Section = Literal["knowledge", "tasks", "code"]
SECTIONS: tuple[Section, ...] = ("knowledge", "tasks", "code")
#: The id of the unsaved task whose context finds the tasks and the code of a search.
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


class Found(BaseModel):
    """What one search found, each part best first."""

    model_config = _OUT
    query: str
    keywords: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    knowledge: tuple[KnowledgeMatch, ...] = ()
    tasks: tuple[RelatedTask, ...] = ()
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
    ``kinds`` keeping those kinds), tasks and code (by the context of ``text``
    as an unsaved task of the complex tier: its related tasks, code references
    and codebase snippets; ``memory``, ``memory_project`` as for ``compute``),
    for the ``sections`` asked."""
    if not text.strip():
        raise InvalidArgumentError("search: the query is empty (say what to look for)")
    signals, knowledge = svc.search_knowledge(text, kinds=kinds) if "knowledge" in sections else (None, [])
    found = Found(query=text, knowledge=tuple(knowledge))
    if signals is not None:
        found = found.model_copy(update={"keywords": signals.keywords, "domains": signals.domains})
    if "tasks" not in sections and "code" not in sections:
        return found
    ctx = svc.compute(Task(id=SEARCH_TASK_ID, objective=text), complexity=SEARCH_COMPLEXITY, budget=SEARCH_BUDGET,
                      record=False, memory=memory, memory_project=memory_project)
    update: dict[str, object] = {} if signals is not None else {
        "keywords": ctx.computed.signals.keywords, "domains": ctx.computed.signals.domains}
    if "tasks" in sections:
        update["tasks"] = ctx.related_tasks
    if "code" in sections:
        update["code"], update["snippets"] = ctx.code_references, ctx.codebase_context
    return found.model_copy(update=update)


__all__ = ["SEARCH_TASK_ID", "SECTIONS", "Found", "Listed", "Section", "list_knowledge", "search", "staleness",
           "superseded"]
