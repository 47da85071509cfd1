"""Context outcomes on the embedded store: the ``deliveries`` table.

One row per delivered context (``id``, ``task_id``, ``at`` and the record's
compact JSON; ``score`` once its task's handoff scored it), indexed by task
and by time. Its writes do not count as changes of the graph
(``LocalStore._write(counted=False)``): the history and tag caches, which
never read this table, stay valid, so recording a context does not make the
next one rebuild them. (Another process on the same file still sees the file
change, as with any write.) A store written before this table existed gets
it on its next writing open; read-only, it reads as empty.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxgraph.graph.outcome_records import (
    Delivery,
    DeliveryScore,
    StoredDelivery,
    record_json,
    score_json,
    stored,
    trim_due,
)

if TYPE_CHECKING:
    import sqlite3

    from ctxgraph.graph.local import LocalStore

_INSERT = "INSERT OR REPLACE INTO deliveries (id, task_id, at, record, score) VALUES (?, ?, ?, ?, NULL)"
# The newest ``keep`` stay: everything before the keep-th newest (by time, then id) goes.
_TRIM = """
DELETE FROM deliveries WHERE (at, id) < (
  SELECT at, id FROM deliveries INDEXED BY deliveries_by_at ORDER BY at DESC, id DESC LIMIT 1 OFFSET ?1 - 1)
"""
_SELECT = "SELECT id, task_id, at, record, score FROM deliveries"
_BY_TASK = _SELECT + " WHERE task_id IN (SELECT value FROM json_each(?)) ORDER BY at, id"
_SINCE = _SELECT + " WHERE at >= ? ORDER BY at DESC, id DESC LIMIT ?"
_HANDOFF_FILES = """
SELECT h.src_id, f.dst_id
FROM json_each(?1) t
JOIN edges h ON h.src_label = 'Task' AND h.src_id = t.value AND h.type = 'HANDED_OFF' AND h.dst_label = 'Handoff'
JOIN edges f
  ON f.src_label = 'Handoff' AND f.src_id = h.dst_id AND f.type IN ('CREATED', 'MODIFIED') AND f.dst_label = 'File'
ORDER BY h.src_id, f.dst_id
"""


def _has_table(cur: sqlite3.Cursor) -> bool:
    return cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'deliveries'").fetchone() \
        is not None


def record(store: LocalStore, deliveries: Sequence[Delivery], keep: int) -> None:
    """Store ``deliveries`` and, when due (``trim_due``), trim the table to the
    newest ``keep``, in one transaction."""
    if not deliveries:
        return
    with store._write(counted=False) as cur:
        cur.executemany(_INSERT, [(d.id, d.task_id, d.at, record_json(d)) for d in deliveries])
        if trim_due(int(cur.execute("SELECT count(*) FROM deliveries").fetchone()[0]), max(1, keep)):
            cur.execute(_TRIM, (max(1, keep),))


def read(store: LocalStore, *, task_ids: Sequence[str] | None = None, since: str | None = None,
         last: int | None = None) -> list[StoredDelivery]:
    """Deliveries oldest first: of ``task_ids``, else the newest ``last`` from ``since`` on."""
    with store._read() as cur:
        if not _has_table(cur):
            return []
        if task_ids is not None:
            rows = cur.execute(_BY_TASK, (json.dumps(sorted(set(task_ids))),)).fetchall()
        else:
            rows = cur.execute(_SINCE, (since or "", -1 if last is None else last)).fetchall()[::-1]
    return [StoredDelivery(id=str(i), task_id=str(t), at=str(a), record=stored(r, "record"), score=stored(s, "score"))
            for i, t, a, r, s in rows]


def save_scores(store: LocalStore, scores: Sequence[tuple[str, DeliveryScore]]) -> None:
    """Set each delivery's score (deliveries gone since are skipped)."""
    if not scores:
        return
    with store._write(counted=False) as cur:
        cur.executemany("UPDATE deliveries SET score = ? WHERE id = ?",
                        [(score_json(s), delivery_id) for delivery_id, s in scores])


def handoff_files(store: LocalStore, task_ids: Sequence[str]) -> dict[str, list[str]]:
    """The files each task's handoff created or modified, sorted (tasks without any left out)."""
    found: dict[str, list[str]] = {}
    with store._read() as cur:
        for task_id, path in cur.execute(_HANDOFF_FILES, (json.dumps(sorted(set(task_ids))),)):
            found.setdefault(str(task_id), []).append(str(path))
    return found


def clear(cur: sqlite3.Cursor) -> None:
    """Delete every delivery (in the caller's ``clear`` transaction)."""
    if _has_table(cur):
        cur.execute("DELETE FROM deliveries")
