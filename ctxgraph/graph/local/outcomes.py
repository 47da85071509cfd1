"""Context outcomes on the embedded store: the ``deliveries`` table.

One row per delivered context (``id``, ``task_id``, ``at`` and the record's
compact JSON; ``score`` once its task's handoff scored it), indexed by task
and by time. Its writes leave the graph's generation as it is
(``sql.GRAPH_GENERATION``): the history and tag caches, which never read this
table, stay valid, so recording a context does not make the next one, in
this process or another, rebuild them. A store written before this table
existed gets it on its next writing open; read-only, it reads as empty.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from ctxgraph.graph.local import sql
from ctxgraph.graph.local.connection import Connection
from ctxgraph.outcomes.records import (
    Delivery,
    DeliveryScore,
    StoredDelivery,
    record_json,
    score_json,
    stored,
    trim_due,
)


def _has_table(cur: sqlite3.Cursor) -> bool:
    return cur.execute(sql.DELIVERIES_TABLE_EXISTS).fetchone() is not None


def clear(cur: sqlite3.Cursor) -> None:
    """Delete every delivery (in the caller's ``clear`` transaction)."""
    if _has_table(cur):
        cur.execute(sql.CLEAR_DELIVERIES)


class Outcomes:
    """The deliveries log (a part of ``LocalStore``)."""

    db: Connection

    def record_deliveries(self, deliveries: Sequence[Delivery], keep: int) -> None:
        """Store ``deliveries`` and, when due (``trim_due``), trim the table to the
        newest ``keep``, in one transaction."""
        if not deliveries:
            return
        with self.db.write() as cur:
            cur.executemany(sql.DELIVERY_INSERT, [(d.id, d.task_id, d.at, record_json(d)) for d in deliveries])
            if trim_due(int(cur.execute(sql.DELIVERY_COUNT).fetchone()[0]), max(1, keep)):
                cur.execute(sql.DELIVERY_TRIM, (max(1, keep),))

    def deliveries(self, *, task_ids: Sequence[str] | None = None, since: str | None = None,
                   last: int | None = None) -> list[StoredDelivery]:
        """Deliveries oldest first: of ``task_ids``, else the newest ``last`` from ``since`` on."""
        with self.db.read() as cur:
            if not _has_table(cur):
                return []
            if task_ids is not None:
                rows = cur.execute(sql.DELIVERIES_BY_TASK, (json.dumps(sorted(set(task_ids))),)).fetchall()
            else:
                rows = cur.execute(sql.DELIVERIES_SINCE, (since or "", -1 if last is None else last)).fetchall()[::-1]
        return [StoredDelivery(id=str(i), task_id=str(t), at=str(a), record=stored(r, "record"),
                               score=stored(s, "score")) for i, t, a, r, s in rows]

    def score_deliveries(self, scores: Sequence[tuple[str, DeliveryScore]]) -> None:
        """Set each delivery's score (deliveries gone since are skipped)."""
        if not scores:
            return
        with self.db.write() as cur:
            cur.executemany(sql.DELIVERY_SCORE, [(score_json(s), delivery_id) for delivery_id, s in scores])

    def handoff_files(self, task_ids: Sequence[str]) -> dict[str, list[str]]:
        """The files each task's handoff created or modified, sorted (tasks without any left out)."""
        found: dict[str, list[str]] = {}
        with self.db.read() as cur:
            for task_id, path in cur.execute(sql.HANDOFF_FILES, (json.dumps(sorted(set(task_ids))),)):
                found.setdefault(str(task_id), []).append(str(path))
        return found
