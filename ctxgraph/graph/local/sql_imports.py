"""The embedded store's SQL for what imports write (the project's files'
knowledge, ``ctxgraph.graph.local.imports``; its git history,
``ctxgraph.graph.local.history_import``), beside :mod:`.sql`'s."""

from __future__ import annotations

from ctxgraph.graph.local.sql_schema import (
    _GENERATION_EDGE_ADD,
    _GENERATION_EDGE_CHANGE,
    _GENERATION_NODE_ADD,
    _GENERATION_NODE_CHANGE,
    _LABEL_COUNTS_ADD,
    _TAG_DEGREES_ADD,
)

# -- imports of the project's files (ctxgraph.sources; ctxgraph.graph.local.imports) --------

#: Made by the first write of an import (a store without any has no table).
IMPORTS_TABLE = (
    """CREATE TABLE IF NOT EXISTS imported_files (
        source TEXT NOT NULL,
        path   TEXT NOT NULL,
        props  TEXT NOT NULL,
        PRIMARY KEY (source, path)
    ) WITHOUT ROWID""",
)
IMPORTS_TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'imported_files'"
IMPORTS_OF = "SELECT props FROM imported_files WHERE source = ? ORDER BY path"
IMPORT_PUT = (
    "INSERT INTO imported_files (source, path, props) VALUES (?, ?, ?) "
    "ON CONFLICT (source, path) DO UPDATE SET props = excluded.props"
)
IMPORT_GONE = "DELETE FROM imported_files WHERE source = ? AND path = ?"
CLEAR_IMPORTS = "DELETE FROM imported_files"
DELETE_NODE_EDGES = (
    "DELETE FROM edges WHERE (src_label = ? AND src_id = ?) OR (dst_label = ? AND dst_id = ?)"
)
DELETE_NODE = "DELETE FROM nodes WHERE label = ? AND id = ?"
DELETE_OWNER_ANCHORS = "DELETE FROM anchors WHERE owner = ?"
DELETE_OUT_EDGES = "DELETE FROM edges WHERE src_label = ? AND src_id = ? AND type = ?"
SUPERSEDED_BY_ANY = (
    "SELECT 1 FROM edges INDEXED BY edges_by_dst WHERE dst_label = ? AND dst_id = ? AND type = 'SUPERSEDES' LIMIT 1"
)

# -- imported histories (ctxgraph.graph.local.history_import) --------------------------------

#: The tasks whose id is in [?, ?) (a prefix's range): id, status, the content
#: hash of the handoff ``handoff:<id>`` (NULL: none), whether it has signals.
HISTORY_TASKS = (
    "SELECT t.id, json_extract(t.props, '$.status'), json_extract(h.props, '$.content_hash'), "
    "json_type(t.props, '$.signal_keywords') IS NOT NULL FROM nodes t "
    "LEFT JOIN nodes h ON h.label = 'Handoff' AND h.id = 'handoff:' || t.id "
    "WHERE t.label = 'Task' AND t.id >= ? AND t.id < ?"
)
#: The record of an imported history, in ``meta`` under ``history_source:<id>``
#: (not a node: not part of an export, of the counts or of the graph's generation).
HISTORY_SOURCE_GET = "SELECT value FROM meta WHERE key = ?"
HISTORY_SOURCE_PUT = (
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
HISTORY_SOURCE_CLEAR = "DELETE FROM meta WHERE key LIKE 'history_source:%'"
#: A bulk write (``HistoryImport.import_history``) runs its row triggers'
#: work once instead of once per row: inside its own write transaction it reads
#: the text of the row triggers below that the store has, drops them, writes,
#: bumps the graph's generation once, adds the nodes it created to the counts
#: per label (``label_counts``), counts again the tags it linked to
#: (``tag_degrees``, on ``edges_by_dst``)
#: and makes the triggers again from their own text (SQLite's DDL is
#: transactional, and no other writer runs meanwhile). Each trigger costs a
#: few microseconds per row even when its WHEN says no: about a second of a
#: 22,150-commit history's 390,000 rows.
BULK_ROW_TRIGGERS = ("graph_generation_node_add", "graph_generation_node_change", "graph_generation_edge_add",
                     "graph_generation_edge_change", "label_counts_add", "tag_degrees_add")
ROW_TRIGGERS_GET = (
    "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN (SELECT value FROM json_each(?)) "
    "ORDER BY name"
)
#: (A trigger's name cannot be a parameter: one constant statement per trigger.)
ROW_TRIGGER_DROP = {
    "graph_generation_node_add": "DROP TRIGGER graph_generation_node_add",
    "graph_generation_node_change": "DROP TRIGGER graph_generation_node_change",
    "graph_generation_edge_add": "DROP TRIGGER graph_generation_edge_add",
    "graph_generation_edge_change": "DROP TRIGGER graph_generation_edge_change",
    "label_counts_add": "DROP TRIGGER label_counts_add",
    "tag_degrees_add": "DROP TRIGGER tag_degrees_add",
}
#: Each trigger made again after the write, as the schema makes it.
ROW_TRIGGER_MAKE = {
    "graph_generation_node_add": _GENERATION_NODE_ADD,
    "graph_generation_node_change": _GENERATION_NODE_CHANGE,
    "graph_generation_edge_add": _GENERATION_EDGE_ADD,
    "graph_generation_edge_change": _GENERATION_EDGE_CHANGE,
    "label_counts_add": _LABEL_COUNTS_ADD,
    "tag_degrees_add": _TAG_DEGREES_ADD,
}
GRAPH_GENERATION_BUMP = (
    "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'graph_generation'"
)
LABEL_COUNT_ADD = (
    "INSERT INTO label_counts (label, n) VALUES (?, ?) ON CONFLICT (label) DO UPDATE SET n = n + excluded.n"
)
TAG_DEGREE_SET = (
    "INSERT INTO tag_degrees (tag, n) SELECT ?, count(*) FROM edges INDEXED BY edges_by_dst "
    "WHERE dst_label = 'Tag' AND dst_id = ? AND type = 'TAGGED' ON CONFLICT (tag) DO UPDATE SET n = excluded.n"
)
#: A bulk write's page cache, 128 MiB, instead of SQLite's default 2 MB (the
#: connection's own, set back after the write): its rows land all over the
#: edges' indexes, and with the default cache most of them are a page read
#: (22,150 commits: 8.6 s of inserts at 2 MB, 4.6 s at 128 MB).
CACHE_BULK = "PRAGMA cache_size = -131072"
CACHE_DEFAULT = "PRAGMA cache_size = -2000"
#: Which of a bulk write's tasks are stored already (ids only); how many of
#: its nodes of a label are.
TASKS_STORED = "SELECT id FROM nodes WHERE label = 'Task' AND id IN (SELECT value FROM json_each(?))"
NODES_STORED = "SELECT count(*) FROM nodes WHERE label = ? AND id IN (SELECT value FROM json_each(?))"
#: A bulk write's rows, each kind in one statement over one JSON array
#: parameter (``json_each``) rather than an ``executemany``: SQLite reads the
#: rows in C, and the statement lets go of Python's GIL once, not once per
#: row — with the history read from git in another thread, a row at a time
#: waits for that thread at each row (22,150 commits: 15 s instead of 3).
#: Nodes: ``[[id, props JSON], ...]`` of one label (the first parameter). New
#: tasks (their ids checked inside the write transaction: none can be there)
#: are inserted; other nodes created or overwritten, the Tag and Term nodes
#: made when missing (``nodes.put_nodes``, ``nodes.named``).
BULK_NEW_NODES = (
    "INSERT INTO nodes (label, id, props) "
    "SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)"
)
BULK_PUT_NODES = (
    "INSERT INTO nodes (label, id, props) "
    "SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?) WHERE true "
    "ON CONFLICT (label, id) DO UPDATE SET props = excluded.props"
)
BULK_NAMED = (
    "INSERT INTO nodes (label, id, props) "
    "SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?) WHERE true "
    "ON CONFLICT DO NOTHING"
)
#: Edges of one type from one label to another (the first four parameters:
#: source label, type, destination label, the props JSON every edge takes),
#: ``[[source id, [destination id, ...]], ...]``: a new task's tags, terms
#: and handoff, a file's terms. An edge already there (a task of the same id
#: deleted without its edges) is left: the same row.
BULK_LINKS = (
    "INSERT INTO edges (src_label, src_id, type, dst_label, dst_id, props) "
    "SELECT ?1, json_extract(s.value, '$[0]'), ?2, ?3, d.value, ?4 "
    "FROM json_each(?5) s, json_each(s.value, '$[1]') d WHERE true ON CONFLICT DO NOTHING"
)
#: Edges from handoffs to files, ``[[handoff id, type, path, props JSON], ...]``,
#: created or overwritten (``nodes.put_edges``).
BULK_FILE_LINKS = (
    "INSERT INTO edges (src_label, src_id, type, dst_label, dst_id, props) "
    "SELECT 'Handoff', json_extract(value, '$[0]'), json_extract(value, '$[1]'), 'File', "
    "json_extract(value, '$[2]'), json_extract(value, '$[3]') FROM json_each(?) WHERE true "
    "ON CONFLICT DO UPDATE SET props = excluded.props"
)
#: The files whose terms a bulk write replaces lose their old ones: ``[path, ...]``.
