"""What the stores keep at write time instead of counting per read — nodes per
label, TAGGED edges per tag, the number of finished tasks (SQLite triggers on
the embedded store, the count store and the ``Completed`` label on Neo4j) —
must equal a recount of the graph after every kind of write, and a graph
written before they were kept must read the same."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

from ctxgraph.core.models import FileEntry, GatherQuery, KnowledgeItem, Task, TaskStatus
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.records import FileLink, HandoffRecord
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.signals import TaskSignals
from tests._reads import gathered, history_of

TAGS = ("cookie", "header", "parser", "widget", "security")


def _task(tid: str, *tags: str, status: TaskStatus = TaskStatus.PENDING) -> Task:
    signals = TaskSignals(keywords=tags, domains=(), files_mentioned=(), task_types=("feature",))
    return Task(id=tid, name=f"work on {' '.join(tags)}", objective="", signals=signals, status=status,
                created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")


def _item(summary: str, *tags: str) -> KnowledgeItem:
    return KnowledgeItem(id=f"pattern:{summary}", kind="pattern", summary=summary, tags=tags,  # type: ignore[arg-type]
                         created_at="2026-02-01T00:00:00Z", updated_at="2026-02-01T00:00:00Z")


def _handoff(tid: str, *knowledge: KnowledgeItem, success: bool = True, content: str = "v1") -> HandoffRecord:
    return HandoffRecord(id=f"handoff:{tid}", task_id=tid, summary="done", success=success,
                         completed_at="2026-02-01T00:00:00Z", raw="{}", content_hash=f"{tid}-{content}",
                         knowledge=knowledge, links=(FileLink(rel="MODIFIED", path="a.py"),))


def _observed(store: KnowledgeStore) -> tuple[dict[str, int], int, int, int]:
    """What a context reads: the tags' degrees, the taggable items, the map's size, the finished tasks."""
    found = store.gather(GatherQuery(
        keywords=TAGS, domains=(), files=(), dep_ids=(), exclude=(), keyword_limit=5, domain_limit=0,
        related_limit=5, recent_limit=0, working_memory=False))
    return dict(found.tag_df), found.tagged_total, found.context_map_total, history_of(store, ["x"]).n_tasks


def _recounted(store: KnowledgeStore) -> tuple[dict[str, int], int, int, int]:
    """The same, counted from the whole graph (an export)."""
    rows = list(store.export_rows())
    nodes = [r for r in rows if r["kind"] == "node"]
    labels = Counter(r["label"] for r in nodes)
    degrees = Counter(r["dst"][1] for r in rows if r["kind"] == "rel" and r["type"] == "TAGGED")
    tags = {r["id"] for r in nodes if r["label"] == "Tag"}
    finished = sum(1 for r in nodes if r["label"] == "Task" and r["props"].get("status") == "completed")
    taggable = sum(n for label, n in labels.items() if label not in {"File", "Handoff", "Tag", "Term"})
    return ({t: degrees[t] for t in TAGS if t in tags}, taggable, labels["File"], finished)


def _writes(store: KnowledgeStore) -> None:
    """Every kind of write, checking the kept counts after each."""

    def check() -> None:
        assert _observed(store) == _recounted(store)

    store.upsert_files([FileEntry(path=p) for p in ("a.py", "b.py")])
    check()
    store.upsert_tasks([_task("t1", "cookie", "header"), _task("t2", "cookie"), _task("t3", "parser")])
    check()
    store.apply_handoffs([_handoff("t1", _item("quote values", "cookie", "security"))])
    store.apply_handoffs([_handoff("t2", success=False)])
    check()
    store.upsert_tasks([_task("t2", "widget")])  # re-tagged: cookie's degree falls
    store.set_status("t3", TaskStatus.COMPLETED, reason=None, at="2026-03-01T00:00:00Z")
    check()
    store.set_status("t3", TaskStatus.BLOCKED, reason="waits", at="2026-03-02T00:00:00Z")
    store.upsert_knowledge([_item("quote values", "header"), _item("escape", "cookie")])
    check()
    store.apply_handoffs([_handoff("t2", content="v2")])  # a new version finishes it
    check()
    rows = list(store.export_rows())
    store.clear()
    assert _observed(store) == ({}, 0, 0, 0)
    store.import_rows(rows)
    check()


def _written_file(path: Path) -> tuple[dict[str, int], int, int, int]:
    """An embedded store at ``path`` after ``_writes``, closed; its observed counts."""
    store = LocalStore.open(path)
    try:
        _writes(store)
        return _observed(store)
    finally:
        store.close()


def test_kept_counts_follow_every_write(store: KnowledgeStore) -> None:
    _writes(store)
    assert _observed(store) == ({"cookie": 3, "header": 2, "parser": 1, "security": 1, "widget": 1}, 5, 2, 2)


def test_an_embedded_store_written_without_the_kept_counts(tmp_path: Path) -> None:
    """Opened read-only it counts; the first writing open adds and fills them."""
    path = tmp_path / "old.db"
    expected = _written_file(path)
    conn = sqlite3.connect(path)
    for name in ("label_counts_add", "label_counts_remove", "tag_degrees_add", "tag_degrees_remove"):
        conn.execute(f"DROP TRIGGER {name}")
    for name in ("label_counts", "tag_degrees"):
        conn.execute(f"DROP TABLE {name}")
    conn.execute("DELETE FROM meta WHERE key = 'aggregates'")
    conn.commit()
    conn.close()

    old = LocalStore.open(path, read_only=True)
    try:
        assert _observed(old) == expected
        assert [h.task.id for h in gathered(old, keywords=("cookie", "widget")).related] == ["t2", "t1"]
    finally:
        old.close()
    again = LocalStore.open(path)
    try:
        tables = {r[0] for r in again.db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"label_counts", "tag_degrees"} <= tables and "task_state" not in tables
        assert _observed(again) == expected
        assert [h.task.id for h in gathered(again, keywords=("cookie", "widget")).related] == ["t2", "t1"]
        again.upsert_tasks([_task("t4", "cookie")])
        assert _observed(again) == _recounted(again)
    finally:
        again.close()


def test_a_neo4j_graph_written_without_the_completed_label(neo4j_store: KnowledgeStore) -> None:
    """Applying the schema labels the finished tasks an older ctxgraph wrote
    (and unlabels one it reopened)."""
    from ctxgraph.graph.neo4j_store import Neo4jStore

    assert isinstance(neo4j_store, Neo4jStore)
    neo4j_store.clear()
    try:
        _writes(neo4j_store)
        expected = _observed(neo4j_store)
        with neo4j_store._session() as session:
            session.run("MATCH (t:Completed) REMOVE t:Completed").consume()
            session.run("MATCH (t:Task {id: 't3'}) SET t:Completed").consume()  # t3 is blocked
        assert _observed(neo4j_store)[3] == 1
        neo4j_store.init_schema()
        assert _observed(neo4j_store) == expected
        assert all(r["label"] != "Completed" for r in neo4j_store.export_rows() if r["kind"] == "node")
    finally:
        neo4j_store.clear()


def test_a_writing_open_drops_the_first_versions_task_states(tmp_path: Path) -> None:
    """Version 1 of the kept counts also kept each task's state (for the
    related tasks' SQL, now read from the history): a writing open drops its
    table and triggers and keeps the counts right."""
    path = tmp_path / "v1.db"
    expected = _written_file(path)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE task_state (id TEXT PRIMARY KEY, status TEXT, completed_at TEXT NOT NULL)")
    conn.execute("CREATE TRIGGER task_state_remove AFTER DELETE ON nodes BEGIN DELETE FROM task_state; END")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'aggregates'")
    conn.commit()
    conn.close()
    again = LocalStore.open(path)
    try:
        names = {r[0] for r in again.db.conn.execute("SELECT name FROM sqlite_master")}
        assert "task_state" not in names and "task_state_remove" not in names
        assert _observed(again) == expected
        again.upsert_tasks([_task("t4", "cookie")])
        assert _observed(again) == _recounted(again)
    finally:
        again.close()
