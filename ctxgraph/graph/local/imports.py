"""An import of the project's own files on the embedded store
(:mod:`ctxgraph.sources`; docs/knowledge-import.md): the knowledge it makes,
written whole, and its state, the ``imported_files`` table (``source``,
``path``, the JSON of :class:`~ctxgraph.core.models.ImportedFile`), made by
the first import. Like the anchors, the state is not part of ``stats`` or an
export: it describes a work tree."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from ctxgraph.core.models import ImportBatch, ImportedFile, KnowledgeItem
from ctxgraph.graph.local import nodes, sql, sql_imports
from ctxgraph.graph.local.connection import Connection
from ctxgraph.graph.local.writes import supersede
from ctxgraph.graph.records import knowledge_props


def _remove(cur: sqlite3.Cursor, ids: Sequence[str]) -> None:
    """Delete the knowledge nodes ``ids``, their relationships and their anchors."""
    anchored = cur.execute(sql.ANCHORS_TABLE_EXISTS).fetchone() is not None
    labels = json.dumps(nodes.KNOWLEDGE_LABELS)
    for item_id in ids:
        row = cur.execute(sql.KNOWLEDGE_LABEL, (item_id, labels)).fetchone()
        if row is not None:
            cur.execute(sql_imports.DELETE_NODE_EDGES, (row[0], item_id, row[0], item_id))
            cur.execute(sql_imports.DELETE_NODE, (row[0], item_id))
        if anchored:
            cur.execute(sql_imports.DELETE_OWNER_ANCHORS, (item_id,))


def _put(cur: sqlite3.Cursor, items: Sequence[KnowledgeItem]) -> None:
    """Write ``items`` whole, as ``import_put.cypher`` does: properties and tags
    replaced; a decision something else still supersedes stays superseded."""
    for k in items:
        cur.execute(sql_imports.DELETE_OUT_EDGES, (k.label, k.id, "SUPERSEDES"))
    put = []
    for k in items:
        cur.execute(sql_imports.DELETE_OUT_EDGES, (k.label, k.id, "TAGGED"))
        props = knowledge_props(k)
        if k.kind == "decision" and cur.execute(sql_imports.SUPERSEDED_BY_ANY, (k.label, k.id)).fetchone():
            old = nodes.node(cur, k.label, k.id) or {}
            props.update(status="superseded", valid_from=old.get("valid_from") or props.get("created_at"))
            if old.get("valid_until"):
                props["valid_until"] = old["valid_until"]
        put.append((k.label, {p: v for p, v in props.items() if v is not None}))
    nodes.put_nodes(cur, put)
    nodes.named(cur, "Tag", {t for k in items for t in k.tags})
    nodes.put_edges(cur, [((k.label, k.id), "TAGGED", ("Tag", t), {}) for k in items for t in k.tags])


class Imports:
    """The imports of the project's files (a part of ``LocalStore``)."""

    db: Connection

    def imported_files(self, source: str) -> list[ImportedFile]:
        """What the last import of ``source`` saw of each file, by path."""
        with self.db.read() as cur:
            if cur.execute(sql_imports.IMPORTS_TABLE_EXISTS).fetchone() is None:
                return []
            return [ImportedFile.model_validate_json(r[0]) for r in cur.execute(sql_imports.IMPORTS_OF, (source,))]

    def write_import(self, source: str, batch: ImportBatch) -> None:
        """One write transaction (see ``KnowledgeStore.write_import``)."""
        with self.db.write() as cur:
            _remove(cur, sorted(set(batch.removed)))
            _put(cur, batch.items)
            supersede(cur, batch.supersedes)
            if batch.anchors:
                for statement in sql.ANCHORS_TABLE:
                    cur.execute(statement)
                cur.executemany(sql.ANCHOR_PUT, [(a.id, a.owner, a.path, a.current_path,
                                                  a.model_dump_json(exclude_none=True)) for a in batch.anchors])
            if batch.files or batch.gone:
                for statement in sql_imports.IMPORTS_TABLE:
                    cur.execute(statement)
                cur.executemany(sql_imports.IMPORT_GONE, [(source, p) for p in batch.gone])
                cur.executemany(sql_imports.IMPORT_PUT, [(source, f.path, f.model_dump_json()) for f in batch.files])
