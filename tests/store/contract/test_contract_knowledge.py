"""The contract of the ``KnowledgeWrites`` role (``ctxgraph.graph.store``),
run on every store: handoffs applied per record, knowledge by hand with its
SUPERSEDES links, read by id, by kind, tag and task, and by tag rarity."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import KnowledgeItem, Task, TaskStatus
from ctxgraph.errors import UnknownTaskError
from ctxgraph.graph.records import HandoffRecord
from ctxgraph.graph.store import KnowledgeStore, KnowledgeWrites

AT = "2026-01-01T00:00:00Z"


def item(kind: str, summary: str, tags: tuple[str, ...], at: str = "2026-02-01T00:00:00Z",
         **kw: object) -> KnowledgeItem:
    fields: dict[str, object] = {"id": f"{kind}:{summary}", "kind": kind, "summary": summary, "tags": tags,
                                 "created_at": at, "updated_at": at}
    return KnowledgeItem.model_validate(fields | kw)


def handoff(task_id: str, *knowledge: KnowledgeItem, content: str = "v1") -> HandoffRecord:
    return HandoffRecord(id=f"handoff:{task_id}", task_id=task_id, summary=f"{task_id} done", success=True,
                         completed_at="2026-02-01T00:00:00Z", raw="{}", content_hash=f"{task_id}-{content}",
                         knowledge=knowledge)


@pytest.fixture
def knowledge(store: KnowledgeStore) -> KnowledgeWrites:
    """The store of each kind with tasks t1 and t2, seen as its knowledge role."""
    store.upsert_tasks([Task(id=t, name=t, objective=t, created_at=AT, updated_at=AT) for t in ("t1", "t2")])
    return store


def test_handoffs_apply_per_record_and_once_per_content(store: KnowledgeStore, knowledge: KnowledgeWrites) -> None:
    first, again = handoff("t1", item("pattern", "Wrap", ("api",))), handoff("t2", item("gotcha", "Skew", ("jwt",)))
    assert knowledge.apply_handoffs([first, again, first]) == [True, True, False]
    assert knowledge.apply_handoffs([first]) == [False]
    assert knowledge.apply_handoffs([handoff("t1", content="v2")]) == [True]  # new content: written
    done = store.get_task("t1")
    assert done is not None and done.status is TaskStatus.COMPLETED


def test_a_handoff_of_an_unknown_task_refuses_its_whole_batch(store: KnowledgeStore,
                                                              knowledge: KnowledgeWrites) -> None:
    with pytest.raises(UnknownTaskError):
        knowledge.apply_handoffs([handoff("t1", item("pattern", "Wrap", ("api",))), handoff("ghost")])
    assert knowledge.get_knowledge(["pattern:Wrap"]) == []
    task = store.get_task("t1")
    assert task is not None and task.status is TaskStatus.PENDING


def test_knowledge_by_hand_read_by_id_in_id_order(knowledge: KnowledgeWrites) -> None:
    written = [item("pattern", "b", ("api",)), item("gotcha", "a", ("jwt",), severity="high")]
    knowledge.upsert_knowledge(written)
    assert knowledge.get_knowledge(["pattern:b", "zz", "gotcha:a"]) == sorted(written, key=lambda k: k.id)
    knowledge.upsert_knowledge(written)  # idempotent
    assert len(knowledge.get_knowledge(["pattern:b", "gotcha:a"])) == 2


def test_a_superseded_decision_holds_until_the_new_one_and_leaves_the_decisions_in_force(
    knowledge: KnowledgeWrites,
) -> None:
    old = item("decision", "HS256", ("jwt",), at="2026-01-10T00:00:00Z", status="active")
    new = item("decision", "RS256", ("jwt",), at="2026-02-10T00:00:00Z", status="active")
    knowledge.upsert_knowledge([old])
    assert [d.id for d in knowledge.decisions_in_force()] == ["decision:HS256"]
    knowledge.upsert_knowledge([new], supersedes=[("decision:RS256", "decision:HS256", "2026-02-10T00:00:00Z")])
    assert [d.id for d in knowledge.decisions_in_force()] == ["decision:RS256"]
    [superseded] = knowledge.get_knowledge(["decision:HS256"])
    assert (superseded.status, superseded.valid_from, superseded.valid_until) == (
        "superseded", "2026-01-10T00:00:00Z", "2026-02-10T00:00:00Z")


def test_the_list_by_kind_tag_and_discovering_task(knowledge: KnowledgeWrites) -> None:
    knowledge.apply_handoffs([handoff("t1", item("pattern", "Wrap", ("api", "auth"))),
                              handoff("t2", item("pattern", "Wrap", ("api", "auth")), item("gotcha", "Skew", ("jwt",)))])
    knowledge.upsert_knowledge([item("decision", "RS256", ("auth",), status="active")])
    every = knowledge.list_knowledge()
    assert [(k.id, tasks) for k, tasks in every] == [
        ("decision:RS256", ()), ("gotcha:Skew", ("t2",)), ("pattern:Wrap", ("t1", "t2"))]
    assert [k.id for k, _ in knowledge.list_knowledge(["pattern", "gotcha"])] == ["gotcha:Skew", "pattern:Wrap"]
    assert [k.id for k, _ in knowledge.list_knowledge(tags=["auth", "api"])] == ["pattern:Wrap"]
    assert [k.id for k, _ in knowledge.list_knowledge(task_id="t2")] == ["gotcha:Skew", "pattern:Wrap"]
    assert knowledge.list_knowledge(["adr"]) == [] and knowledge.list_knowledge(task_id="zz") == []


def test_knowledge_by_tags_rarer_first_then_newer_then_id(knowledge: KnowledgeWrites) -> None:
    knowledge.upsert_knowledge([item("pattern", "rare and common", ("rare", "common")),
                                item("pattern", "b common", ("common",), at="2026-03-01T00:00:00Z"),
                                item("pattern", "a common", ("common",), at="2026-03-01T00:00:00Z"),
                                item("pattern", "old common", ("common",), at="2026-01-01T00:00:00Z"),
                                item("pattern", "other", ("other",))])
    hits = knowledge.knowledge_by_tags(["common", "rare"], 10)
    assert [h.item.summary for h in hits] == ["rare and common", "a common", "b common", "old common"]
    assert hits[0].matched_tags == ("common", "rare")
    assert [h.item.summary for h in knowledge.knowledge_by_tags(["common", "rare"], 2)] == ["rare and common",
                                                                                             "a common"]
    assert knowledge.knowledge_by_tags(["common"], 10, max_df=3) == []  # on 4 items: above the cap, not read
    assert knowledge.knowledge_by_tags([], 10) == []
