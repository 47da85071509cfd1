"""The embedded store's SQL for its connection, transactions and schema
(tables, triggers, the kept aggregates, the schema's version), beside
:mod:`.sql`'s statements, which re-exports these: code names them
``sql.NAME``. Values are always bound (``?``); the busy timeout, an integer,
is the one formatted in, since a PRAGMA takes no parameter."""

from __future__ import annotations

# -- connection, transactions and schema -----------------------------------------------


def busy_timeout(ms: int) -> str:
    return f"PRAGMA busy_timeout = {ms}"


JOURNAL_WAL = "PRAGMA journal_mode = WAL"
#: Leaving WAL mode (needs the only connection to the file): how an empty store is deleted safely.
JOURNAL_DELETE = "PRAGMA journal_mode = DELETE"
SYNCHRONOUS_NORMAL = "PRAGMA synchronous = NORMAL"
FOREIGN_KEYS_OFF = "PRAGMA foreign_keys = OFF"
PROBE = "SELECT count(*) FROM sqlite_master"
#: Changes by other connections: what a store without the graph's generation (below) is keyed on.
DATA_VERSION = "PRAGMA data_version"
BEGIN = "BEGIN"
BEGIN_IMMEDIATE = "BEGIN IMMEDIATE"
BEGIN_EXCLUSIVE = "BEGIN EXCLUSIVE"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"

#: Statements separated by ";" (run one by one on every writing open).
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
    label TEXT NOT NULL,
    id    TEXT NOT NULL,
    props TEXT NOT NULL,
    PRIMARY KEY (label, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS edges (
    src_label TEXT NOT NULL,
    src_id    TEXT NOT NULL,
    type      TEXT NOT NULL,
    dst_label TEXT NOT NULL,
    dst_id    TEXT NOT NULL,
    props     TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (src_label, src_id, type, dst_label, dst_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS task_vectors (
    id        TEXT PRIMARY KEY,
    text_hash TEXT NOT NULL,
    vec       BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS task_queries (
    id        TEXT PRIMARY KEY,
    text_hash TEXT NOT NULL,
    vec       BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deliveries (
    id      TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    at      TEXT NOT NULL,
    record  TEXT,
    score   TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS deliveries_by_task ON deliveries (task_id);
CREATE INDEX IF NOT EXISTS deliveries_by_at ON deliveries (at, id);
CREATE INDEX IF NOT EXISTS edges_by_dst ON edges (dst_label, dst_id, type);
CREATE INDEX IF NOT EXISTS edges_by_type ON edges (type, src_label);
CREATE INDEX IF NOT EXISTS tasks_finished ON nodes (coalesce(json_extract(props, '$.completed_at'), '') DESC, id DESC)
    WHERE label = 'Task' AND json_extract(props, '$.status') IN ('completed', 'failed');
CREATE INDEX IF NOT EXISTS tasks_blocked ON nodes (coalesce(json_extract(props, '$.blocked_at'), ''), id)
    WHERE label = 'Task' AND json_extract(props, '$.status') = 'blocked';
CREATE INDEX IF NOT EXISTS tasks_in_progress ON nodes (coalesce(json_extract(props, '$.updated_at'), '') DESC, id)
    WHERE label = 'Task' AND json_extract(props, '$.status') = 'in_progress';
"""
#: The graph's generation: what the caches of the history and the tags are
#: keyed on (``Connection.version``). Bumped by triggers on every change of a
#: node, an edge or a task vector (so also when another process or program
#: writes the file), except the associative memory's chunks and index runs
#: (``Chunk`` and ``Project`` nodes: their own generation, ``MEMORY_GENERATION``)
#: and what no cache holds (the deliveries log, the anchors, the tasks' query
#: vectors): keyed on every change (``PRAGMA data_version``), a context another
#: process recorded, or a batch it indexed, made this one's next context
#: rebuild the history's corpus (about 25 s at 1,000,000 nodes). Made, when
#: missing, by every writing open; a store without it (an older one opened
#: read-only) is keyed on ``PRAGMA data_version``.
GRAPH_GENERATION = "SELECT value FROM meta WHERE key = 'graph_generation'"


_BUMP = " BEGIN UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'graph_generation'; END"
_NEW_NODE = " WHEN NEW.label NOT IN ('Chunk', 'Project')"
_OLD_NODE = " WHEN OLD.label NOT IN ('Chunk', 'Project')"
_NEW_EDGE = " WHEN NEW.src_label NOT IN ('Chunk', 'Project')"
_OLD_EDGE = " WHEN OLD.src_label NOT IN ('Chunk', 'Project')"
_GENERATION_NODE_ADD = (
    "CREATE TRIGGER IF NOT EXISTS graph_generation_node_add AFTER INSERT ON nodes" + _NEW_NODE + _BUMP)
_GENERATION_NODE_CHANGE = (
    "CREATE TRIGGER IF NOT EXISTS graph_generation_node_change AFTER UPDATE ON nodes" + _NEW_NODE + _BUMP)
_GENERATION_EDGE_ADD = (
    "CREATE TRIGGER IF NOT EXISTS graph_generation_edge_add AFTER INSERT ON edges" + _NEW_EDGE + _BUMP)
_GENERATION_EDGE_CHANGE = (
    "CREATE TRIGGER IF NOT EXISTS graph_generation_edge_change AFTER UPDATE ON edges" + _NEW_EDGE + _BUMP)
GRAPH_GENERATION_MAKE = (
    "INSERT INTO meta (key, value) VALUES ('graph_generation', '0') ON CONFLICT (key) DO NOTHING",
    _GENERATION_NODE_ADD,
    _GENERATION_NODE_CHANGE,
    "CREATE TRIGGER IF NOT EXISTS graph_generation_node_remove AFTER DELETE ON nodes" + _OLD_NODE + _BUMP,
    _GENERATION_EDGE_ADD,
    _GENERATION_EDGE_CHANGE,
    "CREATE TRIGGER IF NOT EXISTS graph_generation_edge_remove AFTER DELETE ON edges" + _OLD_EDGE + _BUMP,
    "CREATE TRIGGER IF NOT EXISTS graph_generation_vector_add AFTER INSERT ON task_vectors" + _BUMP,
    "CREATE TRIGGER IF NOT EXISTS graph_generation_vector_change AFTER UPDATE ON task_vectors" + _BUMP,
    "CREATE TRIGGER IF NOT EXISTS graph_generation_vector_remove AFTER DELETE ON task_vectors" + _BUMP,
)


#: What the store keeps at write time, by triggers (so also when another program
#: writes the file): nodes per label and TAGGED edges per tag (the tag rarity's
#: ``n`` and ``df``, the context map's size), read by key instead of counted per
#: read. Created and filled from the graph by the first writing open of a store
#: without them, or with an older version of them (``meta`` key ``aggregates``),
#: in that open's transaction. (Version 1 also kept each task's status and
#: completion time for the related tasks' SQL, which the history's cached tags
#: replaced: its table and triggers are dropped.)
AGGREGATES_VERSION = "2"
AGGREGATES_VERSION_GET = "SELECT value FROM meta WHERE key = 'aggregates'"
AGGREGATES_VERSION_SET = (
    "INSERT INTO meta (key, value) VALUES ('aggregates', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
AGGREGATES_DROP = (
    "DROP TRIGGER IF EXISTS label_counts_add",
    "DROP TRIGGER IF EXISTS label_counts_remove",
    "DROP TRIGGER IF EXISTS tag_degrees_add",
    "DROP TRIGGER IF EXISTS tag_degrees_remove",
    "DROP TRIGGER IF EXISTS task_state_add",
    "DROP TRIGGER IF EXISTS task_state_change",
    "DROP TRIGGER IF EXISTS task_state_remove",
    "DROP TABLE IF EXISTS label_counts",
    "DROP TABLE IF EXISTS tag_degrees",
    "DROP TABLE IF EXISTS task_state",
)
_LABEL_COUNTS_ADD = """CREATE TRIGGER label_counts_add AFTER INSERT ON nodes BEGIN
         INSERT INTO label_counts (label, n) VALUES (NEW.label, 1) ON CONFLICT (label) DO UPDATE SET n = n + 1;
       END"""
_TAG_DEGREES_ADD = """CREATE TRIGGER tag_degrees_add AFTER INSERT ON edges
       WHEN NEW.type = 'TAGGED' AND NEW.dst_label = 'Tag' BEGIN
         INSERT INTO tag_degrees (tag, n) VALUES (NEW.dst_id, 1) ON CONFLICT (tag) DO UPDATE SET n = n + 1;
       END"""
AGGREGATES = (
    "CREATE TABLE label_counts (label TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE tag_degrees (tag TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID",
    _LABEL_COUNTS_ADD,
    """CREATE TRIGGER label_counts_remove AFTER DELETE ON nodes BEGIN
         UPDATE label_counts SET n = n - 1 WHERE label = OLD.label;
       END""",
    _TAG_DEGREES_ADD,
    """CREATE TRIGGER tag_degrees_remove AFTER DELETE ON edges
       WHEN OLD.type = 'TAGGED' AND OLD.dst_label = 'Tag' BEGIN
         UPDATE tag_degrees SET n = n - 1 WHERE tag = OLD.dst_id;
       END""",
    # filled from the graph as it is
    "INSERT INTO label_counts (label, n) SELECT label, count(*) FROM nodes GROUP BY label",
    "INSERT INTO tag_degrees (tag, n) SELECT dst_id, count(*) FROM edges INDEXED BY edges_by_dst "
    "WHERE dst_label = 'Tag' AND type = 'TAGGED' GROUP BY dst_id",
)
SCHEMA_VERSION_GET = "SELECT value FROM meta WHERE key = 'schema_version'"
SCHEMA_VERSION_SET = "INSERT INTO meta (key, value) VALUES ('schema_version', ?)"
TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"
INDEXES = "SELECT name FROM sqlite_master WHERE type = 'index'"
VECTOR_TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'task_vectors'"
QUERY_TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'task_queries'"
DELIVERIES_TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'deliveries'"

CLEAR_EDGES = "DELETE FROM edges"
CLEAR_NODES = "DELETE FROM nodes"
CLEAR_TASK_VECTORS = "DELETE FROM task_vectors"
CLEAR_TASK_QUERIES = "DELETE FROM task_queries"
CLEAR_DELIVERIES = "DELETE FROM deliveries"

#: What :mod:`.sql` re-exports (``from .sql_schema import *``).
__all__ = [
    "AGGREGATES", "AGGREGATES_DROP", "AGGREGATES_VERSION", "AGGREGATES_VERSION_GET", "AGGREGATES_VERSION_SET",
    "BEGIN", "BEGIN_EXCLUSIVE", "BEGIN_IMMEDIATE", "CLEAR_DELIVERIES", "CLEAR_EDGES", "CLEAR_NODES",
    "CLEAR_TASK_QUERIES", "CLEAR_TASK_VECTORS", "COMMIT", "DATA_VERSION", "DELIVERIES_TABLE_EXISTS",
    "FOREIGN_KEYS_OFF", "GRAPH_GENERATION", "GRAPH_GENERATION_MAKE", "INDEXES", "JOURNAL_DELETE", "JOURNAL_WAL",
    "PROBE", "QUERY_TABLE_EXISTS", "ROLLBACK", "SCHEMA", "SCHEMA_VERSION_GET", "SCHEMA_VERSION_SET",
    "SYNCHRONOUS_NORMAL", "TABLES", "VECTOR_TABLE_EXISTS", "busy_timeout"
]
