"""The store port, on both stores: the same calls must give the same answers."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import FileEntry, GatherQuery, KnowledgeItem, Severity, Task, TaskStatus
from ctxgraph.errors import UnknownTaskError
from ctxgraph.graph.records import FileLink, HandoffRecord
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.signals import TaskSignals
from tests._reads import dependency_edges, gathered, history_of, stored_files


def sig(*keywords: str, domains: tuple[str, ...] = ()) -> TaskSignals:
    return TaskSignals(keywords=keywords, domains=domains, files_mentioned=(), task_types=("feature",))


def task(tid: str, *deps: str, keywords: tuple[str, ...] = (), **kw: object) -> Task:
    return Task(id=tid, name=f"Task {tid}", objective=f"do {tid}", depends_on=deps,
                signals=sig(*keywords), created_at="2026-01-01T00:00:00Z",
                updated_at="2026-01-01T00:00:00Z", **kw)  # type: ignore[arg-type]


def item(kind: str, summary: str, tags: tuple[str, ...], at: str = "2026-02-01T00:00:00Z",
         **kw: object) -> KnowledgeItem:
    return KnowledgeItem(id=f"{kind}:{summary}", kind=kind, summary=summary, tags=tags,  # type: ignore[arg-type]
                         created_at=at, updated_at=at, **kw)  # type: ignore[arg-type]


def record(task_id: str, *knowledge: KnowledgeItem, success: bool = True,
           at: str = "2026-02-01T00:00:00Z", content: str = "v1",
           links: tuple[FileLink, ...] = ()) -> HandoffRecord:
    files = tuple(FileEntry(path=link.path, component="c", notes=link.note) for link in links)
    return HandoffRecord(
        id=f"handoff:{task_id}", task_id=task_id, summary=f"{task_id} done", success=success,
        completed_at=at, raw="{}", content_hash=f"{task_id}-{content}", knowledge=knowledge,
        files=files, links=links,
    )


def test_task_round_trip(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("t1", keywords=("jwt", "login")),
                        task("t2", "t1", acceptance_criteria=("a", "b"))])
    got = store.get_task("t2")
    assert got is not None
    assert got.depends_on == ("t1",)
    assert got.acceptance_criteria == ("a", "b")
    t1 = store.get_task("t1")
    assert t1 is not None and t1.signals is not None
    assert t1.signals.keywords == ("jwt", "login")
    assert store.get_task("nope") is None
    assert [t.id for t in store.list_tasks()] == ["t1", "t2"]
    assert [t.id for t in store.get_tasks(["t2", "zz", "t1"])] == ["t1", "t2"]


def test_upsert_refuses_unknown_dependency_and_writes_nothing(store: KnowledgeStore) -> None:
    with pytest.raises(UnknownTaskError):
        store.upsert_tasks([task("t1"), task("t2", "ghost")])
    assert store.list_tasks() == []


def test_status_and_blockers(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("a"), task("b"), task("c")])
    store.set_status("b", TaskStatus.BLOCKED, reason="waiting on keys", at="2026-03-02T00:00:00Z")
    store.set_status("a", TaskStatus.BLOCKED, reason="no access", at="2026-03-01T00:00:00Z")
    blockers = gathered(store).active_blockers
    assert [(b.id, b.reason, b.since) for b in blockers] == [
        ("a", "no access", "2026-03-01T00:00:00Z"),
        ("b", "waiting on keys", "2026-03-02T00:00:00Z"),
    ]
    store.set_status("a", TaskStatus.PENDING, reason=None, at="2026-03-03T00:00:00Z")
    assert [b.id for b in gathered(store).active_blockers] == ["b"]
    a = store.get_task("a")
    assert a is not None and a.blocked_reason is None and a.status is TaskStatus.PENDING
    assert [t.id for t in store.list_tasks(TaskStatus.BLOCKED)] == ["b"]
    with pytest.raises(UnknownTaskError):
        store.set_status("zz", TaskStatus.BLOCKED, reason="x", at="2026-03-03T00:00:00Z")


def test_apply_handoff_completes_task_and_links_everything(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("t1")])
    links = (FileLink(rel="CREATED", path="src/auth/jwt.ts", note="verify helper"),
             FileLink(rel="READ_NEXT", path="src/auth/jwt.ts", note="reuse verify()"),
             FileLink(rel="MODIFIED", path="src/app.ts", note="mount", lines="10-24"))
    rec = record("t1", item("pattern", "Wrap handlers", ("auth", "api"), location="src/auth/mw.ts"),
                 item("gotcha", "Clock skew", ("jwt",), severity=Severity.HIGH), links=links)
    assert store.apply_handoffs([rec])[0] is True
    t1 = store.get_task("t1")
    assert t1 is not None
    assert (t1.status, t1.success, t1.outcome_summary, t1.completed_at) == (
        TaskStatus.COMPLETED, True, "t1 done", "2026-02-01T00:00:00Z")
    stats = store.stats()
    labels, rels = dict(stats.labels), dict(stats.relationships)
    # full-text terms: the task (task, t1, do), src/auth/jwt.ts (src, auth, jwt, verify, helper) and
    # src/app.ts (src, app, mount): 10 distinct terms, no relationship to them
    assert labels.pop("Term") == 10
    assert labels == {"File": 2, "Gotcha": 1, "Handoff": 1, "Pattern": 1, "Tag": 3, "Task": 1}
    assert rels == {"CREATED": 1, "DISCOVERED": 2, "HANDED_OFF": 1, "MODIFIED": 1, "READ_NEXT": 1, "TAGGED": 3}
    deps = gathered(store, dep_ids=("t1",)).dependencies
    assert len(deps) == 1
    dep = deps[0]
    assert dep.summary == "t1 done"
    assert [(f.file, f.reason) for f in dep.files_to_read] == [("src/auth/jwt.ts", "reuse verify()")]
    assert [(f.file, f.reason) for f in dep.files_created] == [("src/auth/jwt.ts", "verify helper")]
    assert [(k.kind, k.summary) for k in dep.knowledge] == [("gotcha", "Clock skew"),
                                                            ("pattern", "Wrap handlers")]
    assert dep.knowledge[0].severity is Severity.HIGH


def test_apply_handoff_is_idempotent(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("t1")])
    rec = record("t1", item("pattern", "P", ("x",)),
                 links=(FileLink(rel="CREATED", path="a.py", note="n"),))
    assert store.apply_handoffs([rec])[0] is True
    before = (store.stats(), store.get_task("t1"))
    assert store.apply_handoffs([rec])[0] is False
    assert (store.stats(), store.get_task("t1")) == before


def test_new_handoff_version_replaces_links(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("t1")])
    store.apply_handoffs([record("t1", item("pattern", "Old", ("x",)),
                                 links=(FileLink(rel="CREATED", path="old.py"),))])
    store.apply_handoffs([record("t1", item("pattern", "New", ("x",)), content="v2", success=False,
                                 links=(FileLink(rel="CREATED", path="new.py"),))])
    dep = gathered(store, dep_ids=("t1",)).dependencies[0]
    assert [k.summary for k in dep.knowledge] == ["New"]
    assert [f.file for f in dep.files_created] == ["new.py"]
    t1 = store.get_task("t1")
    assert t1 is not None and t1.status is TaskStatus.FAILED and t1.success is False


def test_handoff_for_unknown_task_is_refused_whole(store: KnowledgeStore) -> None:
    with pytest.raises(UnknownTaskError):
        store.apply_handoffs([record("ghost", item("pattern", "P", ("x",)))])
    assert store.stats().labels == {}


def test_shared_knowledge_merges_tags(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("t1"), task("t2")])
    store.apply_handoffs([record("t1", item("pattern", "Same", ("a", "b")))])
    store.apply_handoffs([record("t2", item("pattern", "Same", ("b", "c")))])
    hits = store.knowledge_by_tags(["c"], 10)
    assert len(hits) == 1
    assert hits[0].item.tags == ("a", "b", "c")
    assert store.stats().labels["Pattern"] == 1


def test_knowledge_by_tags_orders_by_matches_then_recency_then_id(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("t1")])
    store.apply_handoffs([record(
        "t1",
        item("pattern", "two tags", ("jwt", "auth")),
        item("gotcha", "old one tag", ("jwt",), at="2026-01-01T00:00:00Z", severity=Severity.LOW),
        item("decision", "new one tag", ("auth",), at="2026-03-01T00:00:00Z"),
        item("pattern", "b same", ("jwt",), at="2026-02-01T00:00:00Z"),
        item("pattern", "a same", ("jwt",), at="2026-02-01T00:00:00Z"),
        item("pattern", "unrelated", ("ui",)),
    )])
    hits = store.knowledge_by_tags(["jwt", "auth"], 10)
    assert [h.item.summary for h in hits] == ["two tags", "new one tag", "a same", "b same", "old one tag"]
    assert hits[0].matched_tags == ("auth", "jwt")
    assert [h.item.summary for h in store.knowledge_by_tags(["jwt", "auth"], 2)] == ["two tags", "new one tag"]
    # the limit cuts inside the tie of the three one-"jwt" items: newer first, then smaller id
    assert [h.item.summary for h in store.knowledge_by_tags(["jwt", "auth"], 3)] == [
        "two tags", "new one tag", "a same"]
    assert store.knowledge_by_tags([], 10) == []
    assert store.knowledge_by_tags(["nothing"], 10) == []


def test_rare_tags_outrank_common_ones_and_tags_above_the_cap_are_not_read(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("t1")])
    common = [item("pattern", f"common {n}", ("api", "cache", "db")) for n in range(6)]
    store.apply_handoffs([record("t1", *common, item("gotcha", "planted", ("w1", "w2"), severity=Severity.LOW),
                                 item("decision", "one rare", ("w1",)))])
    hits = store.knowledge_by_tags(["api", "cache", "db", "w1", "w2"], 3)
    assert [h.item.summary for h in hits] == ["planted", "common 0", "common 1"]  # 2 rare > 3 common > 1 rare
    assert hits[0].matched_tags == ("w1", "w2")
    # api, cache and db are on 6 items: above a cap of 5 they are not read
    assert [h.item.summary for h in store.knowledge_by_tags(["api", "db", "w1"], 10, max_df=5)] == [
        "one rare", "planted"]
    assert store.knowledge_by_tags(["api"], 10, max_df=5) == []


def test_gather_returns_the_query_tags_degrees(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("t1", keywords=("api",)), task("t2", keywords=("api", "w1"))])
    store.apply_handoffs([record("t1", item("pattern", "p", ("api", "w1")))])
    store.apply_handoffs([record("t2")])
    query = GatherQuery(keywords=("api", "w1", "nothing"), domains=(), files=(), dep_ids=(), exclude=(),
                        keyword_limit=5, domain_limit=5, related_limit=5, recent_limit=5, working_memory=False,
                        max_tag_df=2)
    found = store.gather(query)
    assert found.tag_df == (("api", 3), ("w1", 2)) and found.tagged_total == 3
    assert [h.item.summary for h in found.keyword_hits] == ["p"] and found.keyword_hits[0].matched_tags == ("w1",)
    assert [h.task.id for h in found.related] == ["t2"]
    with_history, history = store.gather_with_history(query, ["api"])
    assert with_history == store.gather(query.model_copy(update={"context_map": not history.files}))
    assert history == history_of(store, ["api"])


def test_tasks_by_tags_only_completed_and_not_excluded(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("a", keywords=("jwt",)), task("b", keywords=("jwt", "login")),
                        task("c", keywords=("jwt",)), task("d", keywords=("login",))])
    for tid, at in (("a", "2026-01-02T00:00:00Z"), ("b", "2026-01-01T00:00:00Z"), ("d", "2026-01-03T00:00:00Z")):
        store.apply_handoffs([record(tid, at=at)])
    hits = gathered(store, keywords=("jwt", "login")).related
    assert [h.task.id for h in hits] == ["b", "d", "a"]  # c is pending
    assert hits[0].matched_tags == ("jwt", "login")
    assert [h.task.id for h in gathered(store, keywords=("jwt", "login"), exclude=("b",)).related] == ["d", "a"]


def test_tasks_by_tags_break_ties_by_later_completion_then_id(store: KnowledgeStore) -> None:
    """Equal sums of weights (three tags of degree two): the later completed
    first, then the smaller id; the limit cuts inside a tie."""
    days = {"t1": "03", "t2": "01", "t3": "03", "t4": "02", "t5": "03", "t6": "01"}
    tags = {"t1": ("x",), "t2": ("y",), "t3": ("x",), "t4": ("z",), "t5": ("y",), "t6": ("z",)}
    store.upsert_tasks([task(tid, keywords=tags[tid]) for tid in days])
    for tid, day in days.items():
        store.apply_handoffs([record(tid, at=f"2026-01-{day}T00:00:00Z")])
    def related(*tags: str, limit: int = 10, exclude: tuple[str, ...] = ()) -> list[str]:
        return [h.task.id for h in gathered(store, keywords=tags, related_limit=limit, exclude=exclude).related]

    assert related("x", "y", "z") == ["t1", "t3", "t5", "t4", "t2", "t6"]
    assert related("z", "y", "x", limit=2) == ["t1", "t3"]
    assert related("y", "x", limit=2, exclude=("t1", "t9")) == ["t3", "t5"]
    assert related("nothing") == [] and related("x", limit=0) == []


def test_dependency_handoffs_include_incomplete_dependencies(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("dep1"), task("dep2"), task("t", "dep1", "dep2")])
    store.apply_handoffs([record("dep1")])
    deps = gathered(store, dep_ids=("dep2", "dep1", "missing")).dependencies
    assert [(d.task.id, d.task.status, d.summary) for d in deps] == [
        ("dep1", TaskStatus.COMPLETED, "dep1 done"), ("dep2", TaskStatus.PENDING, None)]
    assert dependency_edges(store) == [("t", "dep1"), ("t", "dep2")]


def test_context_map_candidates(store: KnowledgeStore) -> None:
    store.upsert_files([
        FileEntry(path="src/auth/jwt.ts", component="auth", notes="JWT helpers"),
        FileEntry(path="src/db/pool.ts", component="database", notes="Postgres pool"),
        FileEntry(path="web/Button.tsx", component="ui", notes="API button for the auth flow"),
        FileEntry(path="README.md", component="README", notes="docs"),
    ])
    def candidates(keywords: tuple[str, ...] = (), domains: tuple[str, ...] = (),
                   files: tuple[str, ...] = ()) -> list[str]:
        return [f.path for f in gathered(store, keywords=keywords, domains=domains, files=files).context_map]

    assert candidates(keywords=("jwt",)) == ["src/auth/jwt.ts"]
    assert candidates(keywords=("auth",)) == ["src/auth/jwt.ts"]
    assert candidates(domains=("auth",)) == ["web/Button.tsx"]
    assert candidates(files=("db/pool.ts",)) == ["src/db/pool.ts"]
    assert candidates(("pool",), ("api",), ("README.md",)) == [
        "README.md", "src/db/pool.ts", "web/Button.tsx"]
    # mentioned files match case-sensitively, keywords case-insensitively
    assert candidates(files=("readme.md",)) == []
    assert candidates(keywords=("readme",)) == ["README.md"]
    assert len(stored_files(store)) == 4


def test_handoff_files_fill_notes_but_never_overwrite(store: KnowledgeStore) -> None:
    store.upsert_files([FileEntry(path="a.py", component="core", notes="the core"),
                        FileEntry(path="b.py", component="core", notes="")])
    store.upsert_tasks([task("t1")])
    store.apply_handoffs([record("t1", links=(FileLink(rel="MODIFIED", path="a.py", note="tweak"),
                                              FileLink(rel="MODIFIED", path="b.py", note="filled"),
                                              FileLink(rel="CREATED", path="c.py", note="new")))])
    files = stored_files(store)
    assert files["a.py"]["notes"] == "the core"
    assert files["b.py"]["notes"] == "filled"
    assert files["c.py"]["notes"] == "new"


def test_recent_tasks_newest_first_limited(store: KnowledgeStore) -> None:
    store.upsert_tasks([task(f"t{i}") for i in range(7)])
    for i in range(7):
        store.apply_handoffs([record(f"t{i}", at=f"2026-01-0{i + 1}T00:00:00Z", success=i != 5)])
    recent = gathered(store, recent_limit=5).recent_tasks
    assert [(r.id, r.success) for r in recent] == [
        ("t6", True), ("t5", False), ("t4", True), ("t3", True), ("t2", True)]
    assert recent[0].intent == "Task t6"
    assert recent[0].completed_at == "2026-01-07T00:00:00Z"
    # finished without a completion time (a status set by hand): after the dated ones, id descending
    store.upsert_tasks([task("u1"), task("u2")])
    store.set_status("u1", TaskStatus.FAILED, reason=None, at="2026-02-01T00:00:00Z")
    store.set_status("u2", TaskStatus.COMPLETED, reason=None, at="2026-02-01T00:00:00Z")
    newest = ["t6", "t5", "t4", "t3", "t2", "t1", "t0", "u2", "u1"]
    for n in (5, 8, 9, 12):
        assert [r.id for r in gathered(store, recent_limit=n).recent_tasks] == newest[:n]


def test_injection_text_round_trips_as_data(store: KnowledgeStore) -> None:
    nasty = "x'}) MATCH (n) DETACH DELETE n //\"; DROP TABLE nodes; --"
    store.upsert_tasks([task(nasty, keywords=(nasty,))])
    store.apply_handoffs([record(nasty, item("pattern", nasty, (nasty,), location=nasty))])
    got = store.get_task(nasty)
    assert got is not None and got.id == nasty
    hits = store.knowledge_by_tags([nasty], 5)
    assert [h.item.summary for h in hits] == [nasty]
    assert store.stats().labels["Task"] == 1


def test_clear_empties_a_graph_larger_than_one_batch(store: KnowledgeStore,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Neo4j clears in transactions of _CLEAR_BATCH nodes; a batch of 2 makes
    # this small graph take several.
    from ctxgraph.graph.neo4j_store import writes
    monkeypatch.setattr(writes, "_CLEAR_BATCH", 2)
    store.upsert_tasks([task("t1"), task("t2", "t1"), task("t3", "t2")])
    store.apply_handoffs([record("t1", item("gotcha", "g", ("a", "b")))])
    assert store.stats().labels
    store.clear()
    assert store.stats().labels == {} and store.stats().relationships == {}
    store.clear()  # clearing an empty store is a no-op
    assert store.stats().labels == {}


def test_history_evidence_returns_only_files_with_evidence(store: KnowledgeStore) -> None:
    store.upsert_files([FileEntry(path=p, component=c) for p, c in (
        ("pkg/data/__init__.py", "data"), ("pkg/data/headers.py", "data.headers"),
        ("pkg/http.py", "http"), ("pkg/cli.py", "cli"), ("pkg/database.py", "database"))])
    texts = {"t1": "Parse cookie values", "t2": "Tidy request code", "t3": "Tidy response code"}
    store.upsert_tasks([
        Task(id=tid, name=text, objective="", signals=sig(), created_at="2026-01-01T00:00:00Z",
             updated_at="2026-01-01T00:00:00Z") for tid, text in texts.items()])
    store.apply_handoffs([record("t1", links=(FileLink(rel="MODIFIED", path="pkg/data.py"),))])  # gone from the map
    store.apply_handoffs([record("t2", links=(FileLink(rel="MODIFIED", path="pkg/http.py"),))])
    store.apply_handoffs([record("t3", links=(FileLink(rel="MODIFIED", path="pkg/http.py"),))])

    everything = history_of(store, ["cookie", "cli"], top_files=100)
    assert everything.mapped is True
    assert len(everything.files) == 5  # the map's files only: not pkg/data.py

    found = history_of(store, ["cookie", "cli"], top_files=1)
    assert [t.id for t in found.tasks] == ["t1"]
    assert sorted(f.entry.path for f in found.files) == [
        "pkg/cli.py",  # a query term of its own
        "pkg/data/__init__.py", "pkg/data/headers.py",  # the folder the touched pkg/data.py became
        "pkg/http.py",  # the most touched (2 finished tasks)
    ]  # not pkg/database.py: no evidence, though its path starts with "pkg/data"
    http = next(f for f in found.files if f.entry.path == "pkg/http.py")
    assert (http.touches, http.text) == (2, 0.0)
    assert next(f for f in found.files if f.entry.path == "pkg/cli.py").text > 0


#: Terms of the tasks below, one each: a file's document has the term when a
#: finished task having it touched the file.
PROBES = ("cookie", "tidy", "quoted")


def _file_counts(store: KnowledgeStore) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Every mapped file's touches and the probe terms its document has."""
    counts = {f.entry.path: f.touches for f in history_of(store, [], top_files=100).files}
    has = {path: tuple(term for term in PROBES
                       if any(f.entry.path == path and f.text > 0
                              for f in history_of(store, [term], top_files=0).files))
           for path in counts}
    return {path: (counts[path], has[path]) for path in counts}


def test_file_history_counts_follow_every_write(store: KnowledgeStore) -> None:
    def made(tid: str, text: str, status: TaskStatus = TaskStatus.PENDING) -> Task:
        return Task(id=tid, name=text, objective="", signals=sig(), created_at="2026-01-01T00:00:00Z",
                    updated_at="2026-01-01T00:00:00Z", status=status)

    t1, t2 = made("t1", "Parse cookie values"), made("t2", "Tidy the request parsing code")
    store.upsert_files([FileEntry(path=p) for p in ("a.py", "b.py", "c.py")])
    store.upsert_tasks([t1, t2])
    modified = lambda *paths: tuple(FileLink(rel="MODIFIED", path=p) for p in paths)  # noqa: E731
    store.apply_handoffs([record("t1", links=modified("a.py", "b.py"))])
    store.apply_handoffs([record("t2", links=modified("a.py"))])
    assert _file_counts(store) == {"a.py": (2, ("cookie", "tidy")), "b.py": (1, ("cookie",)), "c.py": (0, ())}

    # a new version of t1's handoff moves its files
    store.apply_handoffs([record("t1", content="v2", links=modified("c.py"))])
    assert _file_counts(store) == {"a.py": (1, ("tidy",)), "b.py": (0, ()), "c.py": (1, ("cookie",))}
    # t2 no longer finished; the context map reloaded; t1's text longer
    store.set_status("t2", TaskStatus.PENDING, reason=None, at="2026-03-01T00:00:00Z")
    assert _file_counts(store) == {"a.py": (0, ()), "b.py": (0, ()), "c.py": (1, ("cookie",))}
    store.upsert_files([FileEntry(path=p, notes="reloaded") for p in ("a.py", "b.py", "c.py")])
    longer = made("t1", "Parse cookie values and quoted header parameters", TaskStatus.COMPLETED)
    store.upsert_tasks([longer])
    expected = {"a.py": (0, ()), "b.py": (0, ()), "c.py": (1, ("cookie", "quoted"))}
    assert _file_counts(store) == expected
    # t2 finished again, through its handoff
    store.apply_handoffs([record("t2", content="v3", links=modified("a.py", "c.py"))])
    expected = {"a.py": (1, ("tidy",)), "b.py": (0, ()), "c.py": (2, ("cookie", "tidy", "quoted"))}
    assert _file_counts(store) == expected

    # an export carries no counts of its own; the import recounts
    rows = list(store.export_rows())
    assert not any("touches" in row.get("props", {}) for row in rows)
    store.clear()
    store.import_rows(rows)
    assert _file_counts(store) == expected


def test_history_evidence_is_bounded_alike(store: KnowledgeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for one task and two files by text, both stores keep the same ones."""
    from ctxgraph.core import evidence

    monkeypatch.setattr(evidence, "TASK_TOP", 1)
    monkeypatch.setattr(evidence, "FILE_TOP", 2)
    paths = ["src/one.py", "src/two.py", "src/three.py", "src/four.py", "src/five.py"]
    store.upsert_files([FileEntry(path=p) for p in paths])
    texts = {"t1": "cookie header", "t2": "cookie", "t3": "parser", "t4": "cookie parser", "t5": "widget"}
    store.upsert_tasks([
        Task(id=tid, name=text, objective="", signals=sig(), created_at="2026-01-01T00:00:00Z",
             updated_at="2026-01-01T00:00:00Z") for tid, text in texts.items()])
    for (tid, _), path in zip(texts.items(), paths, strict=True):
        store.apply_handoffs([record(tid, links=(FileLink(rel="MODIFIED", path=path),))])

    found = history_of(store, ["cookie", "header", "parser"], top_files=0)
    assert [t.id for t in found.tasks] == ["t1"]  # the rarest terms
    text = {f.entry.path: f.text for f in found.files}
    # t1's file and the best text, the second best text; nothing else
    assert set(text) == {"src/one.py", "src/four.py"} and text["src/one.py"] > text["src/four.py"] > 0
    assert found.n_tasks == 5


def test_history_scores_are_bm25_over_the_documents(store: KnowledgeStore) -> None:
    """Both stores score a task by Lucene's BM25 over its distinct terms, a file
    over its own terms plus those of the finished tasks that touched it."""
    from ctxgraph.core import bm25
    from ctxgraph.graph.local import LocalStore
    from ctxgraph.graph.records import file_terms, task_terms

    tasks = [Task(id=tid, name=text, objective="", signals=sig(), created_at="2026-01-01T00:00:00Z",
                  updated_at="2026-01-01T00:00:00Z") for tid, text in (
        ("t1", "Parse cookie header values"), ("t2", "Cookie jar for the client"),
        ("t3", "Header parser rewrite with cookie support"), ("t4", "Widget"))]
    store.upsert_files([FileEntry(path=p) for p in ("src/one.py", "src/two.py", "src/cookie.py")])
    store.upsert_tasks(tasks)
    for t, path in zip(tasks, ("src/one.py", "src/one.py", "src/two.py", "src/two.py"), strict=True):
        store.apply_handoffs([record(t.id, links=(FileLink(rel="MODIFIED", path=path),))])
    query = ["cookie", "header", "parser"]
    found = history_of(store, query, top_files=0)
    index = bm25.Index.build([dict.fromkeys(task_terms(t), 1) for t in tasks])
    assert [(t.id, t.score) for t in found.tasks] == [(tasks[row].id, s) for row, s in index.top(query, 40)]
    assert found.tasks[0].matched == ("cookie", "header", "parser")
    docs = {"src/one.py": [*task_terms(tasks[0]), *task_terms(tasks[1])],
            "src/two.py": [*task_terms(tasks[2]), *task_terms(tasks[3])], "src/cookie.py": []}
    paths = sorted(docs)
    files = bm25.Index.of_words([*file_terms(p, "", ""), *docs[p]] for p in paths)
    expected = {paths[row]: s for row, s in files.top(query, 100)}
    if isinstance(store, LocalStore):
        assert {f.entry.path: f.text for f in found.files} == expected
    else:  # Lucene counts the documents' rewritten versions until its segments merge: the same files
        text = {f.entry.path: f.text for f in found.files if f.text > 0}
        assert text.keys() == expected.keys()


def _unit(*weights: float) -> list[float]:
    """A 384-dimensional vector with ``weights`` in its first places."""
    vec = [0.0] * 384
    for i, w in enumerate(weights):
        vec[i] = w
    return vec


def _finished(store: KnowledgeStore, texts: dict[str, str], paths: dict[str, str]) -> None:
    store.upsert_tasks([Task(id=tid, name=text, objective="", signals=sig(), created_at="2026-01-01T00:00:00Z",
                             updated_at="2026-01-01T00:00:00Z") for tid, text in texts.items()])
    for n, (tid, path) in enumerate(paths.items(), start=1):
        store.apply_handoffs([record(tid, at=f"2026-02-0{n}T00:00:00Z", links=(FileLink(rel="MODIFIED", path=path),))])


def test_task_vectors_follow_the_task_text(store: KnowledgeStore) -> None:
    from ctxgraph.graph.records import text_hash

    _finished(store, {"t1": "cookie header", "t2": "parser"}, {"t1": "src/one.py", "t2": "src/two.py"})
    store.upsert_tasks([Task(id="t3", name="not finished", objective="", signals=sig())])
    assert not store.has_task_vectors()
    assert store.tasks_to_embed(10) == [("t1", "cookie header"), ("t2", "parser")]  # finished tasks only
    assert store.tasks_to_embed(1) == [("t1", "cookie header")]
    store.write_task_vectors([("t1", text_hash("cookie header"), _unit(1.0)), ("ghost", "x", _unit(1.0))])
    assert store.task_vector_count() == 1  # the unknown task is skipped
    assert store.has_task_vectors()
    assert store.tasks_to_embed(10) == [("t2", "parser")]
    # Written again with the same text, the vector stays; with another text it is stale.
    store.upsert_tasks([Task(id="t1", name="cookie header", objective="", status=TaskStatus.COMPLETED,
                             signals=sig(), completed_at="2026-02-01T00:00:00Z")])
    assert store.tasks_to_embed(10) == [("t2", "parser")]
    store.upsert_tasks([Task(id="t1", name="cookie jar", objective="", status=TaskStatus.COMPLETED,
                             signals=sig(), completed_at="2026-02-01T00:00:00Z")])
    assert store.tasks_to_embed(10) == [("t1", "cookie jar"), ("t2", "parser")]
    # Vectors are derived: an export leaves them out; importing over the graph keeps
    # them, importing into an empty one has none.
    rows = list(store.export_rows())
    assert not any("embedding" in row.get("props", {}) for row in rows)
    store.import_rows(rows)
    assert store.task_vector_count() == 1
    assert store.tasks_to_embed(10) == [("t1", "cookie jar"), ("t2", "parser")]
    store.clear()
    store.import_rows(rows)
    assert store.task_vector_count() == 0


def test_neighbours_by_embedding_are_found_alike(store: KnowledgeStore) -> None:
    from ctxgraph.core import evidence
    from ctxgraph.graph.records import text_hash

    texts = {"t1": "cookie header", "t2": "parser", "t3": "widget", "t4": "cookie widget"}
    paths = {"t1": "src/one.py", "t2": "src/two.py", "t3": "src/three.py", "t4": "src/four.py"}
    store.upsert_files([FileEntry(path=p) for p in paths.values()])
    _finished(store, texts, paths)
    store.write_task_vectors([
        ("t1", text_hash(texts["t1"]), _unit(1.0, 0.0)),
        ("t2", text_hash(texts["t2"]), _unit(0.6, 0.8)),
        ("t3", text_hash(texts["t3"]), _unit(0.0, 1.0)),
        ("t4", text_hash(texts["t4"]), _unit(0.6, 0.8)),  # t2's cosine: the newer goes first
    ])
    query = _unit(2.0, 0.0)  # not a unit vector: the cosine does not care
    found = history_of(store, ["cookie", "header"], top_files=0, vector=query)
    assert [(n.id, n.score, n.matched, n.files) for n in found.neighbours] == [
        ("t1", 1.0, ("cookie", "header"), ("src/one.py",)),
        ("t4", 0.6, ("cookie",), ("src/four.py",)),
        ("t2", 0.6, (), ("src/two.py",)),
        ("t3", 0.0, (), ("src/three.py",)),
    ]
    # The neighbours' files are returned even when no query term reaches them.
    assert {"src/two.py", "src/three.py"} <= {f.entry.path for f in found.files}
    assert history_of(store, ["cookie"], top_files=0).neighbours == ()
    assert len(found.neighbours) <= evidence.DENSE_VOTERS


def test_the_mentions_of_an_older_graph_are_deleted_when_the_schema_is_applied(store: KnowledgeStore) -> None:
    """A graph written before ctxgraph stopped linking tasks and files to their
    terms (MENTIONS, read by nothing) loses those relationships when opened."""
    store.upsert_tasks([Task(id="t1", name="Login form", objective="Build the login form")])
    if hasattr(store, "_session"):
        with store._session() as session:  # type: ignore[attr-defined]
            session.run("MATCH (t:Task {id: 't1'}), (term:Term {name: 'login'}) "
                        "CREATE (t)-[:MENTIONS]->(term)").consume()
    else:
        with store.db.write() as cur:  # type: ignore[attr-defined]
            cur.execute("INSERT INTO edges (src_label, src_id, type, dst_label, dst_id, props) "
                        "VALUES ('Task', 't1', 'MENTIONS', 'Term', 'login', '{}')")
    assert store.stats().relationships.get("MENTIONS") == 1
    store.init_schema()
    assert "MENTIONS" not in store.stats().relationships
    assert store.stats().labels["Term"] >= 1
