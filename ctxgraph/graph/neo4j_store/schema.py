"""The schema (``schema.cypher``: constraints and indexes) and what the store
keeps derived on it: each file's history counts, ``touches`` and ``task_len``,
and its document in the ``file_text`` full-text index, ``doc``
(``files_refresh.cypher``), recounted in the transaction of every write that
changes them, after an import, and once for a graph written before they were
kept; likewise each finished task's ``task_text`` document (its ``doc``, kept
by every write of a task's status or text). Both keep the statistics the
history's BM25 is computed from exact (``tasks_doc``, ``files_refresh``):
Lucene's own count the rewritten documents until its segments merge."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from neo4j import ManagedTransaction
from neo4j import exceptions as neo4j_errors

from ctxgraph import cypher
from ctxgraph.graph.neo4j_store.connection import Neo4jConnection

#: Tries of a schema statement that fails transiently (two servers applying the
#: schema of a new database at once: one gets DeadlockDetected); each is idempotent.
_SCHEMA_TRIES = 5
_REFRESH_BATCH = 5_000  # files recounted (or tasks given their document) per transaction


class Schema(Neo4jConnection):
    def init_schema(self) -> None:
        self._refuse_write("applying the schema")

        def run() -> None:
            self.transactions["schema"] += 1
            with self._session() as session:
                for statement in cypher.statements("schema"):  # each IF NOT EXISTS: idempotent, so tried again
                    for attempt in range(1, _SCHEMA_TRIES + 1):
                        try:
                            session.run(statement).consume()
                            break
                        except neo4j_errors.TransientError:
                            if attempt == _SCHEMA_TRIES:
                                raise
                            time.sleep(0.1 * attempt)

        self._call(run)
        if not self.read_only:
            self._drop_mentions()
        if not self.read_only and not self._read(lambda tx: self._rows(tx, "text_stats_state"))[0]["kept"]:
            self.recount_text()
        self._fill_stale(lambda tx: [r["id"] for r in self._rows(tx, "tasks_stale", batch=_REFRESH_BATCH)],
                         self._task_docs)
        self._fill_stale(lambda tx: [r["path"] for r in self._rows(tx, "files_stale", batch=_REFRESH_BATCH)],
                         self._refresh_files)

    def _touched_files(self, tx: ManagedTransaction, *, tasks: Sequence[str] = (),
                       handoffs: Sequence[str] = ()) -> list[str]:
        """Paths the handoffs of ``tasks`` (or the ``handoffs``) created or modified."""
        return [r["path"] for r in self._rows(tx, "files_touched_by", ids=list(tasks), handoffs=list(handoffs))]

    def _refresh_files(self, tx: ManagedTransaction, paths: Sequence[str], *, fresh: bool = False) -> None:
        """Recount ``touches``, ``task_len`` and ``doc`` of the files at ``paths``
        (same transaction); ``fresh``: as :meth:`_task_docs`."""
        if paths:
            tx.run(cypher.load("files_refresh"), paths=sorted(set(paths)), fresh=fresh).consume()

    def _task_docs(self, tx: ManagedTransaction, ids: Sequence[str], *, fresh: bool = False) -> None:
        """Set the ``task_text`` document of the tasks ``ids`` (same
        transaction); ``fresh``: counted as new documents (a recount from zero)."""
        if ids:
            tx.run(cypher.load("tasks_doc"), ids=sorted(set(ids)), fresh=fresh).consume()

    def recount_text(self) -> None:
        """Count the statistics of the full-text indexes from zero: every term's
        frequencies forgotten, then every task's and file's document set again,
        ``_REFRESH_BATCH`` per write transaction (a graph written before they
        were kept)."""
        while self._write(lambda tx: int(self._rows(tx, "text_stats_reset", batch=_REFRESH_BATCH)[0]["reset"])):
            pass
        self.refresh_all_tasks(fresh=True)
        self.refresh_all_files(fresh=True)

    def refresh_all_tasks(self, *, fresh: bool = False) -> None:
        """Set every task's ``task_text`` document again, ``_REFRESH_BATCH``
        tasks per write transaction (after an import)."""
        ids = [r["id"] for r in self._read(lambda tx: self._rows(tx, "tasks_ids"))]
        for start in range(0, len(ids), _REFRESH_BATCH):
            part = ids[start:start + _REFRESH_BATCH]

            def work(tx: ManagedTransaction, part: list[str] = part) -> None:
                self._task_docs(tx, part, fresh=fresh)

            self._write(work)

    def refresh_all_files(self, *, fresh: bool = False) -> None:
        """Recount every file's history, ``_REFRESH_BATCH`` files per write
        transaction (after an import, whose rows replace the counts)."""
        paths = [r["path"] for r in self._read(lambda tx: self._rows(tx, "files_paths"))]
        for start in range(0, len(paths), _REFRESH_BATCH):
            part = paths[start:start + _REFRESH_BATCH]

            def work(tx: ManagedTransaction, part: list[str] = part) -> None:
                self._refresh_files(tx, part, fresh=fresh)

            self._write(work)

    def _drop_mentions(self) -> None:
        """Delete the MENTIONS relationships a graph written by an older
        ctxgraph has (``mentions_drop``), ``_REFRESH_BATCH`` per transaction;
        when there is none, one read of the relationship type's index."""
        while self._write(lambda tx: self._rows(tx, "mentions_drop", batch=_REFRESH_BATCH))[0]["deleted"]:
            pass

    def _fill_stale(self, stale: Callable[[ManagedTransaction], list[str]],
                    fill: Callable[[ManagedTransaction, Sequence[str]], None]) -> None:
        """Fill what a graph written by an older ctxgraph lacks, once, when the
        schema is applied: ``stale`` reads the keys of up to ``_REFRESH_BATCH``
        nodes lacking it — the files never counted or rankable without their
        document, the finished tasks without theirs — and ``fill`` writes it.
        When nothing is stale the test is one read (the ``File`` label, the
        finished tasks through the status index, one property test each)."""
        seen: set[str] = set()
        while True:
            keys = self._read(stale)
            if not keys or seen.issuperset(keys):  # nothing left (or nothing a recount can set)
                return
            seen.update(keys)

            def work(tx: ManagedTransaction, keys: list[str] = keys) -> None:
                fill(tx, keys)

            self._write(work)

