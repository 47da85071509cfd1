"""An imported history on the embedded store (``ctxgraph.service.history``):
the bulk write of new finished tasks with their handoffs, the statuses of
many tasks at once, the imported tasks' state, and the record of where an
import stopped (in the ``meta`` table). Each write is one transaction, every
row kind in one ``executemany``; the graph a bulk write leaves is the one
``upsert_tasks`` followed by ``apply_handoffs`` leaves."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from ctxgraph.core.models import Task, TaskStatus
from ctxgraph.graph.handoff_batch import link_props, plan_handoffs
from ctxgraph.graph.local import nodes, sql, sql_imports
from ctxgraph.graph.local.connection import Connection
from ctxgraph.graph.local.writes import _fill_files
from ctxgraph.graph.records import HandoffRecord, history_rows, signal_tags
from ctxgraph.signals import TaskSignals

_SOURCE_KEY = "history_source:"


@contextlib.contextmanager
def _bulk(cur: sqlite3.Cursor) -> Iterator[None]:
    """Inside a write transaction: the graph's generation bumped once for the
    whole write, not once per row (``sql_imports.GRAPH_GENERATION_ROW_TRIGGERS_DROP``),
    and a larger page cache while it runs (``sql_imports.CACHE_BULK``)."""
    cur.execute(sql_imports.CACHE_BULK)
    try:
        for statement in sql_imports.GRAPH_GENERATION_ROW_TRIGGERS_DROP:
            cur.execute(statement)
        yield
        cur.execute(sql_imports.GRAPH_GENERATION_BUMP)
        for statement in sql_imports.GRAPH_GENERATION_ROW_TRIGGERS_MAKE:
            cur.execute(statement)
    finally:
        cur.execute(sql_imports.CACHE_DEFAULT)


class HistoryImport:
    """The imported history's writes and reads (a part of ``LocalStore``)."""

    db: Connection

    def import_history(self, tasks: Sequence[Task], records: Sequence[HandoffRecord]) -> list[bool]:
        if not tasks:
            return []
        rows = history_rows(tasks, records)
        with self.db.write() as cur, _bulk(cur):
            stored = set(nodes.nodes(cur, "Task", (t.id for t in tasks)))
            written: list[bool] = []
            fresh: list[dict[str, Any]] = []
            for row in rows:
                new = row["props"]["id"] not in stored
                written.append(new)
                if new:
                    stored.add(row["props"]["id"])
                    fresh.append(row)
            if not fresh:
                return written
            nodes.put_nodes(cur, [("Task", row["props"]) for row in fresh])
            nodes.named(cur, "Tag", {t for row in fresh for t in row["tags"]})
            nodes.put_edges(cur, [(("Task", row["props"]["id"]), "TAGGED", ("Tag", t), {})
                                  for row in fresh for t in row["tags"]])
            nodes.named(cur, "Term", {t for row in fresh for t in row["props"].get("terms", ())})
            nodes.put_edges(cur, [(("Task", row["props"]["id"]), "MENTIONS", ("Term", t), {})
                                  for row in fresh for t in row["props"].get("terms", ())])
            nodes.put_nodes(cur, [("Handoff", row["handoff"]) for row in fresh])
            nodes.put_edges(cur, [(("Task", row["props"]["id"]), "HANDED_OFF", ("Handoff", row["handoff"]["id"]), {})
                                  for row in fresh])
            ids = {row["props"]["id"] for row in fresh}
            batch = plan_handoffs([r for r in records if r.task_id in ids], {})
            _fill_files(cur, batch.files)
            nodes.put_edges(cur, [(("Handoff", h), link.rel, ("File", link.path), link_props(link))
                                  for h, link in batch.links()])
        return written

    def set_statuses(self, task_ids: Sequence[str], status: TaskStatus, at: str) -> None:
        with self.db.write() as cur:
            found = nodes.nodes(cur, "Task", task_ids)
            for props in found.values():
                props.pop("blocked_reason", None)
                props.pop("blocked_at", None)
                props.update(status=status.value, updated_at=at)
            nodes.put_nodes(cur, [("Task", props) for props in found.values()])

    def history_tasks(self, prefix: str) -> dict[str, tuple[str, str | None, bool]]:
        with self.db.read() as cur:
            rows = cur.execute(sql_imports.HISTORY_TASKS, (prefix, prefix + "\U0010ffff")).fetchall()
        return {str(i): (str(status or ""), digest, bool(tagged)) for i, status, digest, tagged in rows}

    def write_task_signals(self, rows: Sequence[tuple[str, TaskSignals]]) -> None:
        with self.db.write() as cur:
            found = nodes.nodes(cur, "Task", (i for i, _ in rows))
            for task_id, sig in rows:
                props = found.get(task_id)
                if props is None:
                    continue
                props.update(signal_keywords=list(sig.keywords), signal_domains=list(sig.domains),
                             signal_files=list(sig.files_mentioned), signal_types=list(sig.task_types))
                nodes.put_node(cur, "Task", props)
                cur.execute(sql.DELETE_TASK_TAGS, (task_id,))
                nodes.tag(cur, ("Task", task_id), signal_tags(sig))

    def history_source(self, source_id: str) -> dict[str, Any] | None:
        with self.db.read() as cur:
            row = cur.execute(sql_imports.HISTORY_SOURCE_GET, (_SOURCE_KEY + source_id,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def write_history_source(self, props: dict[str, Any]) -> None:
        with self.db.write() as cur:
            cur.execute(sql_imports.HISTORY_SOURCE_PUT, (_SOURCE_KEY + str(props["id"]), nodes.dumps(props)))
