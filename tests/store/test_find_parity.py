"""Search, the knowledge listing and the view give the same answers on both
stores for the demo project (as tests/store/test_parity.py holds it for the
contexts)."""

from __future__ import annotations

from pathlib import Path

from ctxgraph.demo import load_project
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.service.find import list_knowledge, search
from ctxgraph.service.view import overview, task_view
from ctxgraph.signals import SignalExtractor

QUERIES = ["refresh token rotation", "postgres migrations", "admin UI product form", "stripe checkout webhook"]


def test_the_demo_is_found_listed_and_drawn_alike_on_both_stores(
    neo4j_store: KnowledgeStore, tmp_path: Path, demo_root: Path, extractor: SignalExtractor
) -> None:
    neo4j_store.clear()
    local = LocalStore.open(tmp_path / "graph.db")
    try:
        a, b = ContextService(local, extractor), ContextService(neo4j_store, extractor)
        for svc in (a, b):
            load_project(svc, demo_root)
        for query in QUERIES:
            found, other = search(a, query, memory=False), search(b, query, memory=False)
            assert found.knowledge and found.tasks and found.code, query
            # (the tasks were written a moment apart on each store: their times are left out)
            assert [(m.task.id, m.matched_tags, m.relevance) for m in found.tasks] == [
                (m.task.id, m.matched_tags, m.relevance) for m in other.tasks], query
            assert found.model_copy(update={"tasks": ()}) == other.model_copy(update={"tasks": ()}), query
        assert list_knowledge(a) == list_knowledge(b) and len(list_knowledge(a)) == 82
        assert list_knowledge(a, kinds=["gotcha"], tags=["auth"]) == list_knowledge(b, kinds=["gotcha"], tags=["auth"])
        assert overview(a) == overview(b)
        for task in a.list_tasks():
            assert task_view(a, task.id, memory=False) == task_view(b, task.id, memory=False), task.id
    finally:
        local.close()
        neo4j_store.clear()
