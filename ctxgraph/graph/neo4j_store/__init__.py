"""Neo4jStore: the knowledge graph on a Neo4j 5.26 server.

Every statement is a parameterized file in ``ctxgraph/cypher``; writes run in
managed write transactions (retried by the driver on transient errors — a
deadlock, a leader switch, a server that went away and came back — for up to
``Neo4jSettings.max_retry_time`` seconds) and reads in managed read
transactions (routed to readers on a cluster). The driver is created by
:meth:`Neo4jStore.connect` or handed in by the caller; ``__init__`` does no IO.

``Neo4jStore.connect(settings, read_only=True)`` applies no schema and opens
every session with READ access: the server itself refuses a write in it.

The parts, by concern: ``connection`` (settings, the driver, error translation,
transactions), ``schema`` (constraints, indexes, the files' history counts and
the history's full-text documents), ``writes``, ``reads`` (tags, gather, tasks,
files), ``history`` (evidence, task vectors, the replay corpus), ``memory``
(chunks), ``outcomes`` (deliveries) and ``backup`` (export and import);
``store`` composes them into ``Neo4jStore``.
"""

from ctxgraph.graph.neo4j_store.connection import DEFAULT_MAX_RETRY_TIME as DEFAULT_MAX_RETRY_TIME
from ctxgraph.graph.neo4j_store.connection import RETRY_TIME_ENV as RETRY_TIME_ENV
from ctxgraph.graph.neo4j_store.connection import Neo4jSettings as Neo4jSettings
from ctxgraph.graph.neo4j_store.connection import make_driver as make_driver
from ctxgraph.graph.neo4j_store.reads import CLOSURE_MAX_LEVELS as CLOSURE_MAX_LEVELS
from ctxgraph.graph.neo4j_store.reads import CLOSURE_PATTERN_STARTS as CLOSURE_PATTERN_STARTS
from ctxgraph.graph.neo4j_store.store import Neo4jStore as Neo4jStore

__all__ = [
    "CLOSURE_MAX_LEVELS",
    "CLOSURE_PATTERN_STARTS",
    "DEFAULT_MAX_RETRY_TIME",
    "RETRY_TIME_ENV",
    "Neo4jSettings",
    "Neo4jStore",
    "make_driver",
]
