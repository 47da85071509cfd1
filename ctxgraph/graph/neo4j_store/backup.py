"""Export and import (the file format: ``ctxgraph.graph.backup``): the whole
graph read in one read transaction, written back with MERGE semantics."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from neo4j import ManagedTransaction

from ctxgraph import cypher
from ctxgraph.errors import CtxgraphError, InvalidDocumentError
from ctxgraph.graph.backup import KNOWLEDGE_LABELS, node_row, rel_row, sorted_rows
from ctxgraph.graph.backup import batches as backup_batches
from ctxgraph.graph.neo4j_store.schema import Schema


class Backup(Schema):
    def export_rows(self) -> Iterator[dict[str, Any]]:
        """The whole graph as export rows (see ``KnowledgeStore.export_rows``),
        read in one read transaction; the shared ``Knowledge`` label is left out."""

        def work(tx: ManagedTransaction) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            return self._rows(tx, "export_nodes"), self._rows(tx, "export_relationships")

        nodes, rels = self._read(work)
        yield from sorted_rows(
            (node_row(_export_label(r["labels"], r["props"].get("id")), r["props"]["id"], _exported(r["props"]))
             for r in nodes),
            (rel_row(r["type"], (_export_label(r["src_labels"], r["src_id"]), r["src_id"]),
                     (_export_label(r["dst_labels"], r["dst_id"]), r["dst_id"]), r["props"])
             for r in rels),
        )

    def import_rows(self, rows: Iterable[dict[str, Any]]) -> None:
        """Write export rows with MERGE semantics, one managed write transaction
        per batch (see ``KnowledgeStore.import_rows``)."""
        for kind, batch in backup_batches(rows):
            if kind == "node":
                nodes = [{"label": r["label"], "id": r["id"], "props": r["props"]} for r in batch]

                def write_nodes(tx: ManagedTransaction, nodes: list[dict[str, Any]] = nodes) -> None:
                    tx.run(cypher.load("import_nodes"), rows=nodes, knowledge_labels=list(KNOWLEDGE_LABELS)).consume()

                self._write(write_nodes)
                continue
            rels = [{"n": i, "type": r["type"], "src": r["src"], "dst": r["dst"], "props": r["props"]}
                    for i, r in enumerate(batch)]

            def work(tx: ManagedTransaction, rels: list[dict[str, Any]] = rels) -> None:
                written = set(self._rows(tx, "import_relationships", rows=rels)[0]["written"])
                for rel in rels:
                    if rel["n"] not in written:  # raising rolls the batch back
                        raise InvalidDocumentError("<import>", [("", (
                            f"{rel['type']} relationship {rel['src']!r} -> {rel['dst']!r}: "
                            "an end is not in the store"))])

            self._write(work)
        self.refresh_all_tasks()
        self.refresh_all_files()


def _exported(props: dict[str, Any]) -> dict[str, Any]:
    """A node's properties as exported: without what the store derives — the
    history counts kept on File (``files_refresh``) and the documents of the
    full-text indexes (``doc`` on Task and File) and their statistics
    (``task_df``/``file_df`` on Term), which the embedded store does not keep
    and an import recomputes, and a task's text vectors (``embed-tasks`` and
    its contexts make them again)."""
    if any(k in props for k in _DERIVED):
        return {k: v for k, v in props.items() if k not in _DERIVED}
    return props


_DERIVED = ("touches", "task_len", "doc", "embedding", "embedding_hash", "query_vector", "query_hash", "task_df",
            "file_df")


def _export_label(labels: list[str], node_id: Any) -> str:
    """A node's one specific label (``Knowledge`` already left out), for an export."""
    if len(labels) != 1 or not isinstance(node_id, str):
        raise CtxgraphError(
            f"cannot export a node with labels {labels!r} and id {node_id!r}: "
            "every node needs one ctxgraph label and a text id"
        )
    return labels[0]
