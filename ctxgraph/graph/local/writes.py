"""The embedded store's writes of tasks, handoffs, files and knowledge: each
call is one write transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ctxgraph.core.models import FileEntry, KnowledgeItem, Task, TaskStatus, task_tags
from ctxgraph.errors import UnknownTaskError
from ctxgraph.graph.handoff_batch import FileFill, HandoffBatch, link_props, plan_handoffs
from ctxgraph.graph.local import anchors, memory, nodes, outcomes, sql, sql_imports
from ctxgraph.graph.local.connection import Connection
from ctxgraph.graph.records import (
    HandoffRecord,
    file_props,
    knowledge_props,
    merge_tags,
    task_props,
)


def _finished(task: dict[str, Any], record: HandoffRecord) -> dict[str, Any]:
    """The task's properties once ``record`` (its handoff) is written."""
    done = {k: v for k, v in task.items() if k not in ("blocked_reason", "blocked_at")}
    done.update(
        status=(TaskStatus.COMPLETED if record.success else TaskStatus.FAILED).value,
        success=record.success, outcome_summary=record.summary,
        completed_at=record.completed_at, updated_at=record.completed_at,
    )
    return done


def _fill_files(cur: sqlite3.Cursor, fills: Sequence[FileFill]) -> None:
    """Create the missing files and merge the others' notes (``handoff_batch.merge_file``);
    a file whose terms changed is linked to its new ones."""
    existing = nodes.nodes(cur, "File", (f.entry.path for f in fills))
    changed = HandoffBatch.merged_files_of(fills, existing)
    nodes.put_nodes(cur, [("File", p) for p in changed])
    for props in changed:
        old = existing.get(props["path"])
        if old is None or old.get("terms") != props["terms"]:
            nodes.mention(cur, props["terms"])


def _merge_knowledge(cur: sqlite3.Cursor, batch: HandoffBatch) -> None:
    """Merge the batch's knowledge into the stored nodes (``handoff_batch.merge_knowledge``)
    and link each to its tags."""
    existing: dict[str, dict[str, Any]] = {}
    for label in {label for label, _ in batch.knowledge}:
        existing.update(nodes.nodes(cur, label, (p["id"] for lb, p in batch.knowledge if lb == label)))
    merged = batch.merged_knowledge(existing)
    nodes.put_nodes(cur, merged)
    nodes.named(cur, "Tag", {t for _, p in merged for t in p["tags"]})
    nodes.put_edges(cur, [((label, p["id"]), "TAGGED", ("Tag", t), {}) for label, p in merged for t in p["tags"]])


def _put_knowledge_items(cur: sqlite3.Cursor, items: Sequence[KnowledgeItem]) -> None:
    """Merge knowledge nodes (one per id): existing tags first, existing
    ``created_at`` kept; link each to its tags."""
    existing: dict[tuple[str, str], dict[str, Any]] = {}
    for label in {k.label for k in items}:
        found = nodes.nodes(cur, label, (k.id for k in items if k.label == label))
        existing.update({(label, i): p for i, p in found.items()})
    merged = []
    for item in items:
        props = knowledge_props(item)
        old = existing.get((item.label, item.id))
        if old is not None:
            props["tags"] = merge_tags(old.get("tags"), props.get("tags", []))
            props["created_at"] = old.get("created_at", props.get("created_at"))
        merged.append((item.label, props))
    nodes.put_nodes(cur, merged)
    nodes.named(cur, "Tag", {t for k in items for t in k.tags})
    nodes.put_edges(cur, [((k.label, k.id), "TAGGED", ("Tag", t), {}) for k in items for t in k.tags])


def _knowledge_label(cur: sqlite3.Cursor, item_id: str) -> str | None:
    row = cur.execute(sql.KNOWLEDGE_LABEL, (item_id, json.dumps(nodes.KNOWLEDGE_LABELS))).fetchone()
    return None if row is None else str(row[0])


def supersede(cur: sqlite3.Cursor, pairs: Sequence[tuple[str, str, str]]) -> None:
    """(new id, old id, at) SUPERSEDES links, as ``knowledge_supersede.cypher``:
    the old node holds from its ``created_at`` until the earliest ``at``; an
    old decision is superseded. Pairs whose nodes are missing are skipped."""
    for new_id, old_id, at in pairs:
        new_label, old_label = _knowledge_label(cur, new_id), _knowledge_label(cur, old_id)
        if new_label is None or old_label is None:
            continue
        nodes.put_edge(cur, (new_label, new_id), "SUPERSEDES", (old_label, old_id))
        old = nodes.node(cur, old_label, old_id) or {}
        if old_label == "Decision":
            old["status"] = "superseded"
        if old.get("created_at") or old.get("valid_from"):
            old["valid_from"] = old.get("valid_from") or old["created_at"]
        old["valid_until"] = min(at, old.get("valid_until") or at)
        nodes.put_node(cur, old_label, old)


class Writes:
    """The store's writes (a part of ``LocalStore``): each call is one write transaction."""

    db: Connection

    def upsert_tasks(self, tasks: Sequence[Task]) -> None:
        with self.db.write() as cur:
            known = {t.id for t in tasks}
            for task in tasks:
                for dep in task.depends_on:
                    if dep not in known and nodes.node(cur, "Task", dep) is None:
                        raise UnknownTaskError(dep)
            for task in tasks:
                old = nodes.node(cur, "Task", task.id)
                props = task_props(task)
                if old is not None:
                    props["created_at"] = old.get("created_at", props.get("created_at"))
                nodes.put_node(cur, "Task", props)
                cur.execute(sql.DELETE_TASK_TAGS, (task.id,))
                nodes.tag(cur, ("Task", task.id), task_tags(task))
                nodes.mention(cur, props.get("terms", []))
                for dep in task.depends_on:
                    nodes.put_edge(cur, ("Task", task.id), "DEPENDS_ON", ("Task", dep))

    def set_status(self, task_id: str, status: TaskStatus, *, reason: str | None, at: str) -> None:
        with self.db.write() as cur:
            props = nodes.node(cur, "Task", task_id)
            if props is None:
                raise UnknownTaskError(task_id)
            props["status"] = status.value
            if status is TaskStatus.BLOCKED:
                props["blocked_reason"] = reason or ""
                props["blocked_at"] = at
            else:
                props.pop("blocked_reason", None)
                props.pop("blocked_at", None)
            props["updated_at"] = at
            nodes.put_node(cur, "Task", props)

    def upsert_files(self, files: Sequence[FileEntry]) -> None:
        with self.db.write() as cur:
            for entry in files:
                props = file_props(entry)
                nodes.put_node(cur, "File", props)
                nodes.mention(cur, props["terms"])

    def apply_handoffs(self, records: Sequence[HandoffRecord]) -> list[bool]:
        """One transaction for the batch; every row kind in one ``executemany``
        (the batch is folded by :func:`plan_handoffs`, so each node is written once)."""
        if not records:
            return []
        with self.db.write() as cur:
            tasks = nodes.nodes(cur, "Task", (r.task_id for r in records))
            for record in records:
                if record.task_id not in tasks:
                    raise UnknownTaskError(record.task_id)
            stored = nodes.nodes(cur, "Handoff", (r.id for r in records))
            batch = plan_handoffs(records, {h: p.get("content_hash") for h, p in stored.items()})
            cur.executemany(sql.DELETE_HANDOFF_LINKS, [(h,) for h in batch.replaced])
            nodes.put_nodes(cur, [("Handoff", h.props()) for h in batch.handoffs])
            nodes.put_nodes(cur, [("Task", _finished(tasks[h.task_id], h)) for h in batch.handoffs])
            nodes.put_edges(cur, [(("Task", h.task_id), "HANDED_OFF", ("Handoff", h.id), {})
                                  for h in batch.handoffs])
            _merge_knowledge(cur, batch)
            nodes.put_edges(cur, [(("Handoff", h), "DISCOVERED", (k.label, k.id), {})
                                  for h, k in batch.discovered()])
            supersede(cur, batch.supersedes())
            _fill_files(cur, batch.files)
            nodes.put_edges(cur, [(("Handoff", h), link.rel, ("File", link.path), link_props(link))
                                  for h, link in batch.links()])
            return list(batch.written)

    def clear(self) -> None:
        """Delete everything (tests, ``init --reset``)."""
        with self.db.write() as cur:
            cur.execute(sql.CLEAR_EDGES)
            cur.execute(sql.CLEAR_NODES)
            cur.execute(sql.CLEAR_TASK_VECTORS)
            if cur.execute(sql.QUERY_TABLE_EXISTS).fetchone():
                cur.execute(sql.CLEAR_TASK_QUERIES)
            outcomes.clear(cur)
            anchors.clear(cur)
            if cur.execute(sql_imports.IMPORTS_TABLE_EXISTS).fetchone():  # ctxgraph.graph.local.imports
                cur.execute(sql_imports.CLEAR_IMPORTS)
            cur.execute(sql_imports.HISTORY_SOURCE_CLEAR)
            memory.bump_generation(cur)

    def upsert_knowledge(
        self, items: Sequence[KnowledgeItem], supersedes: Sequence[tuple[str, str, str]] = ()
    ) -> None:
        with self.db.write() as cur:
            for item in items:
                _put_knowledge_items(cur, [item])
            supersede(cur, supersedes)
