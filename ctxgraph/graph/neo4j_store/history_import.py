"""An imported history on Neo4j (``ctxgraph.service.history``): the bulk write
of new finished tasks with their handoffs, the statuses of many tasks at
once, the imported tasks' state, and the record of where an import stopped.

The bulk write is one transaction per batch: one UNWIND creating the tasks
not stored yet with their handoffs, tags and terms (``history_import``), then
the files and links of those handoffs and the derived counts, as
``apply_handoffs`` writes them (``files_fill``, ``handoff_links``,
``tasks_doc``), but for the files' history, which the new tasks add to
instead of a recount (``files_add_history``): the graph it leaves is the one
``upsert_tasks`` followed by ``apply_handoffs`` leaves."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from neo4j import ManagedTransaction

from ctxgraph import cypher
from ctxgraph.core.models import Task, TaskStatus
from ctxgraph.graph.handoff_batch import link_props, plan_handoffs
from ctxgraph.graph.neo4j_store.schema import Schema
from ctxgraph.graph.neo4j_store.writes import fill_files
from ctxgraph.graph.records import HandoffRecord, history_rows, signal_tags
from ctxgraph.signals import TaskSignals


class HistoryImport(Schema):
    def import_history(self, tasks: Sequence[Task], records: Sequence[HandoffRecord]) -> list[bool]:
        if not tasks:
            return []
        rows = history_rows(tasks, records)
        token = uuid.uuid4().hex

        def work(tx: ManagedTransaction) -> set[str]:
            created = {r["id"] for r in self._rows(tx, "history_import", rows=_task_rows(rows), token=token)}
            fresh = [r for r in records if r.task_id in created]
            if fresh:
                new = [row for row in rows if row["props"]["id"] in created]
                tagged = [{"id": row["props"]["id"], "tags": row["tags"]} for row in new if row["tags"]]
                if tagged:
                    tx.run(cypher.load("history_tags"), rows=tagged).consume()
                tx.run(cypher.load("history_terms"), **_term_params(new)).consume()
                batch = plan_handoffs(fresh, {})
                fill_files(tx, batch.files)
                links = batch.links()
                tx.run(cypher.load("history_links"), rows=_link_rows(links)).consume()
                read_next = [{"handoff_id": h, "rel": link.rel, "path": link.path, "props": link_props(link)}
                             for h, link in links if link.rel == "READ_NEXT"]
                if read_next:
                    tx.run(cypher.load("handoff_links"), rows=read_next).consume()
                tx.run(cypher.load("files_add_history"), rows=_file_history(rows, fresh)).consume()
            return created

        created = self._write(work)
        seen: set[str] = set()
        written = []
        for task in tasks:
            written.append(task.id in created and task.id not in seen)
            seen.add(task.id)
        return written

    def set_statuses(self, task_ids: Sequence[str], status: TaskStatus, at: str) -> None:
        ids = sorted(set(task_ids))
        if not ids:
            return

        def work(tx: ManagedTransaction) -> None:
            found = [r["id"] for r in self._rows(tx, "tasks_set_statuses", ids=ids, status=status.value, at=at)]
            self._task_docs(tx, found)
            self._refresh_files(tx, self._touched_files(tx, tasks=found))

        self._write(work)

    def history_tasks(self, prefix: str) -> dict[str, tuple[str, str | None, bool]]:
        rows = self._read(lambda tx: self._rows(tx, "history_tasks", prefix=prefix))
        return {r["id"]: (str(r["status"] or ""), r["content_hash"], bool(r["tagged"])) for r in rows}

    def write_task_signals(self, rows: Sequence[tuple[str, TaskSignals]]) -> None:
        if not rows:
            return
        params = [{"id": i, "keywords": list(s.keywords), "domains": list(s.domains),
                   "files": list(s.files_mentioned), "types": list(s.task_types), "tags": signal_tags(s)}
                  for i, s in rows]
        self._write(lambda tx: tx.run(cypher.load("task_signals_write"), rows=params).consume())

    def history_source(self, source_id: str) -> dict[str, Any] | None:
        rows = self._read(lambda tx: self._rows(tx, "history_source_get", id=source_id))
        props = rows[0]["props"] if rows else None
        return dict(props) if props else None

    def write_history_source(self, props: dict[str, Any]) -> None:
        self._write(lambda tx: tx.run(cypher.load("history_source_put"), props=dict(props)).consume())


def _task_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``history_import``'s rows: per task its properties, its task_text
    document (its terms when finished, as tasks_doc sets it; else null) and its
    handoff's properties."""
    out = []
    for row in rows:
        props = row["props"]
        done = props.get("status") == TaskStatus.COMPLETED.value
        out.append({"props": props, "doc": props.get("terms", []) if done else None, "completed": done,
                    "handoff": row["handoff"]})
    return out


def _term_params(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``history_terms``' parameters for the new tasks ``rows``: each term once,
    in name order, with the number of finished tasks having it; what the finished tasks' documents add
    to the corpus (as ``tasks_doc`` counts a task without a document before:
    each distinct term once, the length in terms, a document when it has one)."""
    df: dict[str, int] = {}
    docs = length = 0
    for row in rows:
        props = row["props"]
        found = props.get("terms", ())
        done = props.get("status") == TaskStatus.COMPLETED.value
        for name in found:
            df[name] = df.get(name, 0) + done
        if done:
            docs += bool(found)
            length += len(found)
    return {"terms": [[name, df[name]] for name in sorted(df)], "docs": docs, "length": length}


def _link_rows(links: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
    """``history_links``' rows: per file (sorted), the new handoffs' CREATED
    and MODIFIED links to it."""
    by_path: dict[str, list[dict[str, Any]]] = {}
    for handoff, link in links:
        if link.rel != "READ_NEXT":
            by_path.setdefault(link.path, []).append(
                {"handoff_id": handoff, "rel": link.rel, "props": link_props(link)})
    return [{"path": path, "links": by_path[path]} for path in sorted(by_path)]


def _file_history(rows: Sequence[dict[str, Any]], records: Sequence[HandoffRecord]) -> list[dict[str, Any]]:
    """The ``files_add_history`` rows of the new finished tasks' handoffs
    ``records`` (``rows``: the tasks' ``history_rows``): per file they created
    or modified, sorted by path, how many of them did, their length in terms
    and their terms."""
    props = {row["props"]["id"]: row["props"] for row in rows}
    touching: dict[str, dict[str, None]] = {}
    for record in records:
        if props[record.task_id].get("status") != TaskStatus.COMPLETED.value:
            continue  # (a failed task is not part of any file's history)
        for link in record.links:
            if link.rel != "READ_NEXT":
                touching.setdefault(link.path, {})[record.task_id] = None
    out = []
    for path in sorted(touching):
        tasks = [props[t] for t in touching[path]]
        out.append({"path": path, "touches": len(tasks), "task_len": sum(t.get("term_count", 0) for t in tasks),
                    "terms": [term for t in tasks for term in t.get("terms", ())]})
    return out


__all__ = ["HistoryImport"]
