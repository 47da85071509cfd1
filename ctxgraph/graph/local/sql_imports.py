"""The embedded store's SQL for what imports write (the project's files'
knowledge, ``ctxgraph.graph.local.imports``; its git history,
``ctxgraph.graph.local.history_import``), beside :mod:`.sql`'s."""

from __future__ import annotations

from ctxgraph.graph.local.sql import (
    _GENERATION_EDGE_ADD,
    _GENERATION_EDGE_CHANGE,
    _GENERATION_NODE_ADD,
    _GENERATION_NODE_CHANGE,
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
#: A bulk write (``HistoryImport.import_history``) bumps the graph's generation
#: once instead of once per row: inside its own write transaction it drops the
#: row triggers, writes, bumps, and makes them again (SQLite's DDL is
#: transactional, and no other writer runs meanwhile).
GRAPH_GENERATION_ROW_TRIGGERS_DROP = (
    "DROP TRIGGER graph_generation_node_add",
    "DROP TRIGGER graph_generation_node_change",
    "DROP TRIGGER graph_generation_edge_add",
    "DROP TRIGGER graph_generation_edge_change",
)
GRAPH_GENERATION_ROW_TRIGGERS_MAKE = (
    _GENERATION_NODE_ADD, _GENERATION_NODE_CHANGE, _GENERATION_EDGE_ADD, _GENERATION_EDGE_CHANGE)
#: A bulk write's page cache, 128 MiB, instead of SQLite's default 2 MB (the
#: connection's own, set back after the write): its rows land all over the
#: edges' indexes, and with the default cache most of them are a page read
#: (22,150 commits: 8.6 s of inserts at 2 MB, 4.6 s at 128 MB).
CACHE_BULK = "PRAGMA cache_size = -131072"
CACHE_DEFAULT = "PRAGMA cache_size = -2000"
GRAPH_GENERATION_BUMP = (
    "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'graph_generation'"
)
