"""Export/import: a graph moves between the embedded store and Neo4j exactly —
the same bytes, the same counts, the same computed context — and importing
again changes nothing."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ctxgraph.demo import load_project
from ctxgraph.graph.backup import (
    BATCH_SIZE,
    HEADER,
    REL_TYPES,
    ExportReader,
    export_to_path,
    import_rows_into,
    node_row,
    rel_row,
    write_export,
)
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor


def export_bytes(store: KnowledgeStore) -> bytes:
    out = io.StringIO()
    write_export(store, out)
    return out.getvalue().encode("utf-8")


def import_bytes(store: KnowledgeStore, data: bytes) -> None:
    import_rows_into(store, ExportReader.from_bytes(data, "export.jsonl"))


@pytest.fixture
def other(store: KnowledgeStore, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KnowledgeStore]:
    """An empty store of the other kind than ``store``."""
    if isinstance(store, LocalStore):
        neo: KnowledgeStore = request.getfixturevalue("neo4j_store")
        neo.clear()
        yield neo
        neo.clear()
    else:
        local = LocalStore.open(tmp_path / "other.db")
        yield local
        local.close()


def test_demo_round_trips_to_the_other_store_exactly(
    store: KnowledgeStore, other: KnowledgeStore, demo_root: Path, extractor: SignalExtractor
) -> None:
    source = ContextService(store, extractor)
    load_project(source, demo_root)
    first = export_bytes(store)
    lines = first.decode().splitlines()
    assert lines[0] == '{"format": "ctxgraph-export", "version": 1}'
    assert len(lines) > 1000  # more than one import batch of relationships
    assert sum('"kind": "rel"' in line for line in lines) > BATCH_SIZE

    import_bytes(other, first)
    assert export_bytes(other) == first
    assert other.stats() == store.stats()
    target = ContextService(other, extractor)
    now = datetime.now(UTC)
    for task in source.list_tasks():
        a, b = source.compute(task.id, debug=True, now=now), target.compute(task.id, debug=True, now=now)
        assert a.model_dump(mode="json") == b.model_dump(mode="json"), task.id  # docs/parity.md

    import_bytes(other, first)  # again: nothing changes
    assert export_bytes(other) == first
    assert other.stats() == store.stats()
    import_bytes(store, first)  # into the store it came from: nothing changes either
    assert export_bytes(store) == first


def test_export_and_import_through_files(store: KnowledgeStore, tmp_path: Path, demo_root: Path,
                                         extractor: SignalExtractor) -> None:
    load_project(ContextService(store, extractor), demo_root)
    path = tmp_path / "backup.jsonl"
    summary = export_to_path(store, path)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert summary.nodes == sum(store.stats().labels.values())
    assert summary.relationships == sum(store.stats().relationships.values())
    fresh = LocalStore.open(tmp_path / "fresh.db")
    try:
        assert import_rows_into(fresh, ExportReader.from_path(path)) == summary
        assert export_bytes(fresh) == path.read_bytes()
    finally:
        fresh.close()


def test_empty_store_exports_only_the_header(store: KnowledgeStore) -> None:
    assert export_bytes(store) == b'{"format": "ctxgraph-export", "version": 1}\n'
    import_bytes(store, export_bytes(store))
    assert store.stats().labels == {}


def test_every_relationship_type_keeps_its_type_in_one_batch(store: KnowledgeStore) -> None:
    """MERGE with a dynamic type takes the first row's type for all rows on
    Neo4j 5.26; the import must not: all types in one batch, each kept."""
    nodes = [
        node_row("Task", "t1", {"id": "t1", "name": "one", "status": "completed"}),
        node_row("Task", "t2", {"id": "t2", "name": "two", "status": "pending"}),
        node_row("Handoff", "handoff:t1", {"id": "handoff:t1", "task_id": "t1", "success": True}),
        node_row("Pattern", "pattern:a", {"id": "pattern:a", "kind": "pattern", "summary": "a",
                                          "tags": ["x"], "importance": 0.5, "version": 1}),
        node_row("Decision", "decision:b", {"id": "decision:b", "kind": "decision", "summary": "b",
                                            "tags": [], "status": "active"}),
        node_row("Decision", "decision:c", {"id": "decision:c", "kind": "decision", "summary": "c",
                                            "tags": [], "status": "superseded"}),
        node_row("File", "src/a.py", {"id": "src/a.py", "path": "src/a.py", "component": "a", "notes": ""}),
        node_row("Tag", "x", {"id": "x", "name": "x"}),
        node_row("Term", "login", {"id": "login", "name": "login"}),
    ]
    rels = [
        rel_row("CREATED", ("Handoff", "handoff:t1"), ("File", "src/a.py"), {"purpose": "p"}),
        rel_row("DEPENDS_ON", ("Task", "t2"), ("Task", "t1"), {}),
        rel_row("DISCOVERED", ("Handoff", "handoff:t1"), ("Pattern", "pattern:a"), {}),
        rel_row("HANDED_OFF", ("Task", "t1"), ("Handoff", "handoff:t1"), {}),
        rel_row("IN_FILE", ("Pattern", "pattern:a"), ("File", "src/a.py"), {"lines": "1-2"}),
        rel_row("MODIFIED", ("Handoff", "handoff:t1"), ("File", "src/a.py"), {"lines": "3", "purpose": "q"}),
        rel_row("READ_NEXT", ("Handoff", "handoff:t1"), ("File", "src/a.py"), {"reason": "r"}),
        rel_row("SUPERSEDES", ("Decision", "decision:b"), ("Decision", "decision:c"), {}),
        rel_row("TAGGED", ("Pattern", "pattern:a"), ("Tag", "x"), {}),
        rel_row("TAGGED", ("Task", "t1"), ("Tag", "x"), {}),
    ]
    assert {r["type"] for r in rels} == set(REL_TYPES)
    for order in (rels, rels[::-1]):  # whichever type comes first
        store.clear()
        # (a backup of an older ctxgraph: its MENTIONS are accepted and left out)
        store.import_rows([*nodes, rel_row("MENTIONS", ("Task", "t1"), ("Term", "login"), {}), *order])
        got = list(store.export_rows())
        assert got == sorted(nodes, key=lambda r: (r["label"], r["id"])) + sorted(
            rels, key=lambda r: (r["type"], *r["src"], *r["dst"]))
        stats = store.stats()
        assert stats.relationships == {t: (2 if t == "TAGGED" else 1) for t in REL_TYPES}
        assert stats.labels == {"Decision": 2, "File": 1, "Handoff": 1, "Pattern": 1, "Tag": 1, "Task": 2,
                                "Term": 1}


def test_import_merges_into_a_store_that_has_other_data(store: KnowledgeStore) -> None:
    store.import_rows([node_row("Task", "keep", {"id": "keep", "name": "already here"}),
                       node_row("Tag", "x", {"id": "x", "name": "x"}),
                       rel_row("TAGGED", ("Task", "keep"), ("Tag", "x"), {})])
    store.import_rows([node_row("Task", "new", {"id": "new", "name": "imported"}),
                       node_row("Task", "keep", {"id": "keep", "name": "replaced"}),
                       node_row("Tag", "x", {"id": "x", "name": "x"}),
                       rel_row("TAGGED", ("Task", "new"), ("Tag", "x"), {})])
    rows = list(store.export_rows())
    assert [(r["kind"], r.get("id"), r["props"].get("name")) for r in rows] == [
        ("node", "x", "x"), ("node", "keep", "replaced"), ("node", "new", "imported"),
        ("rel", None, None), ("rel", None, None),
    ]


def test_header_constant_is_the_first_line() -> None:
    assert HEADER == {"format": "ctxgraph-export", "version": 1}
