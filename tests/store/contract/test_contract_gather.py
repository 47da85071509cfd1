"""The contract of the ``GatherStore`` role (``ctxgraph.graph.store``), run on
every store: one read gives every part of a context's candidates that the
query asks for, and nothing it does not; the history's evidence comes beside
it, the context map's candidates only when the history has no files."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import Anchor, FileEntry, GatherQuery, KnowledgeItem, Severity, Task, TaskStatus
from ctxgraph.graph.records import FileLink, HandoffRecord
from ctxgraph.graph.store import GatherStore, KnowledgeStore
from ctxgraph.signals import TaskSignals

AT = "2026-01-01T00:00:00Z"
EVERYTHING = GatherQuery(keywords=("jwt", "skew"), domains=("auth",), files=("src/auth/jwt.py",), dep_ids=("t-dep",),
                         exclude=("t-now",), keyword_limit=10, domain_limit=10, related_limit=10, recent_limit=10,
                         working_memory=True, concurrent_of="t-now", concurrent_limit=5, anchors=True)


def task(tid: str, *deps: str, keywords: tuple[str, ...] = ("jwt",)) -> Task:
    signals = TaskSignals(keywords=keywords, domains=("auth",), files_mentioned=(), task_types=("feature",))
    return Task(id=tid, name=f"Task {tid}", objective=f"do {tid}", depends_on=deps, signals=signals,
                created_at=AT, updated_at=AT)


@pytest.fixture
def gather(store: KnowledgeStore) -> GatherStore:
    """The store of each kind with a finished dependency, its handoff's knowledge
    and files, a blocked task, two in progress and an anchor; seen as its gather role."""
    store.upsert_files([FileEntry(path="src/auth/jwt.py", component="auth", notes="JWT helpers"),
                        FileEntry(path="src/ui/button.py", component="ui", notes="a button")])
    store.upsert_tasks([task("t-dep"), task("t-now", "t-dep"), task("t-other"), task("t-blocked")])
    skew = KnowledgeItem(id="gotcha:skew", kind="gotcha", summary="Clock skew", tags=("jwt", "skew"),
                         severity=Severity.HIGH, created_at=AT, updated_at=AT)
    wrap = KnowledgeItem(id="pattern:wrap", kind="pattern", summary="Wrap handlers", tags=("auth",),
                         location="src/auth/mw.py", created_at=AT, updated_at=AT)
    store.apply_handoffs([HandoffRecord(
        id="handoff:t-dep", task_id="t-dep", summary="JWT verified", success=True, completed_at="2026-02-01T00:00:00Z",
        raw="{}", content_hash="h", knowledge=(skew, wrap), files=(FileEntry(path="src/auth/jwt.py", component="auth"),),
        links=(FileLink(rel="MODIFIED", path="src/auth/jwt.py", note="verify"),))])
    store.set_status("t-blocked", TaskStatus.BLOCKED, reason="no keys", at="2026-02-02T00:00:00Z")
    for tid in ("t-now", "t-other"):
        store.set_status(tid, TaskStatus.IN_PROGRESS, reason=None, at="2026-02-03T00:00:00Z")
    store.write_anchors([Anchor(id="anchor:1", owner="pattern:wrap", task_id="t-dep", path="src/auth/mw.py",
                                blob="b" * 40, size=1, mtime_ns=1, anchored_at=AT, current_path="src/auth/mw.py",
                                seen_size=1, seen_mtime_ns=1)])
    return store


def test_one_gather_gives_every_part_asked_for(gather: GatherStore) -> None:
    found = gather.gather(EVERYTHING)
    assert [(d.task.id, d.summary) for d in found.dependencies] == [("t-dep", "JWT verified")]
    assert [k.id for k in found.dependencies[0].knowledge] == ["gotcha:skew", "pattern:wrap"]
    assert [h.item.id for h in found.keyword_hits] == ["gotcha:skew"]
    assert [h.item.id for h in found.domain_hits] == ["pattern:wrap"]
    assert [f.path for f in found.context_map] == ["src/auth/jwt.py"] and found.context_map_total == 2
    assert [r.id for r in found.recent_tasks] == ["t-dep"]
    assert [(b.id, b.reason) for b in found.active_blockers] == [("t-blocked", "no keys")]
    assert [c.id for c in found.concurrent] == ["t-other"]
    assert [a.id for a in found.anchors] == ["anchor:1"]
    assert dict(found.tag_df)["jwt"] >= 2 and found.tagged_total >= 4


def test_a_part_not_asked_for_is_not_read(gather: GatherStore) -> None:
    found = gather.gather(EVERYTHING.model_copy(update={
        "dep_ids": (), "keyword_limit": 0, "context_map": False, "working_memory": False, "concurrent_of": None,
        "anchors": False}))
    assert (found.dependencies, found.keyword_hits, found.context_map, found.recent_tasks, found.active_blockers,
            found.concurrent, found.anchors) == ((), (), (), (), (), (), ())
    assert [h.item.id for h in found.domain_hits] == ["pattern:wrap"]


def test_the_history_beside_the_gather_and_the_map_only_without_history_files(gather: GatherStore) -> None:
    found, history = gather.gather_with_history(EVERYTHING, ["jwt", "verified"])
    touches = {f.entry.path: f.touches for f in history.files}
    assert touches["src/auth/jwt.py"] == 1 and history.files[0].entry.path == "src/auth/jwt.py"
    assert found == gather.gather(EVERYTHING.model_copy(update={"context_map": False}))


def test_a_graph_without_files_gives_no_history_files_and_the_full_gather(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("t-dep")])
    gather: GatherStore = store
    found, history = gather.gather_with_history(EVERYTHING, ["jwt"])
    assert history.files == ()
    assert found == gather.gather(EVERYTHING)  # the context map asked for (here: no file to find)
