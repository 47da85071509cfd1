"""The query plans of the hot statements use the indexes the schema creates.

Neo4j: ``EXPLAIN`` of the statements a context runs (``tag_stats``, ``gather``,
``history_text_tasks``, ``history_text_files``, ``history``, ``history_near``)
and of the ingestion statements, as the store loads them. Every anchor lookup
(tags, terms, tasks, handoffs, files, knowledge by key) must be an index
seek; no statement may scan all nodes. Two label scans are known
and kept on purpose: the context-map candidates (substring matches on path,
component and notes cannot use a range index) and the history's every-file
evidence. They are listed here so that a new scan fails the test.

Embedded store: every SQL statement one ``compute`` runs (caught with
``sqlite3``'s trace callback, so ``local.py`` is read as it is) must be
answered with an index: ``EXPLAIN QUERY PLAN`` shows ``SEARCH``, never a
full-table ``SCAN`` of ``nodes`` or ``edges``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generator import generate
from ctxgraph import cypher
from ctxgraph.core.models import FileEntry
from ctxgraph.graph.local import LocalStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor

#: Label scans that are known and accepted (see the module docstring), per statement.
#: (Project: a handful of nodes.)
KNOWN_LABEL_SCANS: dict[str, set[str]] = {"gather": {"File", "Project"}, "history": {"File"},
                                          "history_text_tasks": set(), "history_text_files": set()}

GATHER = {
    "keywords": ["api", "cache"],
    "domains": ["auth"],
    "files": ["src/api/a.ts"],
    "dep_ids": ["t1"],
    "keyword_limit": 20,
    "domain_limit": 10,
    "keyword_weighted": [["api", 0.5], ["cache", 0.7]],
    "domain_weighted": [["auth", 0.9]],
    "related_weighted": [["api", 0.5], ["cache", 0.7], ["auth", 0.9]],
    "exclude": ["t0"],
    "related_limit": 8,
    "working_memory": True,
    "recent_limit": 5,
    "anchors": True,
}
HISTORY = {"terms": ["api", "cache"], "near_files": [["src/api/a.ts"]]}
WRITES: dict[str, dict[str, Any]] = {
    "task_upsert": {"rows": [{"props": {"id": "t1", "terms": ["api"]}, "tags": ["api"], "deps": ["t0"]}]},
    "tasks_missing": {"ids": ["t0"]},
    "task_get": {"ids": ["t1"]},
    "handoff_state": {"rows": [{"task_id": "t1", "id": "handoff:t1"}]},
    "handoff_clear_links": {"ids": ["handoff:t1"]},
    "handoff_write": {
        "rows": [{
            "task_id": "t1",
            "props": {"id": "handoff:t1"},
            "status": "completed",
            "success": True,
            "summary": "s",
            "completed_at": "2026-01-01T00:00:00Z",
        }],
    },
    "knowledge_merge": {"rows": [{"label": "Pattern", "props": {"id": "pattern:1", "tags": ["api"]}}]},
    "handoff_discovered": {"rows": [{"handoff_id": "handoff:t1", "id": "pattern:1"}]},
    "dependency_closure": {"ids": ["t1"]},
    "dependency_step": {"ids": ["t1"]},
    "files_fill": {"rows": [{"path": "src/a.ts", "terms": ["a"]}]},
    "files_upsert": {"rows": [{"path": "src/a.ts", "terms": ["a"]}]},
    "handoff_links": {"rows": [{"handoff_id": "handoff:t1", "rel": "CREATED", "path": "src/a.ts", "props": {}}]},
    # the history import's bulk path (issue 44)
    "history_import": {"rows": [{"props": {"id": "c-1"}, "doc": ["a"], "completed": True,
                                 "handoff": {"id": "handoff:c-1"}}], "token": "x"},
    "history_tags": {"rows": [{"id": "c-1", "tags": ["api"]}]},
    "history_terms": {"terms": [["a", 1]], "rows": [{"id": "c-1", "terms": [0]}], "docs": 1, "length": 1},
    "history_links": {"rows": [{"path": "src/a.ts", "links": [{"handoff_id": "handoff:c-1", "rel": "CREATED",
                                                               "props": {}}]}]},
    "files_add_history": {"rows": [{"path": "src/a.ts", "touches": 1, "task_len": 1, "terms": ["a"]}],
                          "fresh": False},
    "tasks_set_statuses": {"ids": ["c-1"], "status": "retired", "at": "2026-01-01T00:00:00Z"},
    "task_signals_write": {"rows": [{"id": "c-1", "keywords": [], "domains": [], "files": [], "types": [],
                                     "tags": ["api"]}]},
    "history_tasks": {"prefix": "c-"},
}


def _operators(plan: Any) -> Iterator[tuple[str, str]]:
    """(operator type without the ``@neo4j`` suffix, details) of every operator."""
    yield plan["operatorType"].split("@")[0], str(plan.get("args", {}).get("Details", ""))
    for child in plan.get("children", []):
        yield from _operators(child)


@pytest.fixture(scope="module")
def explain(neo4j_store: object, neo4j_settings: Any) -> Iterator[Any]:
    """``explain(name, params)`` -> the operators of that statement's plan."""
    from neo4j import GraphDatabase

    del neo4j_store  # connected: the schema (constraints and indexes) is in place
    auth = (neo4j_settings.user, neo4j_settings.password) if neo4j_settings.password is not None else None
    driver = GraphDatabase.driver(neo4j_settings.uri, auth=auth, notifications_min_severity="OFF")

    def run(name: str, params: dict[str, Any]) -> list[tuple[str, str]]:
        with driver.session(database=neo4j_settings.database) as session:
            summary = session.run("EXPLAIN " + cypher.load(name), params).consume()
        assert summary.plan is not None
        return list(_operators(summary.plan))

    yield run
    driver.close()


def _label_scans(ops: list[tuple[str, str]]) -> set[str]:
    return {details.split(":", 1)[1].strip() for op, details in ops if op == "NodeByLabelScan"}


def _seeks(ops: list[tuple[str, str]]) -> list[str]:
    return [details for op, details in ops if op.startswith(("NodeUniqueIndexSeek", "NodeIndexSeek"))]


def test_gather_anchors_are_index_seeks(explain: Any) -> None:
    ops = explain("gather", GATHER)
    names = {op for op, _ in ops}
    assert "AllNodesScan" not in names
    seeks = " | ".join(_seeks(ops))
    # knowledge and related tasks from the weighted tags (those under the cap) by name
    assert "tag:Tag(name) WHERE name = w[" in seeks
    assert "d:Task(id)" in seeks  # dependencies by id
    # working memory: recent tasks read in completed_at order and stopped at the limit
    assert "t:Task(completed_at) WHERE completed_at >" in seeks and "PartialTop" in names
    assert "t:Task(status) WHERE status =" in seeks  # working memory: active blockers
    assert "NodeCountFromCountStore" in names  # the context map's size from the count store
    assert "a:Anchor(owner)" in seeks  # the code anchors the context checks, by owner
    assert _label_scans(ops) <= KNOWN_LABEL_SCANS["gather"]


def test_delivery_trim_reads_the_oldest_in_index_order(explain: Any) -> None:
    """Trimming the outcome log stops after the deliveries it deletes: no sort of the whole log."""
    ops = explain("delivery_trim", {"excess": 5})
    names = {op for op, _ in ops}
    assert any(op == "NodeIndexScan" and "d:Delivery(at)" in details for op, details in ops)
    assert "PartialTop" in names and not names & {"Sort", "Top"} and not _label_scans(ops)


def test_history_anchors_are_index_seeks(explain: Any) -> None:
    ops = explain("history", HISTORY)
    assert "AllNodesScan" not in {op for op, _ in ops}
    seeks = " | ".join(_seeks(ops))
    names = {op for op, _ in ops}
    assert "NodeCountFromCountStore" in names  # the finished tasks: the Completed label's count
    assert "f:File(path) WHERE path = path" in seeks  # the touched files by key
    # the most touched files: read from the file_touches index in descending order
    assert any(op == "NodeIndexSeekByRange" and "f:File(touches)" in d for op, d in ops), ops
    assert "t:Task(id) WHERE id = id" in seeks  # the tasks chosen by text, by key
    assert _label_scans(ops) <= KNOWN_LABEL_SCANS["history"]


def test_history_near_reads_the_vector_index(explain: Any) -> None:
    """The neighbours by vector, a statement of their own (run beside the text ranking)."""
    ops = explain("history_near", {"terms": ["api"], "vector": [0.1] * 384})
    assert "ProcedureCall" in {op for op, _ in ops}  # the neighbours: the vector index
    assert "AllNodesScan" not in {op for op, _ in ops} and not _label_scans(ops)


@pytest.mark.parametrize("name", ["history_text_tasks", "history_text_files"])
def test_history_text_reads_the_full_text_indexes_and_the_kept_statistics(explain: Any, name: str) -> None:
    ops = explain(name, HISTORY)
    seeks = " | ".join(_seeks(ops))
    assert "ProcedureCall" in {op for op, _ in ops}  # the candidates: the full-text indexes
    assert "term:Term(name) WHERE name = name" in seeks  # the query terms' document frequencies
    assert "c:Corpus(id) WHERE id =" in seeks  # the corpora's statistics
    assert "AllNodesScan" not in {op for op, _ in ops}
    assert _label_scans(ops) <= KNOWN_LABEL_SCANS[name]


def test_tag_stats_reads_the_degree_and_count_stores(explain: Any) -> None:
    """The gather's rarity weights need the query tags' degrees: read before the
    history and the gather run side by side."""
    ops = explain("tag_stats", {"tags": ["api", "auth"]})
    assert "tag:Tag(name) WHERE name = name" in " | ".join(_seeks(ops))  # the query tags by name
    assert any("getDegree((tag)<-[:TAGGED]-())" in details for _, details in ops)  # their degree, kept
    assert "NodeCountFromCountStore" in {op for op, _ in ops}  # the taggable items, kept
    assert not _label_scans(ops)


@pytest.mark.parametrize("name", sorted(WRITES))
def test_ingestion_statements_seek_every_anchor(explain: Any, name: str) -> None:
    ops = explain(name, WRITES[name])
    names = {op for op, _ in ops}
    assert "AllNodesScan" not in names and "NodeByLabelScan" not in names, ops
    assert _seeks(ops), f"{name}: no index seek in {ops}"
    # MERGE and MATCH by key go through the uniqueness constraints' indexes
    for key in ("Task(id)", "Handoff(id)", "Knowledge(id)", "File(path)", "Tag(name)", "Term(name)"):
        label = key.split("(")[0]
        if re.search(rf":{label}\s*\{{", cypher.load(name)):
            assert any(key in s for s in _seeks(ops)), f"{name}: no seek on {key}"


# -------------------------------------------------------------------- embedded


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[str], sqlite3.Connection]]:
    """Every SQL statement one ``compute`` runs on a small synthetic project."""
    ds = generate(300, seed=3)
    path: Path = tmp_path_factory.mktemp("plans") / "graph.db"
    store = LocalStore.open(path)
    svc = ContextService(store, SignalExtractor())
    svc.add_files([FileEntry(**f) for f in ds.files])
    svc.add_tasks(ds.tasks)
    svc.ingest_handoffs([(h["task_id"], h) for h in ds.handoffs])
    task = svc.get_task(ds.queries[0])
    seen: list[str] = []
    connections = [store.db.conn, store._side_reader()[0].conn]  # the gather runs on the side reader's
    for conn in connections:
        conn.set_trace_callback(seen.append)
    svc.compute(task)
    for conn in connections:
        conn.set_trace_callback(None)
    statements = list(dict.fromkeys(s for s in seen if s.lstrip().upper().startswith(("SELECT", "WITH"))))
    yield statements, store.db.conn  # the store's own connection: its SQL functions are registered there
    store.close()


def _plan(conn: sqlite3.Connection, sql: str) -> list[str]:
    return [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]


#: Statements of the embedded store that read a whole label (or every edge of
#: a type) through an index prefix instead of seeking by id: their cost grows
#: with the graph, so they are the embedded store's known hot spots (see
#: benchmarks/README.md). A new one fails the test; fixing one shrinks the list.
KNOWN_LABEL_WIDE = {
    "context_map": "SELECT props FROM nodes WHERE label = 'File' AND (",
    "recent_tasks": "SELECT props FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') IN",
    "active_blockers": "SELECT props FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') = 'blocked'",
    # the history's corpus, recomputed only after a write (cached on PRAGMA data_version)
    "corpus_tasks": "SELECT id, json_extract(props, '$.terms')",
    "corpus_touches": "SELECT h.src_id, f.dst_id FROM edges h",
    "corpus_files": "SELECT props FROM nodes WHERE label = 'File' ORDER BY id",
    "corpus_task_tags": "SELECT src_id, dst_id FROM edges INDEXED BY edges_by_type WHERE type = 'TAGGED'",
    # associative memory: the indexed projects (a handful), and every chunk, read
    # into the in-process index only after a write (cached on PRAGMA data_version)
    "memory_projects": "SELECT props FROM nodes WHERE label = 'Project' ORDER BY id",
    "memory_chunks": "SELECT props FROM nodes WHERE label = 'Chunk' ORDER BY id",
}
#: The kept counts' tables (``sql.AGGREGATES``): keyed by the label or tag alone, so a search by
#: ``label=?`` there is a seek by the whole key.
_KEPT = ("SEARCH label_counts ", "SEARCH tag_degrees ")
_PREFIX_ONLY = re.compile(r"\((?:label=\?|src_label=\?|type=\? AND src_label=\?|dst_label=\?)\)$")


def _known(sql: str) -> str | None:
    flat = " ".join(sql.split())
    return next((name for name, start in KNOWN_LABEL_WIDE.items() if flat.startswith(start)), None)


def test_embedded_compute_reads_from_indexes(traced: tuple[list[str], sqlite3.Connection]) -> None:
    statements, conn = traced
    assert statements, "no SQL traced"
    full_scans, label_wide = {}, {}
    for sql in statements:
        plan = _plan(conn, sql)
        short = " ".join(sql.split())[:160]
        # not table scans: a table-valued function, a CTE's own materialized rows, the
        # schema (read once per open), and a partial index read in order under a LIMIT
        if any(p.startswith("SCAN ") and "VIRTUAL TABLE" not in p and f"MATERIALIZE {p.split()[1]}" not in plan
               and p != "SCAN sqlite_master" and not p.endswith(("USING INDEX tasks_finished",
                                                                 "USING INDEX tasks_blocked",
                                                                 "USING INDEX tasks_in_progress"))
               and not (p == "SCAN task_vectors" and sql.rstrip().endswith("LIMIT 1"))  # stops at one row
               for p in plan):
            full_scans[short] = plan
        if any(_PREFIX_ONLY.search(p) for p in plan if p.startswith("SEARCH") and not p.startswith(_KEPT))\
                and _known(sql) is None:
            label_wide[short] = plan
    assert not full_scans, f"full-table scans: {full_scans}"
    assert not label_wide, f"new label-wide reads: {label_wide}"


def test_embedded_lookups_by_key_seek_the_primary_key(traced: tuple[list[str], sqlite3.Connection]) -> None:
    statements, conn = traced
    by_id = [
        s
        for s in statements
        if " ".join(s.split()).startswith("SELECT props FROM nodes WHERE label = ") and " AND id = " in s
    ]
    assert by_id
    for sql in by_id:
        assert _plan(conn, sql) == ["SEARCH nodes USING PRIMARY KEY (label=? AND id=?)"]
