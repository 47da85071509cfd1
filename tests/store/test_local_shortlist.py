"""The embedded store's nearest finished tasks over a shortlist (core.shortlist,
used beyond EXACT_UP_TO vectors): lowered here, the store's answers are the
exact scan's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ctxgraph.core import shortlist
from ctxgraph.core.models import Task, TaskStatus
from ctxgraph.graph.local import history
from ctxgraph.graph.local.store import LocalStore
from ctxgraph.graph.records import text_hash
from ctxgraph.signals import TaskSignals
from tests._reads import history_of

CLUSTERS, SIZE = 6, 10


def _task(n: int) -> Task:
    return Task(id=f"t{n:02d}", name=f"task {n}", objective="", status=TaskStatus.COMPLETED,
                signals=TaskSignals(keywords=(), domains=(), files_mentioned=(), task_types=("feature",)),
                created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z",
                completed_at=f"2026-02-{n % 28 + 1:02d}T00:00:00Z")


@pytest.mark.parametrize("size", [SIZE, 2 * SIZE])
def test_neighbours_over_the_shortlist_are_the_exact_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          size: int) -> None:
    rng = np.random.default_rng(11)
    centres = rng.normal(size=(CLUSTERS, 384))
    vectors = {n: centres[n // SIZE] + rng.normal(scale=0.3, size=384) for n in range(CLUSTERS * SIZE)}
    tasks = [_task(n) for n in vectors]
    queries = [[float(x) for x in vectors[n] + rng.normal(scale=0.05, size=384)] for n in (0, 17, 33, 59)]
    answers = {}
    for short in (False, True):
        if short:
            monkeypatch.setattr(history, "EXACT_UP_TO", 0)
            monkeypatch.setattr(shortlist, "SHORTLIST", size)
            monkeypatch.setattr(shortlist, "SHORTLIST_SHARE", 0.0)
        with LocalStore.open(tmp_path / f"{short}.db") as store:
            store.upsert_tasks(tasks)
            store.write_task_vectors([(t.id, text_hash(t.name), [float(x) for x in vectors[n]])
                                      for n, t in zip(vectors, tasks, strict=True)])
            answers[short] = [[(n.id, n.score) for n in history_of(store, [], top_files=0, vector=q).neighbours]
                              for q in queries]
            used = store._corpus_cache  # the path taken
            assert used is not None and (used.signs is not None) is short
    for short, exact in zip(answers[True], answers[False], strict=True):  # float32 sums in another order:
        assert [tid for tid, _ in short] == [tid for tid, _ in exact]  # the last decimal may differ
        assert [score for _, score in short] == pytest.approx([score for _, score in exact], abs=2e-6)
