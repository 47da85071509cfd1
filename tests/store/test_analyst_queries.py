"""The saved analyst queries run on a real Neo4j holding the demo project."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgraph import cypher
from ctxgraph.demo import load_project
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor


@pytest.fixture(scope="module")
def loaded(neo4j_store: KnowledgeStore, demo_root: Path) -> KnowledgeStore:
    neo4j_store.clear()
    load_project(ContextService(neo4j_store, SignalExtractor()), demo_root)
    return neo4j_store


@pytest.mark.parametrize("name", cypher.analyst_names())
def test_saved_query_returns_rows(loaded: KnowledgeStore, name: str) -> None:
    text = cypher.load_analyst(name)
    assert text.lstrip().startswith("//"), "each saved query starts with a comment saying what it shows"
    rows = loaded.saved_query(name, task_id="task-015")  # type: ignore[attr-defined]
    assert rows, f"{name} returned nothing on the demo graph"


def test_unknown_saved_query_is_a_clear_error(loaded: KnowledgeStore) -> None:
    with pytest.raises(KeyError, match="no saved analyst query named 'nope'"):
        loaded.saved_query("nope")  # type: ignore[attr-defined]
