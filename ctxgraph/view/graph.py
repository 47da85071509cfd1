"""What ``ctxgraph view`` draws, as nodes and edges. Pure: the records come
from the caller (:mod:`ctxgraph.service.view`).

A task's view is built from the task's own computed context (what it drew
on, not a second guess): the task, its dependencies and their handoffs with
the files they named for the next task, the knowledge each section shows
(linked to the handoff or task it came from), the code references and
snippets, the related tasks, and the candidates the context dropped because
a later item superseded them or their code is gone. The overview is every
task, knowledge item and handed-off file of a small graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from ctxgraph.compute.output import ComputedContext
from ctxgraph.core.models import KnowledgeItem, Task

_OUT = ConfigDict(defer_build=True, frozen=True, extra="forbid")

#: Characters of a node's label (its full text is its ``title``).
LABEL_CHARS = 48
#: The sections of a context that show knowledge, with the field of their text.
KNOWLEDGE_SECTIONS = ("patterns", "warnings", "decisions", "blocking_questions")


class Node(BaseModel):
    model_config = _OUT
    id: str
    #: task, dependency, related, handoff, file, or the knowledge's kind (pattern, gotcha...)
    kind: str
    label: str
    title: str = ""
    #: focus (the task viewed), stale, superseded, retired
    marks: tuple[str, ...] = ()


class Edge(BaseModel):
    model_config = _OUT
    source: str
    target: str
    label: str


class ViewGraph(BaseModel):
    model_config = _OUT
    title: str
    subtitle: str = ""
    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()


def short(text: str, limit: int = LABEL_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class _Builder:
    """Nodes by id (the first one added wins, marks are merged) and edges, each once."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.edges: dict[tuple[str, str, str], Edge] = {}

    def node(self, node_id: str, kind: str, text: str, marks: Iterable[str] = (), title: str = "") -> str:
        marks = tuple(m for m in marks if m)
        old = self.nodes.get(node_id)
        if old is None:
            self.nodes[node_id] = Node(id=node_id, kind=kind, label=short(text), title=title or text, marks=marks)
        elif marks:
            self.nodes[node_id] = old.model_copy(update={"marks": tuple(dict.fromkeys((*old.marks, *marks)))})
        return node_id

    def edge(self, source: str, target: str, label: str) -> None:
        if source != target:
            self.edges.setdefault((source, target, label), Edge(source=source, target=target, label=label))

    def graph(self, title: str, subtitle: str) -> ViewGraph:
        return ViewGraph(title=title, subtitle=subtitle, nodes=tuple(self.nodes.values()),
                         edges=tuple(self.edges.values()))


def _task_text(task: Task) -> str:
    return f"{task.id}: {task.name or task.objective or task.id}"


def _knowledge_text(item: KnowledgeItem) -> str:
    return item.summary


def _item_marks(item: KnowledgeItem | None, stale: str | None) -> tuple[str, ...]:
    superseded = item is not None and (item.valid_until is not None or item.status == "superseded")
    return tuple(m for m, on in (("superseded", superseded), ("stale", bool(stale))) if on)


def task_graph(task: Task, dependencies: Sequence[Task], ctx: ComputedContext,
               items: Mapping[str, KnowledgeItem], stale: Mapping[str, str]) -> ViewGraph:
    """``task``'s neighbourhood from its context ``ctx``: ``items`` are the
    knowledge nodes the context names (by id), ``stale`` why an item's code is
    stale (by id)."""
    b = _Builder()
    focus = b.node(f"task:{task.id}", "task", _task_text(task), ["focus"], title=task.text)
    for dep in dependencies:
        b.edge(focus, b.node(f"task:{dep.id}", "dependency", _task_text(dep), title=f"{dep.status.value}: {dep.text}"),
               "depends on")
    for prior in ctx.prior_work:
        owner = b.node(f"task:{prior.task_id}", "dependency", f"{prior.task_id}: {prior.task}")
        handoff = b.node(f"handoff:{prior.task_id}", "handoff", f"handoff of {prior.task_id}", title=prior.summary)
        b.edge(owner, handoff, "handed off")
        for ref in prior.files_created:
            b.edge(handoff, b.node(f"file:{ref.file}", "file", ref.file, ["stale" if ref.stale else ""],
                                   title=" — ".join(x for x in (ref.file, ref.reason, ref.stale or "") if x)),
                   "names")
    for related in ctx.related_tasks:
        b.edge(focus, b.node(f"task:{related.id}", "related", f"{related.id}: {related.intent}",
                             title=related.summary or related.intent), "related")
    _context_knowledge(b, focus, ctx, items, stale)
    for code in ctx.code_references:
        b.edge(focus, b.node(f"file:{code.file}", "file", code.file, title=f"{code.component}: {code.notes}"),
               "code reference")
    for snippet in ctx.codebase_context:
        b.edge(focus, b.node(f"file:{snippet.path}", "file", snippet.path, ["stale" if snippet.stale else ""],
                             title=f"{snippet.path}:{snippet.start_line}-{snippet.end_line}"), "indexed code")
    shown = sum(1 for e in ctx.explain or () if e.fate != "dropped")
    return b.graph(f"ctxgraph view: {task.id}", f"{_task_text(task)} — its context drew on {shown} items")


def _context_knowledge(b: _Builder, focus: str, ctx: ComputedContext, items: Mapping[str, KnowledgeItem],
                       stale: Mapping[str, str]) -> None:
    """The knowledge the context shows, each from the handoff (or task) it came
    from when that is drawn, else from the task viewed; then the knowledge it
    dropped as superseded or retired."""
    shown: list[tuple[str, str, str | None, str | None]] = [
        *((p.id, p.pattern, p.from_task, p.stale) for p in ctx.patterns_to_follow),
        *((w.id, w.issue, w.from_task, None) for w in ctx.warnings),
        *((d.id, d.decision, d.from_task, None) for d in ctx.relevant_decisions),
        *((q.id, q.question, q.from_task, None) for q in ctx.blocking_questions),
    ]
    for item_id, text, from_task, why in shown:
        item = items.get(item_id)
        reason = why or stale.get(item_id)
        node = b.node(f"k:{item_id}", item.kind if item else item_id.split(":")[0], text,
                      _item_marks(item, reason), title=" — ".join(x for x in (text, reason or "") if x))
        source = next((s for s in (f"handoff:{from_task}", f"task:{from_task}") if from_task and s in b.nodes),
                      focus)
        b.edge(source, node, "discovered" if source != focus else "in context")
        if source != focus:
            b.edge(focus, node, "in context")
    for entry in ctx.explain or ():
        if entry.fate != "dropped" or entry.section not in KNOWLEDGE_SECTIONS:
            continue
        mark = "superseded" if entry.reason == "superseded" else "retired" if entry.reason.startswith("retired") \
            else ""
        item = items.get(entry.id)
        if mark and item is not None:
            b.edge(focus, b.node(f"k:{item.id}", item.kind, _knowledge_text(item), (mark, *_item_marks(item, None)),
                                 title=f"{item.summary} — dropped: {entry.reason}"), "dropped")


def overview_graph(tasks: Sequence[Task], knowledge: Sequence[tuple[KnowledgeItem, Sequence[str], str | None]],
                   files: Mapping[str, Sequence[str]]) -> ViewGraph:
    """Every task (with its dependencies), knowledge item (from the tasks whose
    handoffs discovered it; with why it is stale, or None) and file a task's
    handoff created or modified."""
    b = _Builder()
    for task in tasks:
        b.node(f"task:{task.id}", "task", _task_text(task), title=f"{task.status.value}: {task.text}")
    for task in tasks:
        for dep in task.depends_on:
            b.edge(f"task:{task.id}", f"task:{dep}", "depends on")
    for item, found_by, stale in knowledge:
        node = b.node(f"k:{item.id}", item.kind, item.summary, _item_marks(item, stale),
                      title=" — ".join(x for x in (item.summary, stale or "") if x))
        for task_id in found_by:
            b.edge(f"task:{task_id}", node, "discovered")
    for task_id, paths in sorted(files.items()):
        for path in paths:
            b.edge(f"task:{task_id}", b.node(f"file:{path}", "file", path), "changed")
    return b.graph("ctxgraph view: the whole graph",
                   f"{len(tasks)} tasks, {len(knowledge)} knowledge items, "
                   f"{sum(1 for n in b.nodes.values() if n.kind == 'file')} files")


__all__ = ["Edge", "Node", "ViewGraph", "overview_graph", "short", "task_graph"]
