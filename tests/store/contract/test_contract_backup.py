"""The contract of the ``BackupStore`` role (``ctxgraph.graph.store``), run on
every store: export rows sorted from one snapshot, imported with MERGE
semantics, idempotent, a bad row refused."""

from __future__ import annotations

import pytest

from ctxgraph.errors import InvalidDocumentError
from ctxgraph.graph.backup import node_row, rel_row
from ctxgraph.graph.store import BackupStore, KnowledgeStore

ROWS = [node_row("Task", "t2", {"id": "t2", "name": "second"}), node_row("Task", "t1", {"id": "t1", "name": "first"}),
        node_row("Tag", "jwt", {"id": "jwt", "name": "jwt"}),
        rel_row("TAGGED", ("Task", "t2"), ("Tag", "jwt"), {}), rel_row("DEPENDS_ON", ("Task", "t2"), ("Task", "t1"), {}),
        rel_row("TAGGED", ("Task", "t1"), ("Tag", "jwt"), {})]


@pytest.fixture
def backup(store: KnowledgeStore) -> BackupStore:
    """The store of each kind, seen as its backup role."""
    return store


def test_rows_come_back_nodes_then_relationships_each_sorted(backup: BackupStore) -> None:
    assert list(backup.export_rows()) == []
    backup.import_rows(ROWS)
    nodes, rels = ROWS[:3], ROWS[3:]
    expected = sorted(nodes, key=lambda r: (r["label"], r["id"])) + sorted(
        rels, key=lambda r: (r["type"], *r["src"], *r["dst"]))
    assert list(backup.export_rows()) == expected
    backup.import_rows(ROWS)  # idempotent
    assert list(backup.export_rows()) == expected


def test_import_merges_and_replaces_properties(backup: BackupStore) -> None:
    backup.import_rows(ROWS)
    backup.import_rows([node_row("Task", "t1", {"id": "t1", "name": "renamed"})])
    names = {r["id"]: r["props"]["name"] for r in backup.export_rows() if r["kind"] == "node"}
    assert names == {"jwt": "jwt", "t1": "renamed", "t2": "second"}


def test_a_relationship_to_a_missing_node_is_refused_with_its_batch(backup: BackupStore) -> None:
    backup.import_rows(ROWS[:3])
    with pytest.raises(InvalidDocumentError, match="ghost"):
        backup.import_rows([rel_row("TAGGED", ("Task", "t1"), ("Tag", "jwt"), {}),
                            rel_row("DEPENDS_ON", ("Task", "t1"), ("Task", "ghost"), {})])
    assert [r for r in backup.export_rows() if r["kind"] == "rel"] == []  # the batch's good row too
