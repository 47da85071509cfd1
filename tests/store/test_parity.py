"""Parity, tested rather than assumed: the demo project on both stores gives
the same graph counts and the same computed context for every task, to the
last digit (docs/parity.md; after real write histories:
test_parity_history.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from ctxgraph.demo import load_project
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor


def test_demo_gives_the_same_answers_on_both_stores(
    neo4j_store: KnowledgeStore, tmp_path: Path, demo_root: Path, extractor: SignalExtractor
) -> None:
    neo4j_store.clear()
    local = LocalStore.open(tmp_path / "graph.db")
    try:
        services = [ContextService(local, extractor), ContextService(neo4j_store, extractor)]
        for svc in services:
            load_project(svc, demo_root)
        a, b = services
        assert a.stats() == b.stats()
        ids = [t.id for t in a.list_tasks()]
        now = datetime.now(UTC)
        assert ids == [t.id for t in b.list_tasks()]
        for tid in ids:
            for complexity in ("easy", "complex"):
                ca = a.compute(tid, complexity=complexity, debug=True, now=now)
                cb = b.compute(tid, complexity=complexity, debug=True, now=now)
                assert ca.model_dump(mode="json") == cb.model_dump(mode="json"), (tid, complexity)
    finally:
        local.close()
        neo4j_store.clear()
