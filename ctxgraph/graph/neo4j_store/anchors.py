"""Code anchors on Neo4j: ``(:Anchor)`` nodes (issue 32; the properties of
:class:`ctxgraph.core.models.Anchor`).

No relationships: an anchor names its owner (a task id or a knowledge id) by
``owner`` and the task that anchored it by ``task_id``, as a delivery names
its task. ``stats`` and ``export`` leave ``Anchor`` nodes out
(``stats_labels``, ``export_nodes``); ``clear`` deletes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import ManagedTransaction

from ctxgraph import cypher
from ctxgraph.core.models import Anchor
from ctxgraph.graph.neo4j_store.connection import Neo4jConnection


class Anchors(Neo4jConnection):
    def write_anchors(self, anchors: Sequence[Anchor]) -> None:
        """Create or replace ``anchors`` (by id), in one write transaction."""
        if not anchors:
            return
        rows = [a.model_dump(exclude_none=True) for a in anchors]
        self._write(lambda tx: tx.run(cypher.load("anchor_write"), rows=rows).consume())

    def read_anchors(self, owners: Sequence[str] | None = None,
                     paths: Sequence[str] | None = None) -> list[Anchor]:
        """Every anchor (both None), else those of ``owners`` or on ``paths``
        (as named or where the file is now); by id."""
        if owners is None and paths is None:
            rows = self._read(lambda tx: _run(tx, "anchors_all"))
        else:
            o, p = sorted(set(owners or ())), sorted(set(paths or ()))
            rows = self._read(lambda tx: _run(tx, "anchors_of", owners=o, paths=p))
        found = {a.id: a for a in (Anchor.model_validate(r) for row in rows for r in row["anchors"])}
        return [found[k] for k in sorted(found)]


def _run(tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
    return [dict(r) for r in tx.run(cypher.load(name), params)]
