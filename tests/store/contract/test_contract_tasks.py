"""The contract of the ``TaskStore`` role (``ctxgraph.graph.store``), run on
every store: what its docstrings promise, through its methods only.

One module per role, named ``test_contract_<role>.py``: the pattern the
other roles' contracts follow. The store fixture is typed as the role, so a
test here can only use what the role declares."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import Task, TaskStatus
from ctxgraph.errors import UnknownTaskError
from ctxgraph.graph.store import KnowledgeStore, TaskStore
from ctxgraph.signals import TaskSignals

AT = "2026-01-01T00:00:00Z"


@pytest.fixture
def tasks(store: KnowledgeStore) -> TaskStore:
    """The store of each kind, seen as its task role."""
    return store


def task(tid: str, *deps: str, keywords: tuple[str, ...] = (), updated: str = AT, **kw: object) -> Task:
    signals = TaskSignals(keywords=keywords, domains=(), files_mentioned=(), task_types=("feature",))
    return Task(id=tid, name=f"Task {tid}", objective=f"do {tid}", depends_on=deps, signals=signals,
                created_at=AT, updated_at=updated, **kw)  # type: ignore[arg-type]


def test_upsert_then_read_gives_the_task_back_whole(tasks: TaskStore) -> None:
    tasks.upsert_tasks([task("t1", keywords=("jwt", "login")), task("t2", "t1", acceptance_criteria=("a", "b"))])
    got = tasks.get_task("t2")
    assert got is not None and got.depends_on == ("t1",) and got.acceptance_criteria == ("a", "b")
    t1 = tasks.get_task("t1")
    assert t1 is not None and t1.signals is not None and t1.signals.keywords == ("jwt", "login")
    assert tasks.get_task("nope") is None


def test_get_tasks_gives_those_that_exist_in_id_order(tasks: TaskStore) -> None:
    tasks.upsert_tasks([task("b"), task("a"), task("c")])
    assert [t.id for t in tasks.get_tasks(["c", "zz", "a"])] == ["a", "c"]
    assert tasks.get_tasks([]) == []


def test_upsert_is_idempotent_and_an_update_replaces_the_text(tasks: TaskStore) -> None:
    tasks.upsert_tasks([task("a"), task("b", "a")])
    first = tasks.list_tasks()
    tasks.upsert_tasks([task("a"), task("b", "a")])
    assert tasks.list_tasks() == first
    tasks.upsert_tasks([task("a").model_copy(update={"objective": "do a, again"})])
    got = tasks.get_task("a")
    assert got is not None and got.objective == "do a, again"
    assert [t.id for t in tasks.list_tasks()] == ["a", "b"]


def test_an_unknown_dependency_is_refused_and_nothing_written(tasks: TaskStore) -> None:
    with pytest.raises(UnknownTaskError):
        tasks.upsert_tasks([task("t1"), task("t2", "ghost")])
    assert tasks.list_tasks() == []


def test_status_is_set_with_its_reason_and_listed_by_status(tasks: TaskStore) -> None:
    tasks.upsert_tasks([task("a"), task("b"), task("c")])
    tasks.set_status("b", TaskStatus.BLOCKED, reason="waiting on keys", at="2026-03-02T00:00:00Z")
    blocked = tasks.get_task("b")
    assert blocked is not None and (blocked.status, blocked.blocked_reason) == (TaskStatus.BLOCKED, "waiting on keys")
    assert [t.id for t in tasks.list_tasks(TaskStatus.BLOCKED)] == ["b"]
    assert [t.id for t in tasks.list_tasks(TaskStatus.PENDING)] == ["a", "c"]
    tasks.set_status("b", TaskStatus.PENDING, reason=None, at="2026-03-03T00:00:00Z")
    unblocked = tasks.get_task("b")
    assert unblocked is not None and unblocked.status is TaskStatus.PENDING and unblocked.blocked_reason is None
    with pytest.raises(UnknownTaskError):
        tasks.set_status("zz", TaskStatus.BLOCKED, reason="x", at="2026-03-03T00:00:00Z")


def test_the_dependency_closure_is_every_edge_reachable_sorted(tasks: TaskStore) -> None:
    tasks.upsert_tasks([task("a"), task("b", "a"), task("c", "b"), task("d", "a", "c"), task("x"), task("y", "x")])
    assert tasks.dependency_closure(["c"]) == [("b", "a"), ("c", "b")]
    assert tasks.dependency_closure(["d"]) == [("b", "a"), ("c", "b"), ("d", "a"), ("d", "c")]
    assert tasks.dependency_closure(["c", "y", "zz"]) == [("b", "a"), ("c", "b"), ("y", "x")]
    assert tasks.dependency_closure(["a"]) == [] and tasks.dependency_closure([]) == []


def test_tasks_by_tags_rarer_tags_then_newer_then_id_within_the_limit(tasks: TaskStore) -> None:
    tasks.upsert_tasks([task("t1", keywords=("jwt", "common"), updated="2026-01-02T00:00:00Z"),
                        task("t2", keywords=("common",), updated="2026-01-03T00:00:00Z"),
                        task("t3", keywords=("common",), updated="2026-01-03T00:00:00Z"),
                        task("t4", keywords=("other",))])
    hits = tasks.tasks_by_tags(["jwt", "common"], 10)
    assert [h.task.id for h in hits] == ["t1", "t2", "t3"]
    assert hits[0].matched_tags == ("common", "jwt")
    assert [h.task.id for h in tasks.tasks_by_tags(["jwt", "common"], 2)] == ["t1", "t2"]
    assert tasks.tasks_by_tags(["nothing"], 10) == [] and tasks.tasks_by_tags(["common"], 0) == []
