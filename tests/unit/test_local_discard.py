"""A failed command's new embedded store is deleted only when nothing was
written to it and no other process has it open (``discard_if_empty``)."""

from __future__ import annotations

from pathlib import Path

from ctxgraph.core.models import Task
from ctxgraph.graph.local import LocalStore, discard_if_empty


def test_an_empty_store_nobody_holds_is_deleted(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    LocalStore.open(path).close()
    assert path.exists()
    assert discard_if_empty(path)
    assert list(tmp_path.iterdir()) == []


def test_a_store_holding_a_node_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    with LocalStore.open(path) as store:
        store.upsert_tasks([Task(id="t-1", name="Login")])
    assert not discard_if_empty(path)
    with LocalStore.open(path, read_only=True) as store:
        assert [t.id for t in store.list_tasks()] == ["t-1"]


def test_an_empty_store_another_connection_holds_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    other = LocalStore.open(path)  # another process that created it and is about to write
    try:
        assert not discard_if_empty(path)
        assert path.exists()
        other.upsert_tasks([Task(id="t-1", name="Login")])
    finally:
        other.close()
    with LocalStore.open(path, read_only=True) as store:
        assert [t.id for t in store.list_tasks()] == ["t-1"]
