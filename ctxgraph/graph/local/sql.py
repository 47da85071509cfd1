"""Every SQL statement of the embedded store, by name: the one place its SQL
lives (with :mod:`.sql_schema`, the connection's and the schema's, named here
too, and :mod:`.sql_imports`, what imports write), as the Cypher files are
for Neo4j (``ctxgraph/cypher/``). Values are
always bound (``?``), never formatted in; the exceptions are the busy timeout
and the page cache's size (integers), which a PRAGMA cannot take as a
parameter.

The graph is kept as a property graph: ``nodes`` (label, id, JSON props) and
``edges`` (source, type, destination, JSON props), beside the task vectors,
the deliveries log and a ``meta`` table (schema version, memory generation).
"""

from __future__ import annotations

# -- connection, transactions and schema (sql_schema.py, named here as sql.NAME) ------------
from ctxgraph.graph.local.sql_schema import *  # noqa: F403 (its __all__: the code names them sql.NAME)

# -- nodes and edges -----------------------------------------------------------------

NODE = "SELECT props FROM nodes WHERE label = ? AND id = ?"
NODE_EXISTS = "SELECT 1 FROM nodes WHERE label = ? AND id = ?"
NODES = "SELECT id, props FROM nodes WHERE label = ? AND id IN (SELECT value FROM json_each(?))"
PUT_NODES = (
    "INSERT INTO nodes (label, id, props) VALUES (?, ?, ?) "
    "ON CONFLICT (label, id) DO UPDATE SET props = excluded.props"
)
PUT_NAMED = "INSERT INTO nodes (label, id, props) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
PUT_EDGES = (
    "INSERT INTO edges (src_label, src_id, type, dst_label, dst_id, props) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET props = excluded.props"
)
#: The MENTIONS edges an older ctxgraph linked tasks and files to their terms
#: with (nothing reads them), deleted when the schema is applied.
DROP_MENTIONS = "DELETE FROM edges WHERE type = 'MENTIONS'"

# -- writes --------------------------------------------------------------------------

DELETE_TASK_TAGS = "DELETE FROM edges WHERE src_label = 'Task' AND src_id = ? AND type = 'TAGGED'"
DELETE_HANDOFF_LINKS = "DELETE FROM edges WHERE src_label = 'Handoff' AND src_id = ?"
KNOWLEDGE_LABEL = "SELECT label FROM nodes WHERE id = ? AND label IN (SELECT value FROM json_each(?))"

# -- reads: tasks, knowledge, files, dependencies ---------------------------------------

KNOWLEDGE_GET = (
    "SELECT props FROM nodes WHERE id IN (SELECT value FROM json_each(?)) "
    "AND label IN (SELECT value FROM json_each(?)) ORDER BY id"
)
DECISIONS_IN_FORCE = (
    "SELECT props FROM nodes WHERE label = 'Decision' "
    "AND coalesce(json_extract(props, '$.status'), 'active') <> 'superseded' ORDER BY id"
)
#: ``ctxgraph knowledge list``: the knowledge nodes of the labels ?1 (a JSON
#: list) carrying every tag of ?2 (a JSON list), discovered by the handoff of
#: task ?3 (NULL: whichever task, or none), in id order; each with a JSON list
#: of the tasks whose handoffs discovered it.
KNOWLEDGE_LIST = """
WITH listed AS (
  SELECT n.id AS id, n.props AS props,
         (SELECT json_group_array(h.src_id) FROM edges d INDEXED BY edges_by_dst
          JOIN edges h INDEXED BY edges_by_dst
            ON h.dst_label = 'Handoff' AND h.dst_id = d.src_id AND h.type = 'HANDED_OFF' AND h.src_label = 'Task'
          WHERE d.dst_label = n.label AND d.dst_id = n.id AND d.type = 'DISCOVERED' AND d.src_label = 'Handoff'
         ) AS tasks
  FROM nodes n
  WHERE n.label IN (SELECT value FROM json_each(?1))
    AND NOT EXISTS (SELECT 1 FROM json_each(?2) w
                    WHERE w.value NOT IN (SELECT value FROM json_each(n.props, '$.tags')))
)
SELECT props, tasks FROM listed
WHERE ?3 IS NULL OR EXISTS (SELECT 1 FROM json_each(listed.tasks) t WHERE t.value = ?3)
ORDER BY id
"""
TASK_DEPENDENCIES = "SELECT dst_id FROM edges WHERE src_label = 'Task' AND src_id = ? AND type = 'DEPENDS_ON'"
#: The tasks of a JSON list of ids (each a primary-key seek), and their dependencies.
TASKS_GET = "SELECT props FROM nodes WHERE label = 'Task' AND id IN (SELECT value FROM json_each(?))"
TASKS_DEPENDENCIES = (
    "SELECT src_id, dst_id FROM edges "
    "WHERE src_label = 'Task' AND src_id IN (SELECT value FROM json_each(?)) AND type = 'DEPENDS_ON'"
)
TASKS_LIST = (
    "SELECT props FROM nodes WHERE label = 'Task' "
    "AND (? IS NULL OR json_extract(props, '$.status') = ?) ORDER BY id"
)
DEPENDS_ON_ALL = "SELECT src_id, dst_id FROM edges WHERE type = 'DEPENDS_ON' AND src_label = 'Task'"
DEPENDENCY_CLOSURE = (
    "WITH RECURSIVE reach(id) AS ("
    " SELECT value FROM json_each(?)"
    " UNION SELECT e.dst_id FROM reach r JOIN edges e"
    " ON e.src_label = 'Task' AND e.src_id = r.id AND e.type = 'DEPENDS_ON')"
    " SELECT e.src_id, e.dst_id FROM reach r JOIN edges e"
    " ON e.src_label = 'Task' AND e.src_id = r.id AND e.type = 'DEPENDS_ON'"
    " ORDER BY e.src_id, e.dst_id"
)
LAST_HANDOFF = (
    "SELECT dst_id FROM edges WHERE src_label = 'Task' AND src_id = ? "
    "AND type = 'HANDED_OFF' ORDER BY dst_id DESC LIMIT 1"
)
HANDOFF_LINKS = (
    "SELECT type, dst_label, dst_id, props FROM edges "
    "WHERE src_label = 'Handoff' AND src_id = ? ORDER BY type, dst_id"
)
CONTEXT_MAP = """
                SELECT props FROM nodes WHERE label = 'File' AND (
                  EXISTS (SELECT 1 FROM json_each(?) k WHERE
                          instr(pylower(json_extract(props, '$.component')), k.value) > 0
                       OR instr(pylower(json_extract(props, '$.path')), k.value) > 0)
                  OR EXISTS (SELECT 1 FROM json_each(?) d WHERE
                          instr(pylower(json_extract(props, '$.notes')), d.value) > 0)
                  OR EXISTS (SELECT 1 FROM json_each(?) f WHERE
                          instr(json_extract(props, '$.path'), f.value) > 0)
                ) ORDER BY id
                """
#: Every file (also the history corpus's and the replay's files).
ALL_FILES = "SELECT props FROM nodes WHERE label = 'File' ORDER BY id"
COUNT_LABEL = "SELECT count(*) FROM nodes WHERE label = ?"
COUNT_LABEL_KEPT = "SELECT n FROM label_counts WHERE label = ?"  # no row: none
STATS_LABELS = "SELECT label, count(*) FROM nodes GROUP BY label ORDER BY label"
STATS_RELATIONSHIPS = "SELECT type, count(*) FROM edges GROUP BY type ORDER BY type"

# The working memory's reads name their partial index (``INDEXED BY``: SQLite
# picks it on its own only after ANALYZE) when the store has it; a store
# written by an older ctxgraph gets the indexes on its next writing open and is
# read without them until then.
RECENT = """
SELECT props FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') IN ('completed', 'failed')
ORDER BY coalesce(json_extract(props, '$.completed_at'), '') DESC, id DESC LIMIT ?
"""
RECENT_INDEXED = """
SELECT props FROM nodes INDEXED BY tasks_finished
WHERE label = 'Task' AND json_extract(props, '$.status') IN ('completed', 'failed')
ORDER BY coalesce(json_extract(props, '$.completed_at'), '') DESC, id DESC LIMIT ?
"""
BLOCKED = """
SELECT props FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') = 'blocked'
ORDER BY coalesce(json_extract(props, '$.blocked_at'), ''), id
"""
BLOCKED_INDEXED = """
SELECT props FROM nodes INDEXED BY tasks_blocked
WHERE label = 'Task' AND json_extract(props, '$.status') = 'blocked'
ORDER BY coalesce(json_extract(props, '$.blocked_at'), ''), id
"""

# Concurrent work (docs/decisions.md): the other tasks in progress, newest
# first, and the record of a task's latest delivered context.
IN_PROGRESS = """
SELECT props FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') = 'in_progress' AND id <> ?
ORDER BY coalesce(json_extract(props, '$.updated_at'), '') DESC, id LIMIT ?
"""
IN_PROGRESS_INDEXED = """
SELECT props FROM nodes INDEXED BY tasks_in_progress
WHERE label = 'Task' AND json_extract(props, '$.status') = 'in_progress' AND id <> ?
ORDER BY coalesce(json_extract(props, '$.updated_at'), '') DESC, id LIMIT ?
"""
LATEST_DELIVERY = (
    "SELECT record FROM deliveries INDEXED BY deliveries_by_task WHERE task_id = ? ORDER BY at DESC, id DESC LIMIT 1"
)

# -- reads: tags ------------------------------------------------------------------------
# Tag queries (finding 3 of benchmarks/README.md): the degree of each query tag
# is counted on the ``edges_by_dst`` index; the candidate queries read the
# items of the tags under the degree cap only, driven from the tag list, and
# order them by the sum of their matched tags' rarity weights (given as JSON
# [[tag, weight], ...], computed by ``ctxgraph.core.rarity``).

# With the kept counts (``AGGREGATES``); the counting forms below serve a
# store opened read-only before a writing open added them.
TAGGED_TOTAL_KEPT = "SELECT coalesce(sum(n), 0) FROM label_counts WHERE label IN (SELECT value FROM json_each(?))"
TAG_DEGREES_KEPT = """
SELECT t.value, coalesce((SELECT d.n FROM tag_degrees d WHERE d.tag = t.value), 0) FROM json_each(?) t
WHERE EXISTS (SELECT 1 FROM nodes n WHERE n.label = 'Tag' AND n.id = t.value)
"""
TAGGED_TOTAL = "SELECT count(*) FROM nodes WHERE label IN (SELECT value FROM json_each(?))"
TAG_DEGREES = """
SELECT t.value, (SELECT count(*) FROM edges e INDEXED BY edges_by_dst
                 WHERE e.dst_label = 'Tag' AND e.dst_id = t.value AND e.type = 'TAGGED') AS df
FROM json_each(?) t
WHERE EXISTS (SELECT 1 FROM nodes n WHERE n.label = 'Tag' AND n.id = t.value)
"""
#: (Also the tasks by tags of ``ctxgraph search``: ?2 is then ``["Task"]``.)
KNOWLEDGE_BY_TAGS = """
WITH w AS (SELECT json_extract(value, '$[0]') AS tag, json_extract(value, '$[1]') AS weight FROM json_each(?1)),
g AS (
  SELECT e.src_label AS label, e.src_id AS id, group_concat(e.dst_id, char(31)) AS matched,
         round(sum(w.weight), 9) AS score
  FROM w JOIN edges e INDEXED BY edges_by_dst
    ON e.dst_label = 'Tag' AND e.dst_id = w.tag AND e.type = 'TAGGED'
  WHERE e.src_label IN (SELECT value FROM json_each(?2))
  GROUP BY e.src_label, e.src_id
)
SELECT n.props, g.matched, g.score FROM g JOIN nodes n ON n.label = g.label AND n.id = g.id
WHERE g.score >= coalesce((SELECT score FROM g ORDER BY score DESC LIMIT 1 OFFSET ?3 - 1), 0)
ORDER BY g.score DESC, coalesce(json_extract(n.props, '$.updated_at'), '') DESC, g.id ASC
LIMIT ?3
"""
# -- history, task vectors and the replay -------------------------------------------------

CORPUS_TASKS = (
    "SELECT id, json_extract(props, '$.terms'), json_extract(props, '$.completed_at') "
    "FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') = 'completed'"
)
#: (task, file) of every file a task's handoff created or modified.
TOUCHED = (
    "SELECT h.src_id, f.dst_id FROM edges h JOIN edges f ON f.src_label = 'Handoff' "
    "AND f.src_id = h.dst_id AND f.type IN ('MODIFIED', 'CREATED') AND f.dst_label = 'File' "
    "WHERE h.src_label = 'Task' AND h.type = 'HANDED_OFF'"
)
#: (task, tag) of every tag a task is linked to (ordered by task): the related
#: tasks' search runs in the history over the finished ones (``History.related``).
TASK_TAGS = (
    "SELECT src_id, dst_id FROM edges INDEXED BY edges_by_type "
    "WHERE type = 'TAGGED' AND src_label = 'Task' AND dst_label = 'Tag'"
)
#: Every finished task (also the replay's).
COMPLETED_TASKS = (
    "SELECT id, props FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') = 'completed' "
    "ORDER BY id"
)
TASK_IDS_AMONG = "SELECT id FROM nodes WHERE label = 'Task' AND id IN (SELECT value FROM json_each(?))"
TASK_VECTORS_ORDERED = "SELECT id, vec FROM task_vectors ORDER BY id"
TASK_VECTORS = "SELECT id, vec FROM task_vectors"
TASK_VECTOR_HASHES = "SELECT id, text_hash FROM task_vectors"
TASK_VECTOR_HASHES_AMONG = "SELECT id, text_hash FROM task_vectors WHERE id IN (SELECT value FROM json_each(?))"
COMPLETED_TASKS_AMONG = (
    "SELECT id, props FROM nodes WHERE label = 'Task' AND id IN (SELECT value FROM json_each(?)) "
    "AND json_extract(props, '$.status') = 'completed' ORDER BY id"
)
TASK_QUERIES_AMONG = "SELECT id, text_hash, vec FROM task_queries WHERE id IN (SELECT value FROM json_each(?))"
TASK_QUERIES_PUT = "INSERT OR REPLACE INTO task_queries (id, text_hash, vec) VALUES (?, ?, ?)"
TASK_VECTORS_PUT = "INSERT OR REPLACE INTO task_vectors (id, text_hash, vec) VALUES (?, ?, ?)"
TASK_VECTOR_ANY = "SELECT 1 FROM task_vectors LIMIT 1"
TASK_VECTOR_COUNT = "SELECT count(*) FROM task_vectors"

# -- export ------------------------------------------------------------------------------

EXPORT_NODES = "SELECT label, id, props FROM nodes"
EXPORT_EDGES = "SELECT type, src_label, src_id, dst_label, dst_id, props FROM edges"

# -- context outcomes (the deliveries log) -----------------------------------------------

DELIVERY_INSERT = "INSERT OR REPLACE INTO deliveries (id, task_id, at, record, score) VALUES (?, ?, ?, ?, NULL)"
DELIVERY_COUNT = "SELECT count(*) FROM deliveries"
# The newest ``keep`` stay: everything before the keep-th newest (by time, then id) goes.
DELIVERY_TRIM = """
DELETE FROM deliveries WHERE (at, id) < (
  SELECT at, id FROM deliveries INDEXED BY deliveries_by_at ORDER BY at DESC, id DESC LIMIT 1 OFFSET ?1 - 1)
"""
_DELIVERY_ROWS = "SELECT id, task_id, at, record, score FROM deliveries"
DELIVERIES_BY_TASK = _DELIVERY_ROWS + " WHERE task_id IN (SELECT value FROM json_each(?)) ORDER BY at, id"
DELIVERIES_SINCE = _DELIVERY_ROWS + " WHERE at >= ? ORDER BY at DESC, id DESC LIMIT ?"
DELIVERY_SCORE = "UPDATE deliveries SET score = ? WHERE id = ?"
HANDOFF_FILES = """
SELECT h.src_id, f.dst_id
FROM json_each(?1) t
JOIN edges h ON h.src_label = 'Task' AND h.src_id = t.value AND h.type = 'HANDED_OFF' AND h.dst_label = 'Handoff'
JOIN edges f
  ON f.src_label = 'Handoff' AND f.src_id = h.dst_id AND f.type IN ('CREATED', 'MODIFIED') AND f.dst_label = 'File'
ORDER BY h.src_id, f.dst_id
"""

# -- associative memory -------------------------------------------------------------------

MEMORY_PROJECTS = "SELECT props FROM nodes WHERE label = 'Project' ORDER BY id"
CHUNKS = "SELECT props FROM nodes WHERE label = 'Chunk' ORDER BY id"
# Chunk ids start with "project:", so the primary key answers the range [project:, project;).
CHUNK_FILE_HASHES = (
    "SELECT DISTINCT json_extract(props, '$.path'), json_extract(props, '$.file_sha256'), "
    "coalesce(json_extract(props, '$.file_mtime_ns'), 0), coalesce(json_extract(props, '$.file_size'), -1) "
    "FROM nodes WHERE label = 'Chunk' AND id >= ? AND id < ?"
)
CHUNK_IDS_OF_PATH = (
    "SELECT id FROM nodes WHERE label = 'Chunk' AND id >= ? AND id < ? "
    "AND json_extract(props, '$.path') = ?"
)
DELETE_CHUNK_EDGES = "DELETE FROM edges WHERE src_label = 'Chunk' AND src_id = ?"
DELETE_CHUNK = "DELETE FROM nodes WHERE label = 'Chunk' AND id = ?"
MEMORY_GENERATION = "SELECT value FROM meta WHERE key = 'memory_generation'"
MEMORY_GENERATION_BUMP = (
    "INSERT INTO meta (key, value) VALUES ('memory_generation', '1') ON CONFLICT (key) "
    "DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
)

# -- code anchors (issue 32; ctxgraph.graph.local.anchors) ---------------------------------

#: Made by the first write of anchors (a store without any has no table).
ANCHORS_TABLE = (
    """CREATE TABLE IF NOT EXISTS anchors (
        id           TEXT PRIMARY KEY,
        owner        TEXT NOT NULL,
        path         TEXT NOT NULL,
        current_path TEXT NOT NULL,
        props        TEXT NOT NULL
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS anchors_by_owner ON anchors (owner)",
    "CREATE INDEX IF NOT EXISTS anchors_by_path ON anchors (path)",
    "CREATE INDEX IF NOT EXISTS anchors_by_current_path ON anchors (current_path)",
)
ANCHORS_TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'anchors'"
ANCHOR_PUT = (
    "INSERT INTO anchors (id, owner, path, current_path, props) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, path = excluded.path, "
    "current_path = excluded.current_path, props = excluded.props"
)
ANCHORS_ALL = "SELECT props FROM anchors ORDER BY id"
ANCHORS_OF = (
    "SELECT props FROM anchors WHERE owner IN (SELECT value FROM json_each(?)) "
    "UNION SELECT props FROM anchors WHERE path IN (SELECT value FROM json_each(?)) "
    "UNION SELECT props FROM anchors WHERE current_path IN (SELECT value FROM json_each(?))"
)
CLEAR_ANCHORS = "DELETE FROM anchors"
