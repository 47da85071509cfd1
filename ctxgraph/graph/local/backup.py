"""The embedded store's side of export and import (the file format is
``ctxgraph.graph.backup``'s)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ctxgraph.errors import InvalidDocumentError
from ctxgraph.graph.backup import batches, node_row, rel_row, sorted_rows
from ctxgraph.graph.local import memory, nodes, sql
from ctxgraph.graph.local.connection import Connection


class Backup:
    """Export and import (a part of ``LocalStore``)."""

    db: Connection

    def export_rows(self) -> Iterator[dict[str, Any]]:
        """The whole graph as export rows (see ``KnowledgeStore.export_rows``),
        read in one transaction and yielded after it ends."""
        with self.db.read() as cur:
            found = cur.execute(sql.EXPORT_NODES).fetchall()
            edges = cur.execute(sql.EXPORT_EDGES).fetchall()
        yield from sorted_rows(
            (node_row(label, node_id, nodes.loads(props)) for label, node_id, props in found),
            (rel_row(rel, (sl, si), (dl, di), nodes.loads(props)) for rel, sl, si, dl, di, props in edges),
        )

    def import_rows(self, rows: Iterable[dict[str, Any]]) -> None:
        """Write export rows with MERGE semantics, one transaction per batch
        (see ``KnowledgeStore.import_rows``)."""
        for kind, batch in batches(rows):
            with self.db.write() as cur:
                if kind == "node":
                    memory.bump_generation(cur)
                    for row in batch:
                        nodes.put_node(cur, row["label"], row["props"])
                    continue
                for row in batch:
                    src, dst = (row["src"][0], row["src"][1]), (row["dst"][0], row["dst"][1])
                    for end in (src, dst):
                        if cur.execute(sql.NODE_EXISTS, end).fetchone() is None:
                            raise InvalidDocumentError(
                                "<import>", [("", f"{row['type']} relationship: no {end[0]} node {end[1]!r}")]
                            )
                    nodes.put_edge(cur, src, row["type"], dst, row["props"])
