"""``Neo4jStore``: the parts of the store by concern, composed into one class."""

from __future__ import annotations

from collections.abc import Sequence

from neo4j import ManagedTransaction

from ctxgraph.core.models import Candidates, GatherQuery, HistoryEvidence
from ctxgraph.graph.neo4j_store.backup import Backup
from ctxgraph.graph.neo4j_store.connection import Neo4jSettings, verified_driver
from ctxgraph.graph.neo4j_store.history import History, history_of_row
from ctxgraph.graph.neo4j_store.memory import Memory
from ctxgraph.graph.neo4j_store.outcomes import Outcomes
from ctxgraph.graph.neo4j_store.reads import Reads
from ctxgraph.graph.neo4j_store.writes import Writes


class Neo4jStore(Writes, Reads, History, Memory, Outcomes, Backup):
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
        # One managed read transaction for both statements (finding 6 of
        # benchmarks/README.md): the nested reads join it (see ``_read``).
        def work(tx: ManagedTransaction) -> tuple[Candidates, HistoryEvidence]:
            # the history statement also reads the query tags' degrees the gather's weights need
            row = self._history_row(tx, terms, top_files, vector, [*query.keywords, *query.domains])
            history = history_of_row(row)
            dfs = {name: df for name, df in row["tag_dfs"]}
            found = self._gather(tx, query.model_copy(update={"context_map": not history.files}), dfs,
                                 row["tagged_total"])
            return found, history

        return self._read(work)
