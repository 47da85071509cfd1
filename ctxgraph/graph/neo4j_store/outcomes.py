"""Context outcomes on Neo4j: ``(:Delivery {id, task_id, at, record, score})`` nodes.

No relationships: a delivery names its task by ``task_id`` (a context may be
computed for a task not stored yet). A scored delivery also carries its
score's figures as properties for Cypher — ``hit5``, ``hit10``, ``changed``,
``files``, ``items``, ``items_used``, ``wasted_tokens`` — read by the saved
query ``analyst/context_outcomes.cypher``. ``stats`` and ``export`` leave
``Delivery`` nodes out (``stats_labels``, ``export_nodes``); ``clear`` deletes them.

Its statements run through ``tx.run`` directly: ``statements_run`` does not count them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import ManagedTransaction

from ctxgraph import cypher
from ctxgraph.graph.neo4j_store.connection import Neo4jConnection
from ctxgraph.outcomes.records import (
    Delivery,
    DeliveryScore,
    StoredDelivery,
    record_json,
    score_json,
    score_props,
    stored,
    trim_due,
)


class Outcomes(Neo4jConnection):
    def record_deliveries(self, deliveries: Sequence[Delivery], keep: int) -> None:
        """Store ``deliveries`` and keep the newest ``keep``, in one write transaction
        (the oldest are deleted only when the count store says it is due: ``trim_due``)."""
        if not deliveries:
            return
        rows = [{"id": d.id, "task_id": d.task_id, "at": d.at, "record": record_json(d)} for d in deliveries]
        cap = max(1, keep)

        def work(tx: ManagedTransaction) -> None:
            tx.run(cypher.load("delivery_write"), rows=rows).consume()
            count = int(_run(tx, "delivery_count")[0]["n"])
            if trim_due(count, cap):
                tx.run(cypher.load("delivery_trim"), excess=count - cap).consume()

        self._write(work)

    def deliveries(self, *, task_ids: Sequence[str] | None = None, since: str | None = None,
                   last: int | None = None) -> list[StoredDelivery]:
        """Deliveries oldest first: of ``task_ids``, else the newest ``last`` from ``since`` on."""
        if task_ids is not None:
            ids = sorted(set(task_ids))
            rows = self._read(lambda tx: _run(tx, "deliveries_of_tasks", ids=ids))
            return [_stored(r) for r in rows]
        rows = self._read(lambda tx: _run(tx, "deliveries_since", since=since or "", last=last))
        return [_stored(r) for r in reversed(rows)]

    def score_deliveries(self, scores: Sequence[tuple[str, DeliveryScore]]) -> None:
        if not scores:
            return
        rows = [{"id": i, "score": score_json(s), "props": score_props(s)} for i, s in scores]
        self._write(lambda tx: tx.run(cypher.load("delivery_score"), rows=rows).consume())

    def handoff_files(self, task_ids: Sequence[str]) -> dict[str, list[str]]:
        ids = sorted(set(task_ids))
        rows = self._read(lambda tx: _run(tx, "handoff_files", ids=ids))
        return {str(r["task_id"]): sorted(r["paths"]) for r in rows if r["paths"]}


def _run(tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
    """The rows of the shipped statement ``name`` (not counted in ``statements_run``)."""
    return [dict(r) for r in tx.run(cypher.load(name), params)]


def _stored(r: dict[str, Any]) -> StoredDelivery:
    return StoredDelivery(id=str(r["id"]), task_id=str(r["task_id"]), at=str(r["at"]),
                          record=stored(r["record"], "record"), score=stored(r["score"], "score"))
