"""An import of the project's own files on Neo4j (:mod:`ctxgraph.sources`;
docs/knowledge-import.md): the knowledge it makes, written whole, and its
state, ``(:ImportedFile)`` nodes keyed ``source:path`` (no relationships;
like ``Anchor``, not part of ``stats`` or an export)."""

from __future__ import annotations

from neo4j import ManagedTransaction

from ctxgraph import cypher
from ctxgraph.core.models import ImportBatch, ImportedFile
from ctxgraph.graph.neo4j_store.connection import Neo4jConnection
from ctxgraph.graph.records import knowledge_props

_FILE_FIELDS = tuple(ImportedFile.model_fields)


class Imports(Neo4jConnection):
    def imported_files(self, source: str) -> list[ImportedFile]:
        """What the last import of ``source`` saw of each file, by path."""
        rows = self._read(lambda tx: self._rows(tx, "import_files", source=source))
        found = [ImportedFile.model_validate({k: f[k] for k in _FILE_FIELDS if k in f})
                 for row in rows for f in row["files"]]
        return sorted(found, key=lambda f: f.path)

    def write_import(self, source: str, batch: ImportBatch) -> None:
        """One write transaction (see ``KnowledgeStore.write_import``)."""
        removed = sorted(set(batch.removed))
        written = sorted({k.id for k in batch.items})
        rows = [{"label": k.label, "props": knowledge_props(k)} for k in batch.items]
        pairs = [{"new": n, "old": o, "at": at} for n, o, at in batch.supersedes]
        anchors = [a.model_dump(exclude_none=True) for a in batch.anchors]
        files = [{**f.model_dump(), "id": f"{source}:{f.path}", "source": source} for f in batch.files]
        gone = [f"{source}:{path}" for path in batch.gone]

        def work(tx: ManagedTransaction) -> None:
            if removed:
                tx.run(cypher.load("import_remove"), ids=removed).consume()
            if written:
                tx.run(cypher.load("import_unlink"), ids=written).consume()
                tx.run(cypher.load("import_put"), rows=rows).consume()
            if pairs:
                tx.run(cypher.load("knowledge_supersede"), pairs=pairs).consume()
            if anchors:
                tx.run(cypher.load("anchor_write"), rows=anchors).consume()
            if files or gone:
                tx.run(cypher.load("import_files_write"), rows=files, gone=gone).consume()

        self._write(work)
