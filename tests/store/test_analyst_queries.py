"""The saved analyst queries run on a real Neo4j holding the demo project,
without a single server notification (what Neo4j Browser would show as a
warning), and complete."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources.abc import Traversable
from typing import Any

import pytest
from neo4j import Driver, GraphDatabase

from ctxgraph import cypher
from ctxgraph.demo import DEMO_TASK, load_project
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor

NEIGHBOURHOOD_CAP = 2000


@pytest.fixture(scope="module")
def loaded(neo4j_store: KnowledgeStore, demo_root: Traversable) -> KnowledgeStore:
    neo4j_store.clear()
    load_project(ContextService(neo4j_store, SignalExtractor()), demo_root)
    return neo4j_store


@pytest.fixture(scope="module")
def driver(neo4j_settings: Any) -> Iterator[Driver]:
    """A driver that receives every notification, as Neo4j Browser does."""
    auth = (neo4j_settings.user, neo4j_settings.password)
    with GraphDatabase.driver(neo4j_settings.uri, auth=auth, notifications_min_severity="INFORMATION") as drv:
        yield drv


@pytest.mark.parametrize("name", cypher.analyst_names())
def test_saved_query_returns_rows(loaded: KnowledgeStore, name: str) -> None:
    text = cypher.load_analyst(name)
    assert text.startswith("// ctxgraph: "), "the first line is the short title Browser shows"
    rows = loaded.saved_query(name, task_id=DEMO_TASK)  # type: ignore[attr-defined]
    assert rows, f"{name} returned nothing on the demo graph"


@pytest.mark.parametrize("name", cypher.analyst_names())
def test_saved_query_gets_no_notification(loaded: KnowledgeStore, driver: Driver, name: str) -> None:
    _, summary, _ = driver.execute_query(cypher.load_analyst(name), task_id=DEMO_TASK)
    notes = [f"{s.gql_status}: {s.status_description}" for s in summary.gql_status_objects
             if s.is_notification]
    assert notes == [], name


def test_neighbourhood_is_complete(loaded: KnowledgeStore, driver: Driver) -> None:
    records, _, _ = driver.execute_query(cypher.load_analyst("task_neighbourhood"), task_id=DEMO_TASK)
    assert len(records) < NEIGHBOURHOOD_CAP
    rels = [r["relationship"] for r in records if r["relationship"] is not None]
    assert len({r.element_id for r in rels}) == len(rels), "each relationship drawn once"
    drawn = {(r.start_node["id"], r.end_node["id"]) for r in rels if r.type == "DEPENDS_ON"}
    chain = {pair for pair in loaded.dependency_closure([DEMO_TASK])}
    assert drawn == chain
    handed = {r.start_node["id"] for r in rels if r.type == "HANDED_OFF"}
    finished = {t.id for t in loaded.get_tasks(sorted({d for pair in chain for d in pair}))
                if t.status.value in ("completed", "failed")}
    assert handed == finished
    expected_discovered, _, _ = driver.execute_query(
        "MATCH (:Task {id: $task_id})-[:DEPENDS_ON]->*(:Task)-[:HANDED_OFF]->(:Handoff)-[r:DISCOVERED]->() "
        "RETURN count(DISTINCT r) AS n", task_id=DEMO_TASK)
    assert sum(r.type == "DISCOVERED" for r in rels) == expected_discovered[0]["n"] > 0
    assert any(r["relationship"] is None and r["source"]["id"] == DEMO_TASK for r in records)


def test_unknown_saved_query_is_a_clear_error(loaded: KnowledgeStore) -> None:
    with pytest.raises(KeyError, match="no saved analyst query named 'nope'"):
        loaded.saved_query("nope")  # type: ignore[attr-defined]
