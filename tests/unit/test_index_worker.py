"""The background indexing queue and worker: coalescing, retries with backoff,
runs cut by their time limit going on, and contexts never waiting."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ctxgraph.errors import ConfigurationError
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory import index as index_module
from ctxgraph.memory.worker import IndexQueue, IndexWorker


def test_requests_are_coalesced_per_project_and_keep_their_place(tmp_path: Path) -> None:
    a, b = tmp_path / "alpha", tmp_path / "beta"
    a.mkdir()
    b.mkdir()
    queue = IndexQueue()
    assert queue.request(a) == "alpha"
    queue.request(b)
    queue.request(a, embeddings=False)  # coalesced into the first request
    assert len(queue) == 2
    first = queue.take(timeout=0)
    assert first is not None and first.project == "alpha" and first.embeddings is False
    second = queue.take(timeout=0)
    assert second is not None and second.project == "beta"
    assert queue.take(timeout=0.05) is None
    with pytest.raises(ConfigurationError):
        queue.request(a, project="no/slashes")


def test_a_failing_run_is_retried_after_a_growing_backoff(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.md").write_text("# A\n\nSome text.\n", encoding="utf-8")
    attempts: list[float] = []

    def broken() -> KnowledgeStore:
        attempts.append(time.monotonic())
        raise OSError("disk full")

    queue = IndexQueue()
    errors: list[float] = []
    worker = IndexWorker(broken, queue, backoff_base=0.05, backoff_cap=1.0,
                         on_error=lambda req, exc, delay: errors.append(delay))
    queue.request(tmp_path / "p", embeddings=False)
    for _ in range(3):
        req = queue.take(timeout=5)
        assert req is not None
        assert worker.run_one(req) is None
    assert len(attempts) == 3 and worker.failures == 3
    assert errors[0] < errors[1] < errors[2]  # 0.05, 0.1, 0.2 (each +-20 %)
    assert attempts[2] - attempts[1] >= errors[1] * 0.99
    assert len(queue) == 1  # still waiting for its next try


def test_a_run_cut_by_its_time_limit_is_queued_to_go_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "p"
    root.mkdir()
    for n in range(60):
        (root / f"f{n:02}.md").write_text(f"# File {n}\n\nText {n}.\n", encoding="utf-8")
    monkeypatch.setattr(index_module, "BATCH_FILES", 10)
    db = tmp_path / "graph.db"
    queue = IndexQueue()
    worker = IndexWorker(lambda: LocalStore.open(db), queue, time_limit=1e-9)
    queue.request(root, embeddings=False)
    req = queue.take(timeout=0)
    assert req is not None
    report = worker.run_one(req)
    # Past its limit from the start, a run still finishes (and writes) one file.
    assert report is not None and not report.complete and report.indexed == 1 and not report.indexed_at
    store = LocalStore.open(db)
    try:
        state = store.memory_state("p")
        assert state.project is not None and state.project.indexed_at == "" and len(state.file_hashes) == 1
    finally:
        store.close()
    worker.time_limit = 300
    req = queue.take(timeout=0)
    assert req is not None
    report = worker.run_one(req)
    assert report is not None and report.complete and report.indexed == 59 and report.unchanged == 1


def test_the_thread_runs_requests_until_stopped(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nSome text.\n", encoding="utf-8")
    db = tmp_path / "graph.db"
    reports: list[object] = []
    queue = IndexQueue()
    worker = IndexWorker(lambda: LocalStore.open(db), queue, on_report=reports.append)
    worker.start()
    try:
        queue.request(root, embeddings=False)
        deadline = time.monotonic() + 30
        while not reports and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        worker.stop()
        worker.join(timeout=10)
    assert len(reports) == 1 and not worker.is_alive()


def test_follow_up_runs_after_a_complete_run_and_its_failure_costs_no_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nSome text.\n", encoding="utf-8")
    db = tmp_path / "graph.db"
    seen: list[tuple[str, int]] = []

    def follow_up(store: KnowledgeStore, report: object) -> None:
        seen.append((report.project, len(store.memory_state("p").file_hashes)))  # type: ignore[attr-defined]
        raise RuntimeError("model missing")

    queue = IndexQueue()
    worker = IndexWorker(lambda: LocalStore.open(db), queue, follow_up=follow_up)
    queue.request(root, embeddings=False)
    req = queue.take(timeout=0)
    assert req is not None
    report = worker.run_one(req)
    assert report is not None and report.complete  # the index stands
    assert seen == [("p", 1)]  # on the run's own store, the run's chunks written
    assert worker.failures == 0 and len(queue) == 0  # a follow-up's failure is not the run's

    worker = IndexWorker(lambda: LocalStore.open(db), queue, time_limit=1e-9, follow_up=follow_up)
    monkeypatch.setattr(index_module, "BATCH_FILES", 1)
    for name in ("b", "c"):
        (root / f"{name}.md").write_text(f"# {name}\n\nMore text.\n", encoding="utf-8")
    queue.request(root, embeddings=False)
    req = queue.take(timeout=0)
    assert req is not None
    cut = worker.run_one(req)
    assert cut is not None and not cut.complete and seen == [("p", 1)]  # not after a cut run


def test_tenths_says_each_tenth_crossed_once_per_run() -> None:
    from ctxgraph.memory.index import IndexProgress
    from ctxgraph.memory.worker import Tenths

    lines: list[str] = []
    tenths = Tenths(lines.append)

    def at(done: int, total: int = 40, phase: str = "indexing") -> None:
        tenths(IndexProgress("p", phase, files_done=done, files_total=total, files_found=total + 10,
                             files_unchanged=10))

    at(0, phase="scanning")
    for done in (1, 3, 4, 9, 30, 40, 40):
        at(done)
    assert [line.split(" % ")[0].rsplit(" ", 1)[1] for line in lines] == ["20", "30", "80", "100"]
    assert lines[0].startswith("project p: memory index 20 % (11/50 files")
    at(0, phase="scanning")  # a new run starts again
    at(40)
    at(3, total=5)  # a small run says nothing
    assert len(lines) == 5
