"""Every public method of either store has a caller in ctxgraph itself: the
tests and the benchmarks read through the methods ctxgraph uses, never
through a copy kept for them (issue 30)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.neo4j_store import Neo4jStore
from ctxgraph.graph.store import KnowledgeStore

ROOT = Path(__file__).resolve().parents[2]


#: The stores' own packages: a call from inside a store is not a use of the port.
STORES = (ROOT / "ctxgraph" / "graph" / "local", ROOT / "ctxgraph" / "graph" / "neo4j_store")


def _sources(*, outside_the_stores: bool = False) -> str:
    files = [p for p in (ROOT / "ctxgraph").rglob("*.py")
             if not (outside_the_stores and any(p.is_relative_to(s) for s in STORES))]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def _public_methods(cls: type) -> list[str]:
    return sorted(name for name, member in inspect.getmembers(cls)
                  if not name.startswith("_") and callable(member))


@pytest.mark.parametrize("cls", [LocalStore, Neo4jStore], ids=lambda c: c.__name__)
def test_every_store_method_has_a_caller_outside_the_tests(cls: type) -> None:
    text = _sources()
    uncalled = [name for name in _public_methods(cls) if not re.search(rf"\.{name}\(", text)]
    assert uncalled == [], f"{cls.__name__} methods only the tests call"


def test_every_port_method_has_a_caller_outside_the_stores() -> None:
    # A port method one store only calls on itself (as the embedded store's
    # gather_with_history once called history_evidence) is no port method.
    text = _sources(outside_the_stores=True)
    uncalled = [name for name in _public_methods(KnowledgeStore) if not re.search(rf"\.{name}\(", text)]
    assert uncalled == [], "port methods nothing outside the stores calls"


def test_both_stores_have_every_port_method() -> None:
    port = {name for name in _public_methods(KnowledgeStore)}
    for cls in (LocalStore, Neo4jStore):
        assert port <= set(_public_methods(cls)), cls.__name__
