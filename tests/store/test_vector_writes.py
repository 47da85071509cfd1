"""Task vectors written one small write at a time, as ``ingest handoff`` writes
them, and some written again with a new text: every later search finds the
current vectors exactly — on Neo4j, whose vector index keeps each write as a
Lucene segment and merges them in the background (docs/embedding.md, "Neo4j's
vector indexes"), the same neighbours as the embedded store's exact search."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from ctxgraph.core import evidence
from ctxgraph.core.models import NeighbourEvidence, Task, TaskStatus
from ctxgraph.core.vectors import COSINE_DECIMALS
from ctxgraph.graph.records import text_hash
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.signals import TaskSignals
from tests._reads import history_of

TASKS = 24
REWRITTEN = 8


def _tasks(texts: dict[str, str]) -> list[Task]:
    return [Task(id=tid, name=text, objective="", status=TaskStatus.COMPLETED,
                 signals=TaskSignals(keywords=(), domains=(), files_mentioned=(), task_types=("feature",)),
                 created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z",
                 completed_at=f"2026-02-{n:02d}T00:00:00Z")
            for n, (tid, text) in enumerate(sorted(texts.items()), start=1)]


def _expected(vectors: dict[str, npt.NDArray[np.float64]], query: npt.NDArray[np.float64],
              completed: dict[str, str]) -> list[tuple[str, float]]:
    """The exact nearest tasks, as core/evidence orders them: cosine, newer, id."""
    scored = [(tid, round(float(v @ query / (np.linalg.norm(v) * np.linalg.norm(query))), COSINE_DECIMALS))
              for tid, v in vectors.items()]
    scored.sort(key=lambda x: x[0])
    scored.sort(key=lambda x: completed[x[0]], reverse=True)
    scored.sort(key=lambda x: x[1], reverse=True)
    return scored[:evidence.DENSE_VOTERS]


def test_neighbours_stay_exact_after_many_small_vector_writes(store: KnowledgeStore) -> None:
    rng = np.random.default_rng(7)
    texts = {f"t{i:02d}": f"task number {i}" for i in range(TASKS)}
    tasks = _tasks(texts)
    store.upsert_tasks(tasks)
    completed = {t.id: t.completed_at or "" for t in tasks}
    vectors = {tid: rng.normal(size=384) for tid in texts}
    for tid, vec in vectors.items():  # one write (one transaction, one index segment) each
        store.write_task_vectors([(tid, text_hash(texts[tid]), [float(x) for x in vec])])
    old = {}
    for tid in list(texts)[:REWRITTEN]:  # a new text, its vector written again
        old[tid] = vectors[tid]
        texts[tid] += " rewritten"
        vectors[tid] = rng.normal(size=384)
        store.upsert_tasks([t.model_copy(update={"name": texts[tid]}) for t in _tasks(texts) if t.id == tid])
        store.write_task_vectors([(tid, text_hash(texts[tid]), [float(x) for x in vectors[tid]])])
    assert store.task_vector_count() == TASKS
    assert store.tasks_to_embed(TASKS) == []
    for tid in ["t00", "t03", "t09", "t17", "t23"]:
        found = history_of(store, [], top_files=0, vector=[float(x) for x in vectors[tid]]).neighbours
        _same(found, _expected(vectors, vectors[tid], completed))
        assert found[0].id == tid and found[0].score == pytest.approx(1.0, abs=1e-6)
    for stale in old.values():  # a replaced vector is gone from the index
        found = history_of(store, [], top_files=0, vector=[float(x) for x in stale]).neighbours
        _same(found, _expected(vectors, stale, completed))
        assert all(n.score < 0.9 for n in found)


def _same(found: Sequence[NeighbourEvidence], expected: list[tuple[str, float]]) -> None:
    """The same tasks in the same order, the cosines to float32 precision
    (Neo4j's index scores (1 + cosine) / 2 in float32)."""
    assert [n.id for n in found] == [tid for tid, _ in expected]
    assert [n.score for n in found] == pytest.approx([score for _, score in expected], abs=2e-6)
