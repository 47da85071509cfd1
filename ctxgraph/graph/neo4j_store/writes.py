"""Writes: tasks and their status, files, handoffs (one transaction per batch)
and knowledge, each recounting the history of the files it touched in the same
transaction (and keeping the tasks' task_text documents: ``task_upsert``,
``task_set_status``, ``handoff_write``); and ``clear``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import ManagedTransaction

from ctxgraph import cypher
from ctxgraph.core.models import FileEntry, KnowledgeItem, Task, TaskStatus, task_tags
from ctxgraph.errors import UnknownTaskError
from ctxgraph.graph.handoff_batch import FileFill, HandoffBatch, link_props, plan_handoffs
from ctxgraph.graph.neo4j_store.schema import Schema
from ctxgraph.graph.records import HandoffRecord, file_props, knowledge_props, task_props

_CLEAR_BATCH = 10_000  # nodes per transaction in clear()


class Writes(Schema):
    def clear(self) -> None:
        """Delete everything (tests, ``init --reset``), in write transactions of
        at most ``_CLEAR_BATCH`` nodes: one transaction for the whole graph runs
        out of Neo4j's default transaction memory at 100k nodes. Not atomic: an
        interrupted clear leaves part of the graph, and running it again
        finishes the job."""

        def batch(tx: ManagedTransaction) -> int:
            return int(self._rows(tx, "delete_all", batch=_CLEAR_BATCH)[0]["deleted"])

        while self._write(batch):
            pass

    def upsert_tasks(self, tasks: Sequence[Task]) -> None:
        rows = [{"props": task_props(t), "tags": task_tags(t), "deps": list(t.depends_on)} for t in tasks]
        known = {t.id for t in tasks}
        wanted = sorted({d for t in tasks for d in t.depends_on if d not in known})

        def work(tx: ManagedTransaction) -> None:
            missing = self._rows(tx, "tasks_missing", ids=wanted) if wanted else []
            if missing:
                raise UnknownTaskError(missing[0]["id"])
            tx.run(cypher.load("task_upsert"), rows=rows).consume()
            self._task_docs(tx, [t.id for t in tasks])
            self._refresh_files(tx, self._touched_files(tx, tasks=[t.id for t in tasks]))

        self._write(work)

    def set_status(self, task_id: str, status: TaskStatus, *, reason: str | None, at: str) -> None:
        blocked = status is TaskStatus.BLOCKED

        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            found = self._rows(
                tx, "task_set_status", id=task_id, status=status.value,
                reason=(reason or "") if blocked else None, blocked_at=at if blocked else None, at=at,
            )
            self._task_docs(tx, [task_id])
            self._refresh_files(tx, self._touched_files(tx, tasks=[task_id]))
            return found

        if not self._write(work):
            raise UnknownTaskError(task_id)

    def upsert_files(self, files: Sequence[FileEntry]) -> None:
        rows = [file_props(f) for f in files]

        def work(tx: ManagedTransaction) -> None:
            tx.run(cypher.load("files_upsert"), rows=rows).consume()
            self._refresh_files(tx, [row["path"] for row in rows])  # in_map and own terms: the file_text doc

        self._write(work)

    def apply_handoffs(self, records: Sequence[HandoffRecord]) -> list[bool]:
        """One write transaction for the batch, one UNWIND statement per kind of
        row (the batch is folded by :func:`plan_handoffs`, so each node once)."""
        if not records:
            return []
        keys = [{"task_id": r.task_id, "id": r.id} for r in records]

        def work(tx: ManagedTransaction) -> list[bool]:
            state = self._rows(tx, "handoff_state", rows=keys)
            for row in state:
                if not row["task_exists"]:
                    raise UnknownTaskError(row["task_id"])
            batch = plan_handoffs(records, {row["id"]: row["content_hash"] for row in state})
            stale = self._touched_files(tx, handoffs=list(batch.replaced)) if batch.replaced else []
            if batch.replaced:
                tx.run(cypher.load("handoff_clear_links"), ids=list(batch.replaced)).consume()
            if batch.handoffs:  # else every record was already there
                rows = _handoff_rows(batch)
                # the links after the nodes they join (an UNWIND over no rows does nothing)
                tx.run(cypher.load("handoff_write"), rows=rows["handoffs"]).consume()
                self._task_docs(tx, [h.task_id for h in batch.handoffs])
                merge_knowledge(tx, batch)
                tx.run(cypher.load("handoff_discovered"), rows=rows["discovered"]).consume()
                if batch.supersedes():
                    tx.run(cypher.load("knowledge_supersede"), pairs=[
                        {"new": n, "old": o, "at": at} for n, o, at in batch.supersedes()]).consume()
                fill_files(tx, batch.files)
                tx.run(cypher.load("handoff_links"), rows=rows["links"]).consume()
                stale += self._touched_files(tx, tasks=sorted({r.task_id for r in records}))
            self._refresh_files(tx, stale)
            return list(batch.written)

        return self._write(work)

    def upsert_knowledge(
        self, items: Sequence[KnowledgeItem], supersedes: Sequence[tuple[str, str, str]] = ()
    ) -> None:
        rows = [{"label": k.label, "props": knowledge_props(k)} for k in items]
        pairs = [{"new": n, "old": o, "at": at} for n, o, at in supersedes]

        def work(tx: ManagedTransaction) -> None:
            if rows:
                tx.run(cypher.load("knowledge_upsert"), rows=rows).consume()
            if pairs:
                tx.run(cypher.load("knowledge_supersede"), pairs=pairs).consume()

        self._write(work)


def merge_knowledge(tx: ManagedTransaction, batch: HandoffBatch) -> None:
    """Merge the batch's knowledge into the stored nodes, locked first
    (``knowledge_lock``; ``handoff_batch.merge_knowledge``), and write it."""
    ids = sorted({props["id"] for _, props in batch.knowledge})
    if not ids:
        return
    stored = {r["props"]["id"]: r["props"] for r in tx.run(cypher.load("knowledge_lock"), ids=ids)}
    rows = [{"label": label, "props": props} for label, props in batch.merged_knowledge(stored)]
    tx.run(cypher.load("knowledge_merge"), rows=rows).consume()


def fill_files(tx: ManagedTransaction, fills: Sequence[FileFill]) -> None:
    """Create the files ``fills`` name and merge their notes, locked first
    (``files_lock``; ``handoff_batch.merge_file``)."""
    paths = sorted({f.entry.path for f in fills})
    if not paths:
        return
    stored = {r["props"]["path"]: {k: v for k, v in r["props"].items() if v is not None}
              for r in tx.run(cypher.load("files_lock"), paths=paths)}
    rows = [{"props": props, "terms_changed": stored.get(props["path"], {}).get("terms") != props["terms"]}
            for props in HandoffBatch.merged_files_of(fills, stored)]
    if rows:
        tx.run(cypher.load("files_fill"), rows=rows).consume()


def _handoff_rows(batch: HandoffBatch) -> dict[str, list[dict[str, Any]]]:
    """The ``$rows`` of each statement writing a folded batch."""
    return {
        "handoffs": [
            {"task_id": h.task_id, "props": h.props(), "success": h.success, "summary": h.summary,
             "completed_at": h.completed_at,
             "status": (TaskStatus.COMPLETED if h.success else TaskStatus.FAILED).value}
            for h in batch.handoffs
        ],
        "discovered": [{"handoff_id": h, "id": k.id} for h, k in batch.discovered()],
        "links": [{"handoff_id": h, "rel": link.rel, "path": link.path, "props": link_props(link)}
                  for h, link in batch.links()],
    }
