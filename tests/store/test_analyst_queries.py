"""The saved analyst queries run on a real Neo4j holding the demo project,
without a single server notification (what Neo4j Browser would show as a
warning), and complete."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.resources.abc import Traversable
from typing import Any

import pytest
from neo4j import Driver, GraphDatabase, RoutingControl
from neo4j.graph import Node

from ctxgraph import cypher
from ctxgraph.demo import DEMO_TASK, load_project
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.outcomes.records import parse_score, score_props
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor

NEIGHBOURHOOD_CAP = 2000
KNOWLEDGE = frozenset({"Pattern", "Gotcha", "Decision", "OpenQuestion"})

Edge = tuple[str, tuple[str, str], tuple[str, str]]  # (type, (label, id) of the source, of the target)


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


@pytest.fixture(scope="module")
def demo_rows(loaded: KnowledgeStore) -> list[dict[str, Any]]:
    """The demo graph as the store exports it (read through the store, not the queries under test)."""
    return list(loaded.export_rows())


@pytest.fixture(scope="module")
def delivery_rows(loaded: KnowledgeStore) -> list[dict[str, Any]]:
    """The demo's deliveries (not exported) as export-like node rows, read through the store."""
    rows = [{"kind": "node", "label": "Delivery", "props": {**stored.model_dump(), **score_props(score)}}
            for stored in loaded.deliveries() if (score := parse_score(stored)) is not None]
    assert rows, "the demo loader records each task's context and its handoff scores it"
    return rows


@pytest.fixture(scope="module")
def task_ids(loaded: KnowledgeStore) -> list[str]:
    ids = [t.id for t in loaded.list_tasks()]
    assert DEMO_TASK in ids
    return ids


def _notifications(driver: Driver, text: str, task_id: str) -> list[str]:
    _, summary, _ = driver.execute_query(text, task_id=task_id)
    # gql_status_objects carries every notification (summary.notifications is its deprecated older form)
    return [f"{s.gql_status} ({s.raw_severity}): {s.status_description}"
            for s in summary.gql_status_objects if s.is_notification]


@pytest.mark.parametrize("name", cypher.analyst_names())
def test_saved_query_returns_rows(loaded: KnowledgeStore, driver: Driver, name: str) -> None:
    """Run as Browser runs it (the text ``ctxgraph analyst`` saves), in a read transaction."""
    text = cypher.load_analyst(name)
    assert text.startswith("// ctxgraph: "), "the first line is the short title Browser shows"
    records, _, _ = driver.execute_query(text, task_id=DEMO_TASK, routing_=RoutingControl.READ)
    assert records, f"{name} returned nothing on the demo graph"


@pytest.mark.parametrize("name", cypher.analyst_names())
def test_saved_query_gets_no_notification(loaded: KnowledgeStore, driver: Driver, task_ids: list[str],
                                          name: str) -> None:
    text = cypher.load_analyst(name)
    assert _notifications(driver, text, DEMO_TASK) == [], name
    # an analyst sets any task: every demo task, and one that does not exist, is as quiet
    noisy = {t: n for t in [*task_ids, "no-such-task"] if (n := _notifications(driver, text, t))}
    assert noisy == {}, name


def _strip(text: str) -> str:
    """The Cypher less its comments and string literals."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return re.sub(r"'(?:[^'\\]|\\.)*'", "''", body)


@pytest.mark.parametrize("name", cypher.analyst_names())
def test_saved_query_names_only_what_the_demo_holds(demo_rows: list[dict[str, Any]],
                                                    delivery_rows: list[dict[str, Any]], name: str) -> None:
    """Every label, relationship type and property key a query names occurs in
    the demo data itself (its export, and its scored deliveries): on a server
    where other work created the token (so Neo4j stays silent) a query must
    still not lean on one the demo lacks."""
    demo_rows = [*demo_rows, *delivery_rows]
    body = _strip(cypher.load_analyst(name))
    labels = set(re.findall(r"(?:\(\s*\w*|\b\w+)\s*:\s*((?:[A-Z][a-z]\w*\|?)+)", body))
    labels = {part for group in labels for part in group.split("|") if part}
    rel_types = {part for group in re.findall(r"\[\s*\w*\s*:\s*([A-Z_|]+)", body) for part in group.split("|")}
    keys = set(re.findall(r"\b[a-z_]\w*\.([a-z_]\w*)\b", body)) | set(re.findall(r"\{\s*([a-z_]\w*)\s*:", body))
    held_labels = {r["label"] for r in demo_rows if r["kind"] == "node"} | {"Knowledge"}
    held_types = {r["type"] for r in demo_rows if r["kind"] == "rel"}
    held_keys = {k for r in demo_rows for k in r["props"]}
    assert labels and labels <= held_labels, (name, labels - held_labels)
    assert rel_types <= held_types, (name, rel_types - held_types)
    assert keys <= held_keys, (name, keys - held_keys)


def _end(node: Node | None) -> tuple[str, str]:
    assert node is not None
    (label,) = set(node.labels) - {"Knowledge", "Completed"}
    return label, node["id"]


def _neighbourhood(demo_rows: list[dict[str, Any]], task_id: str) -> set[Edge]:
    """What task_neighbourhood.cypher promises, computed in Python from the export."""
    edges = {(r["type"], (r["src"][0], r["src"][1]), (r["dst"][0], r["dst"][1]))
             for r in demo_rows if r["kind"] == "rel"}
    task = ("Task", task_id)
    chain, frontier = {task}, {task}
    while frontier:
        frontier = {d for t, s, d in edges if t == "DEPENDS_ON" and s in frontier} - chain
        chain |= frontier
    near = {e for e in edges if e[0] in ("DEPENDS_ON", "HANDED_OFF") and e[1] in chain}
    handoffs = {d for t, _, d in near if t == "HANDED_OFF"}
    near |= {e for e in edges if e[0] in ("DISCOVERED", "CREATED", "MODIFIED", "READ_NEXT") and e[1] in handoffs}
    tagged = {e for e in edges if e[0] == "TAGGED"}
    own_tags = {d for _, s, d in tagged if s == task}
    knowledge_tags = {d for _, s, d in tagged if s[0] in KNOWLEDGE}
    near |= {e for e in tagged if e[1][0] in KNOWLEDGE and e[2] in own_tags}
    near |= {e for e in tagged if e[1] == task and e[2] in knowledge_tags}
    return near


def test_neighbourhood_is_complete(driver: Driver, demo_rows: list[dict[str, Any]], task_ids: list[str]) -> None:
    text = cypher.load_analyst("task_neighbourhood")
    for task_id in task_ids:
        records, _, _ = driver.execute_query(text, task_id=task_id)
        rels = [r["relationship"] for r in records if r["relationship"] is not None]
        assert len({r.element_id for r in rels}) == len(rels), f"{task_id}: each relationship drawn once"
        drawn = {(r.type, _end(r.start_node), _end(r.end_node)) for r in rels}
        assert drawn == _neighbourhood(demo_rows, task_id), task_id
        lone = [r for r in records if r["relationship"] is None]
        assert [_end(r["source"]) for r in lone] == [("Task", task_id)], "the task itself, once"
        assert len(records) == len(rels) + 1 < NEIGHBOURHOOD_CAP, task_id
    records, _, _ = driver.execute_query(text, task_id=DEMO_TASK)
    assert len(records) > 100, "the demo task's neighbourhood is not a trivial one"


def test_unknown_saved_query_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="no saved analyst query named 'nope'"):
        cypher.load_analyst("nope")


def test_decision_conflicts_applies_the_rule_of_ctxgraph_conflicts(loaded: KnowledgeStore, driver: Driver) -> None:
    """The saved query's pairs are `ctxgraph conflicts`'s (compute/conflicts.py), figures included."""
    records, _, _ = driver.execute_query(cypher.load_analyst("decision_conflicts"), routing_=RoutingControl.READ)
    found = [(r["first_id"], r["second_id"], tuple(r["shared_tags"]), r["tag_similarity"], r["text_similarity"])
             for r in records]
    expected = [(c.first_id, c.second_id, c.shared_tags, c.tag_similarity, c.text_similarity)
                for c in ContextService(loaded, SignalExtractor()).conflicts()]
    assert found and found == expected
