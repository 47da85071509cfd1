"""The schema (``schema.cypher``: constraints and indexes) and what the store
keeps derived on it: each file's history counts, ``touches`` and ``task_len``
(``files_refresh.cypher``), recounted in the transaction of every write that
changes them, after an import, and once for a graph written before they were kept."""

from __future__ import annotations

from collections.abc import Sequence

from neo4j import ManagedTransaction

from ctxgraph import cypher
from ctxgraph.graph.neo4j_store.connection import Neo4jConnection

_REFRESH_BATCH = 5_000  # files recounted per transaction (imports, old graphs)


class Schema(Neo4jConnection):
    def init_schema(self) -> None:
        self._refuse_write("applying the schema")

        def run() -> None:
            self.transactions["schema"] += 1
            with self._session() as session:
                for statement in cypher.statements("schema"):
                    session.run(statement).consume()

        self._call(run)
        self._refresh_stale_files()

    def _touched_files(self, tx: ManagedTransaction, *, tasks: Sequence[str] = (),
                       handoffs: Sequence[str] = ()) -> list[str]:
        """Paths the handoffs of ``tasks`` (or the ``handoffs``) created or modified."""
        return [r["path"] for r in self._rows(tx, "files_touched_by", ids=list(tasks), handoffs=list(handoffs))]

    def _refresh_files(self, tx: ManagedTransaction, paths: Sequence[str]) -> None:
        """Recount ``touches`` and ``task_len`` of the files at ``paths`` (same transaction)."""
        if paths:
            tx.run(cypher.load("files_refresh"), paths=sorted(set(paths))).consume()

    def refresh_all_files(self) -> None:
        """Recount every file's history, ``_REFRESH_BATCH`` files per write
        transaction (after an import, whose rows replace the counts)."""
        paths = [r["path"] for r in self._read(lambda tx: self._rows(tx, "files_paths"))]
        for start in range(0, len(paths), _REFRESH_BATCH):
            part = paths[start:start + _REFRESH_BATCH]

            def work(tx: ManagedTransaction, part: list[str] = part) -> None:
                self._refresh_files(tx, part)

            self._write(work)

    def _refresh_stale_files(self) -> None:
        """Count the history of files never counted (a graph written before the
        counts were kept on File): once, when the schema is applied."""
        seen: set[str] = set()
        while True:
            paths = [r["path"] for r in self._read(lambda tx: self._rows(tx, "files_stale", batch=_REFRESH_BATCH))]
            if not paths or seen.issuperset(paths):  # nothing left (or nothing a recount can set)
                return
            seen.update(paths)

            def work(tx: ManagedTransaction, paths: list[str] = paths) -> None:
                self._refresh_files(tx, paths)

            self._write(work)
