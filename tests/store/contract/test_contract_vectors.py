"""The contract of the ``VectorStore`` role (``ctxgraph.graph.store``), run on
every store: the finished tasks' vectors follow their text; each task's query
vector is kept apart from them."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import Task, TaskStatus
from ctxgraph.graph.records import text_hash
from ctxgraph.graph.store import KnowledgeStore, VectorStore

AT = "2026-01-01T00:00:00Z"


def unit(*weights: float) -> list[float]:
    """A 384-dimensional vector with ``weights`` in its first places."""
    return [*weights, *[0.0] * (384 - len(weights))]


def task(tid: str, text: str, *, finished: bool = True) -> Task:
    status = TaskStatus.COMPLETED if finished else TaskStatus.PENDING
    return Task(id=tid, name=text, objective="", status=status, created_at=AT, updated_at=AT,
                completed_at=AT if finished else None)


@pytest.fixture
def vectors(store: KnowledgeStore) -> VectorStore:
    """The store of each kind, with two finished tasks and a pending one, seen as its vector role."""
    store.upsert_tasks([task("t1", "cookie header"), task("t2", "parser"), task("t3", "pending", finished=False)])
    return store


def test_finished_tasks_without_a_vector_of_their_text_are_to_embed(vectors: VectorStore) -> None:
    assert not vectors.has_task_vectors() and vectors.task_vector_count() == 0
    assert vectors.tasks_to_embed(10) == [("t1", "cookie header"), ("t2", "parser")]
    assert vectors.tasks_to_embed(1) == [("t1", "cookie header")]
    assert vectors.tasks_to_embed(10, ["t2", "t3", "zz"]) == [("t2", "parser")]
    vectors.write_task_vectors([("t1", text_hash("cookie header"), unit(1.0)), ("ghost", "x", unit(1.0))])
    assert vectors.has_task_vectors() and vectors.task_vector_count() == 1  # the unknown task skipped
    assert vectors.tasks_to_embed(10) == [("t2", "parser")]
    vectors.write_task_vectors([("t1", text_hash("an older text"), unit(1.0))])
    assert vectors.tasks_to_embed(10) == [("t1", "cookie header"), ("t2", "parser")]  # of another text: stale


def test_query_vectors_are_kept_apart_and_read_with_the_task(vectors: VectorStore) -> None:
    vectors.write_task_query_vectors([("t3", "h3", unit(0.0, 1.0)), ("ghost", "h", unit(1.0))])
    assert vectors.task_query_vectors(["t3", "t1", "ghost"]) == {"t3": ("h3", unit(0.0, 1.0))}
    assert not vectors.has_task_vectors()  # not a finished task's vector
    found, query = vectors.task_with_query_vector("t3")
    assert found is not None and found.id == "t3" and query == ("h3", unit(0.0, 1.0))
    found, query = vectors.task_with_query_vector("t1")
    assert found is not None and query is None
    assert vectors.task_with_query_vector("zz") == (None, None)
    vectors.write_task_query_vectors([("t3", "h4", unit(1.0))])
    assert vectors.task_query_vectors(["t3"]) == {"t3": ("h4", unit(1.0))}
