"""The embedded store caches corpus-wide history facts; writes from this or
another process (another connection) must invalidate the cache."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ctxgraph.graph.local import LocalStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor
from tests._reads import gathered, history_of
from tests.store.test_store import record, task


@contextmanager
def two_connections(tmp_path: Path, extractor: SignalExtractor) -> Iterator[tuple[ContextService, ContextService]]:
    """Two services on one store file, each on its own connection (as two
    processes are): tasks t1 and t2, t1 finished, the history read by the first."""
    path = tmp_path / "g.db"
    first, second = LocalStore.open(path), LocalStore.open(path)
    try:
        a, b = ContextService(first, extractor), ContextService(second, extractor)
        a.add_tasks([{"id": "t1", "objective": "parse cookies"}, {"id": "t2", "objective": "parse headers"}])
        a.ingest_handoff({"task_id": "t1", "summary": "s", "files_modified": [{"path": "cookies.py"}]})
        assert history_of(first, ["parse"]).n_tasks == 1
        yield a, b
    finally:
        first.close()
        second.close()


def test_history_cache_sees_own_and_other_connections_writes(tmp_path: Path, extractor: SignalExtractor) -> None:
    with two_connections(tmp_path, extractor) as (a, b):
        first = a.store
        b.ingest_handoff({"task_id": "t2", "summary": "s", "files_modified": [{"path": "headers.py"}]})
        seen = history_of(first, ["parse"])
        assert seen.n_tasks == 2
        assert {f.entry.path: f.touches for f in seen.files} == {"cookies.py": 1, "headers.py": 1}
        a.add_files([])  # an own write that changes nothing still leaves the answers right
        assert history_of(first, ["headers"]).tasks[0].id == "t2"


def test_other_processes_contexts_and_chunks_leave_the_history_cache_as_it_is(
    tmp_path: Path, extractor: SignalExtractor,
) -> None:
    """The cache is keyed on the graph's generation, not on every change of the
    file: another connection's recorded contexts, chunks and index runs leave
    it as it is (at a million nodes each rebuild of the corpus took ~25 s),
    while its graph writes, and an own one, make a new one."""
    from ctxgraph.core.models import MemoryChunk, MemoryProject

    with two_connections(tmp_path, extractor) as (a, b):
        first, second = a.store, b.store
        assert isinstance(first, LocalStore) and isinstance(second, LocalStore)
        cached = first._corpus_cache
        b.compute("t2")
        assert b.flush_outcomes(10) and second.deliveries()  # recorded by the other connection
        chunk = MemoryChunk(path="cookies.py", start_line=1, end_line=2, text="def parse():\n    pass",
                            text_hash="h", token_estimate=3, file_sha256="s")
        second.write_memory(MemoryProject(id="p", root=str(tmp_path), indexed_at="2026-01-01T00:00:00Z",
                                          embeddings=False), [chunk], [])
        assert history_of(first, ["parse"]).n_tasks == 1 and first._corpus_cache is cached
        b.ingest_handoff({"task_id": "t2", "summary": "s", "files_modified": [{"path": "headers.py"}]})
        assert history_of(first, ["parse"]).n_tasks == 2 and first._corpus_cache is not cached
        cached = first._corpus_cache
        a.add_tasks([{"id": "t3", "objective": "parse forms"}])
        history_of(first, ["parse"])
        assert first._corpus_cache is not cached


def test_a_store_from_before_task_vectors_reads_without_them(tmp_path: Path, extractor: SignalExtractor) -> None:
    """A store written by an older ctxgraph has no task_vectors table; opened
    read-only (as `ctxgraph context` does) it answers without neighbours."""
    import sqlite3

    from ctxgraph.core.models import Task

    path = tmp_path / "old.db"
    svc = ContextService(LocalStore.open(path), extractor)
    svc.add_tasks([Task(id="t1", name="parse cookies", objective="")])
    svc.store.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE task_vectors")
    conn.commit()
    conn.close()
    old = LocalStore.open(path, read_only=True)
    try:
        assert not old.has_task_vectors() and old.task_vector_count() == 0
        assert old.tasks_to_embed(5) == []  # t1 is not finished
        assert history_of(old, ["cookies"], vector=[1.0] * 384).neighbours == ()
        ctx = ContextService(old, extractor).compute("t1")
        assert ctx.task_id == "t1"
    finally:
        old.close()


def test_related_tasks_follow_other_connections_writes_and_a_gather_is_one_snapshot(tmp_path: Path) -> None:
    """The related tasks come from the history's cached tags: another
    connection's finished task is found on the next call. A gather's parts read
    inside its one transaction, so a write between them is not half seen."""
    path = tmp_path / "g.db"
    first, second = LocalStore.open(path), LocalStore.open(path)
    try:
        first.upsert_tasks([task("t1", keywords=("jwt",))])
        first.apply_handoffs([record("t1")])
        assert [h.task.id for h in gathered(first, keywords=("jwt",)).related] == ["t1"]
        second.upsert_tasks([task("t2", keywords=("jwt", "cookie"))])
        second.apply_handoffs([record("t2", at="2026-02-01T00:00:00Z")])
        hits = gathered(first, keywords=("jwt", "cookie")).related
        assert [(h.task.id, h.matched_tags) for h in hits] == [("t2", ("cookie", "jwt")), ("t1", ("jwt",))]
        with first.db.read():
            before = first._count("Task")
            second.upsert_tasks([task("t3")])
            assert first._count("Task") == before  # the nested read is part of the open snapshot
        assert first._count("Task") == before + 1
    finally:
        first.close()
        second.close()
