"""``Neo4jStore``: the parts of the store by concern, composed into one class."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, wait
from typing import Any

from neo4j import ManagedTransaction

from ctxgraph.core.models import Candidates, GatherQuery, HistoryEvidence
from ctxgraph.graph.neo4j_store.anchors import Anchors
from ctxgraph.graph.neo4j_store.backup import Backup
from ctxgraph.graph.neo4j_store.connection import Neo4jSettings, verified_driver
from ctxgraph.graph.neo4j_store.history import History, history_of_row
from ctxgraph.graph.neo4j_store.history_import import HistoryImport
from ctxgraph.graph.neo4j_store.imports import Imports
from ctxgraph.graph.neo4j_store.memory import Memory
from ctxgraph.graph.neo4j_store.outcomes import Outcomes
from ctxgraph.graph.neo4j_store.reads import Reads, candidates_of_row
from ctxgraph.graph.neo4j_store.writes import Writes


class Neo4jStore(Writes, Reads, History, Memory, Outcomes, Anchors, Imports, HistoryImport, Backup):
    """The store on a Neo4j server. Use :meth:`connect`, or pass your own driver."""

    @classmethod
    def connect(cls, settings: Neo4jSettings, *, read_only: bool = False) -> Neo4jStore:
        """Connect and check the credentials; apply the schema unless ``read_only``."""
        store = cls(verified_driver(settings), database=settings.database, location=settings.uri,
                    read_only=read_only)
        store.max_retry_time = settings.max_retry_time
        if not read_only:
            try:
                store.init_schema()
            except BaseException:
                store.close()
                raise
        return store

    def gather_with_history(
        self, query: GatherQuery, terms: Sequence[str], top_files: int = 10,
        vector: Sequence[float] | None = None,
    ) -> tuple[Candidates, HistoryEvidence]:
        # The history on this thread and, beside it on the store's workers, the
        # files' text ranking and the neighbours by vector (which the history
        # asks for once its tasks' text ranking is done), then the query tags'
        # degrees and the gather (whose rarity weights need them) in one read
        # transaction: a context waits for the longest of these, not for all
        # (benchmarks/README.md, issue 18 steps 5 and 6; issue 28 for the
        # neighbours and the files). The context map's candidates are only
        # wanted when the history has no files (an empty graph): then the
        # gather runs again with them.
        tags = [*query.keywords, *query.domains]
        plain = query.model_copy(update={"context_map": False})

        def gather(tx: ManagedTransaction) -> tuple[dict[str, Any], dict[str, int], int]:
            dfs, total = self._tag_stats(tx, tags)
            return self._gather_row(tx, plain, dfs, total), dfs, total

        pool = self._pool()
        files: Future[dict[str, Any] | None] = pool.submit(self._read, lambda tx: self._file_candidates(tx, terms))
        running: list[Future[Any]] = [files]
        neighbours: Future[list[dict[str, Any]]] | None = None
        if vector is not None:
            given = vector
            neighbours = pool.submit(self._read, lambda tx: self._near(tx, terms, given))
            running.append(neighbours)
        pending = pool.submit(self._read, gather)
        running.append(pending)

        def near() -> list[dict[str, Any]]:
            return [] if neighbours is None else neighbours.result()

        try:
            history = history_of_row(*self._read(
                lambda tx: self._history_row(tx, terms, top_files, near, files.result)))
        except BaseException:
            # not left running on the store; the history's error is the one raised
            wait(running)
            raise
        row, dfs, total = pending.result()
        found = candidates_of_row(plain, row, dfs, total)
        if query.context_map and not history.files:
            found = self._read(lambda tx: self._gather(tx, query, dfs, total))
        return found, history
