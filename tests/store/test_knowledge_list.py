"""``KnowledgeStore.list_knowledge`` and ``service.find.list_knowledge`` on
both stores: the kind, tag and task filters, the discovering tasks, and the
superseded and stale marks (``ctxgraph knowledge list``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgraph.errors import UnknownTaskError
from ctxgraph.graph.records import stable_id
from ctxgraph.service import ContextService
from ctxgraph.service.find import list_knowledge

HANDOFF = {
    "task_id": "t-auth", "summary": "Added JWT middleware", "completed_at": "2026-01-05T10:00:00Z",
    "patterns_discovered": [{"pattern": "Wrap JWT routes with requireAuth()", "applies_to": ["auth", "jwt"],
                             "location": "src/auth.py"}],
    "gotchas": [{"issue": "Clock skew breaks exp checks", "severity": "high", "applies_to": ["jwt"]}],
    "decisions": [{"decision": "Sign tokens with HS256", "rationale": "one service", "applies_to": ["jwt"]}],
}
OTHER = {
    "task_id": "t-shop", "summary": "Added the cart", "completed_at": "2026-01-06T10:00:00Z",
    "gotchas": [{"issue": "Cart totals round per line", "severity": "low", "applies_to": ["cart"]}],
}


def _ids(listed: list[object]) -> list[str]:
    return [x.item.id for x in listed]  # type: ignore[attr-defined]


@pytest.fixture
def filled(svc: ContextService, tmp_path: Path) -> ContextService:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "auth.py").write_text("def require_auth(handler):\n    return handler\n")
    svc.use_root(tmp_path)
    svc.add_tasks([{"id": "t-auth", "name": "Add JWT middleware"}, {"id": "t-shop", "name": "Add a cart"},
                   {"id": "t-none", "name": "Nothing yet"}])
    svc.ingest_handoff(HANDOFF)
    svc.ingest_handoff(OTHER)
    old = svc.add_knowledge("plan", "Move JWT signing to a key service", tags=["jwt"])
    svc.revise_knowledge(old.id, "Move JWT signing to a key service in Q3")
    return svc


def test_store_listing_filters_by_kind_tag_and_task(filled: ContextService) -> None:
    store = filled.store
    every = store.list_knowledge()
    assert [item.id for item, _ in every] == sorted(item.id for item, _ in every)
    assert len(every) == 6
    pattern = stable_id("pattern", "Wrap JWT routes with requireAuth()")
    by_id = dict((item.id, tasks) for item, tasks in every)
    assert by_id[pattern] == ("t-auth",)
    assert by_id[stable_id("plan", "Move JWT signing to a key service")] == ()  # by hand: no task
    assert [i.kind for i, _ in store.list_knowledge(["gotcha"])] == ["gotcha", "gotcha"]
    assert {i.kind for i, _ in store.list_knowledge(["gotcha", "decision"])} == {"gotcha", "decision"}
    assert store.list_knowledge(["adr"]) == []
    jwt = [i.id for i, _ in store.list_knowledge(tags=["jwt"])]
    assert pattern in jwt and stable_id("gotcha", "Cart totals round per line") not in jwt
    both = store.list_knowledge(tags=["jwt", "requireauth"])
    assert [i.id for i, _ in both] == [pattern]
    assert all({"jwt", "auth"} <= set(i.tags) for i, _ in store.list_knowledge(tags=["jwt", "auth"]))
    assert [i.id for i, _ in store.list_knowledge(["gotcha"], ["jwt"], "t-auth")] == [
        stable_id("gotcha", "Clock skew breaks exp checks")]
    assert [i.id for i, _ in store.list_knowledge(task_id="t-shop")] == [stable_id("gotcha", "Cart totals round per line")]
    assert store.list_knowledge(task_id="t-none") == []
    assert store.list_knowledge(tags=["no-such-tag"]) == []


def test_marks_superseded_and_stale(filled: ContextService, tmp_path: Path) -> None:
    old_plan = stable_id("plan", "Move JWT signing to a key service")
    assert _ids(list_knowledge(filled, only_superseded=True)) == [old_plan]
    assert _ids(list_knowledge(filled, stale=True)) == []
    (tmp_path / "src" / "auth.py").write_text("def require_auth(handler, scopes):\n    return handler\n")
    filled.sync()
    (stale,) = list_knowledge(filled, stale=True)
    assert stale.item.id == stable_id("pattern", "Wrap JWT routes with requireAuth()")
    assert stale.stale == "changed: src/auth.py" and not stale.superseded
    assert _ids(list_knowledge(filled, kinds=["plan"], tags=["JWT"])) == sorted(
        [old_plan, stable_id("plan", "Move JWT signing to a key service in Q3")])
    with pytest.raises(UnknownTaskError):
        list_knowledge(filled, task_id="t-missing")


def test_tasks_by_tags_in_the_knowledge_queries_order(filled: ContextService) -> None:
    store = filled.store
    filled.add_task({"id": "t-jwt-cart", "name": "JWT for the cart", "objective": "Sign cart tokens with JWT"})
    hits = store.tasks_by_tags(["jwt", "cart"], 10)
    ids = [h.task.id for h in hits]
    assert set(ids) == {"t-auth", "t-shop", "t-jwt-cart"} and ids[0] == "t-jwt-cart"  # two tags before one
    assert hits[0].matched_tags == ("cart", "jwt")
    assert all(h.task.status.value in {"pending", "completed"} for h in hits)
    assert [h.task.id for h in store.tasks_by_tags(["jwt", "cart"], 1)] == ["t-jwt-cart"]
    assert store.tasks_by_tags(["no-such-tag"], 10) == [] and store.tasks_by_tags([], 10) == []
    assert store.tasks_by_tags(["jwt"], 10, max_df=1) == []  # a tag on more items than the cap is not read
    filled.add_dependency("t-jwt-cart", "t-auth")
    assert store.tasks_by_tags(["cart"], 10)[0].task.depends_on == ("t-auth",)
