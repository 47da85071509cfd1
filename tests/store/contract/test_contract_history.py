"""The contract of the ``HistoryStore`` role (``ctxgraph.graph.store``), run
on every store: finished tasks imported with their handoffs once, their
statuses and signals set in bulk, the import's own record, and the corpus
``ctxgraph tune`` replays."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import FileEntry, Task, TaskStatus
from ctxgraph.graph.records import FileLink, HandoffRecord
from ctxgraph.graph.store import HistoryStore, KnowledgeStore
from ctxgraph.signals import TaskSignals

AT = "2026-01-01T00:00:00Z"


def signals(*keywords: str) -> TaskSignals:
    return TaskSignals(keywords=keywords, domains=(), files_mentioned=(), task_types=("bugfix",))


def commit(n: int, path: str, *keywords: str) -> tuple[Task, HandoffRecord]:
    tid, at = f"git:{n:03d}", f"2026-02-0{n}T00:00:00Z"
    task = Task(id=tid, name=f"fix the {path} parser", objective="", status=TaskStatus.COMPLETED, success=True,
                completed_at=at, signals=signals(*keywords) if keywords else None, created_at=at, updated_at=at)
    link = FileLink(rel="MODIFIED", path=path)
    record = HandoffRecord(id=f"handoff:{tid}", task_id=tid, summary=task.name, success=True, completed_at=at,
                           raw="{}", content_hash=f"hash-{n}", files=(FileEntry(path=path, component="c"),),
                           links=(link,))
    return task, record


@pytest.fixture
def history(store: KnowledgeStore) -> HistoryStore:
    """The store of each kind, seen as its history role."""
    return store


def test_an_import_writes_each_task_once(store: KnowledgeStore, history: HistoryStore) -> None:
    (t1, r1), (t2, r2) = commit(1, "src/a.py", "parser"), commit(2, "src/b.py")
    assert history.import_history([t1, t2], [r1, r2]) == [True, True]
    assert history.import_history([t1, t2], [r1, r2]) == [False, False]
    assert history.history_tasks("git:") == {"git:001": ("completed", "hash-1", True),
                                             "git:002": ("completed", "hash-2", False)}
    assert history.history_tasks("svn:") == {}
    assert [t.id for t in store.list_tasks(TaskStatus.COMPLETED)] == ["git:001", "git:002"]


def test_statuses_and_signals_in_bulk_unknown_ids_skipped(store: KnowledgeStore, history: HistoryStore) -> None:
    (t1, r1), (t2, r2) = commit(1, "src/a.py"), commit(2, "src/b.py")
    history.import_history([t1, t2], [r1, r2])
    history.set_statuses(["git:001", "git:zz"], TaskStatus.FAILED, "2026-03-01T00:00:00Z")
    assert history.history_tasks("git:")["git:001"][0] == "failed"
    history.write_task_signals([("git:002", signals("lexer")), ("git:zz", signals("x"))])
    assert history.history_tasks("git:")["git:002"][2] is True
    assert [h.task.id for h in store.tasks_by_tags(["lexer"], 10)] == ["git:002"]


def test_the_import_record_is_kept_replaced_and_cleared(store: KnowledgeStore, history: HistoryStore) -> None:
    assert history.history_source("git") is None
    before = store.stats()
    history.write_history_source({"id": "git", "head": "abc", "commits": 2})
    history.write_history_source({"id": "git", "head": "def", "commits": 3})
    found = history.history_source("git")
    assert found is not None and (found["head"], found["commits"]) == ("def", 3)
    assert store.stats() == before  # not part of the counts
    store.clear()
    assert history.history_source("git") is None


def test_the_replay_corpus_is_the_finished_tasks_and_every_file(store: KnowledgeStore,
                                                                 history: HistoryStore) -> None:
    (t1, r1), (t2, r2) = commit(1, "src/a.py", "parser"), commit(2, "src/b.py", "lexer")
    history.import_history([t1, t2], [r1, r2])
    store.upsert_tasks([Task(id="pending", name="not yet", objective="", created_at=AT, updated_at=AT)])
    tasks, files = history.replay_corpus()
    assert [(t.id, t.files, t.vector) for t in tasks] == [("git:001", ("src/a.py",), None),
                                                          ("git:002", ("src/b.py",), None)]
    assert "parser" in tasks[0].terms and tasks[0].signals.keywords == ("parser",)
    assert sorted(f.entry.path for f in files) == ["src/a.py", "src/b.py"]
