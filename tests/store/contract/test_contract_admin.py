"""The contract of the ``StoreAdmin`` role (``ctxgraph.graph.store``), run on
every store: the schema applied again changes nothing, the counts count, and
``clear`` empties the graph."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import Task
from ctxgraph.graph.store import KnowledgeStore, StoreAdmin
from ctxgraph.signals import TaskSignals

AT = "2026-01-01T00:00:00Z"


@pytest.fixture
def admin(store: KnowledgeStore) -> StoreAdmin:
    """The store of each kind, seen as its admin role."""
    return store


def _fill(store: KnowledgeStore) -> None:
    signals = TaskSignals(keywords=("jwt",), domains=(), files_mentioned=(), task_types=("feature",))
    store.upsert_tasks([Task(id="a", name="a", objective="a", signals=signals, created_at=AT, updated_at=AT),
                        Task(id="b", name="b", objective="b", depends_on=("a",), created_at=AT, updated_at=AT)])


def test_an_empty_store_counts_nothing_and_says_where_it_is(admin: StoreAdmin) -> None:
    stats = admin.stats()
    assert sum(stats.labels.values()) == 0 and sum(stats.relationships.values()) == 0
    assert isinstance(admin.location, str) and admin.location


def test_counts_by_label_and_type_and_the_schema_again_keeps_them(store: KnowledgeStore) -> None:
    _fill(store)
    admin: StoreAdmin = store
    stats = admin.stats()
    assert (stats.labels["Task"], stats.labels["Tag"]) == (2, 1)
    assert (stats.relationships["DEPENDS_ON"], stats.relationships["TAGGED"]) == (1, 1)
    admin.init_schema()
    assert admin.stats() == stats


def test_clear_empties_the_graph_and_it_is_usable_again(store: KnowledgeStore) -> None:
    _fill(store)
    admin: StoreAdmin = store
    admin.clear()
    assert sum(admin.stats().labels.values()) == 0 and store.list_tasks() == []
    _fill(store)
    assert admin.stats().labels["Task"] == 2
