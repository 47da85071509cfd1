"""ContextService end to end on both stores: the pipeline's rules through the real path."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgraph.compute.output import ComputedContext
from ctxgraph.core.models import Task, TaskStatus
from ctxgraph.demo import DEMO_TASK, load_project
from ctxgraph.errors import DependencyCycleError, InvalidDocumentError, UnknownTaskError
from ctxgraph.graph.dependencies import find_cycle
from ctxgraph.service import ContextService
from tests._reads import dependency_edges, history_of

HANDOFF = {
    "task_id": "t-auth",
    "summary": "Added JWT validation middleware",
    "success": True,
    "completed_at": "2026-03-01T10:00:00Z",
    "files_created": [{"path": "src/auth/jwt.ts", "purpose": "JWT verify helper"}],
    "files_modified": [{"path": "src/app.ts", "lines": "10-24", "purpose": "mount middleware"}],
    "dependencies_for_next": [{"file": "src/auth/jwt.ts", "reason": "reuse verify()"}],
    "patterns_discovered": [{"pattern": "Wrap handlers with requireAuth()",
                             "applies_to": ["auth", "api"], "location": "src/auth/middleware.ts"}],
    "gotchas": [
        {"issue": "Clock skew breaks exp checks", "severity": "high", "applies_to": ["jwt"]},
        {"issue": "Log lines are noisy", "severity": "low", "applies_to": ["jwt"]},
    ],
    "decisions": [{"decision": "HS256 for now", "rationale": "single service", "applies_to": ["jwt"]}],
    "open_questions": [
        {"question": "Rotate keys how?", "context": "one key today", "recommendation": "JWKS",
         "blocking": True},
        {"question": "Cache verify results?", "blocking": False},
    ],
}


def _setup(svc: ContextService) -> None:
    svc.add_tasks([
        {"id": "t-auth", "name": "Add JWT validation middleware", "objective": "Verify JWT tokens on api routes"},
        {"id": "t-pending", "name": "Session store", "objective": "Persist login sessions"},
        {"id": "t-refresh", "name": "Refresh tokens", "objective": "Rotate the JWT on login refresh",
         "depends_on": ["t-auth", "t-pending"]},
    ])
    svc.ingest_handoff(HANDOFF, source="h.yaml")


def test_context_has_dependency_knowledge_and_filters(svc: ContextService) -> None:
    _setup(svc)
    ctx = svc.compute("t-refresh")
    md = ctx.markdown
    assert [w.task_id for w in ctx.prior_work] == ["t-auth"]  # completed only
    assert ctx.computed.dependencies_skipped == ("t-pending",)
    assert "Wrap handlers with requireAuth()" in md
    assert "**high**: Clock skew breaks exp checks" in md
    assert "Log lines are noisy" not in md  # low severity from a dependency
    assert "Rotate keys how?" in md and "Cache verify results?" not in md
    assert "- `src/auth/jwt.ts`: reuse verify()" in md
    assert "HS256 for now — single service (from t-auth)" in md
    assert '1. t-auth: "Add JWT validation middleware"' in md  # working memory


def test_same_handoff_twice_changes_nothing(svc: ContextService) -> None:
    _setup(svc)
    before = svc.stats()
    again = svc.ingest_handoff(HANDOFF, source="h.yaml")
    assert again.written is False
    assert svc.stats() == before


def test_bad_document_is_refused_whole(svc: ContextService) -> None:
    _setup(svc)
    before = svc.stats()
    good = dict(HANDOFF, task_id="t-pending", summary="Sessions persisted")
    bad = dict(HANDOFF, gotchas=[{"issue": "x", "severity": "urgent"}])
    with pytest.raises(InvalidDocumentError, match=r"bad.yaml: .*gotchas\[0\].severity"):
        svc.ingest_handoffs([("good.yaml", good), ("bad.yaml", bad)])
    assert svc.stats() == before
    assert svc.get_task("t-pending").status is TaskStatus.PENDING


def test_handoff_for_unknown_task_is_refused(svc: ContextService) -> None:
    with pytest.raises(UnknownTaskError, match="ghost"):
        svc.ingest_handoff(dict(HANDOFF, task_id="ghost"), source="g.yaml")
    assert svc.stats()["labels"] == {}


def test_cycles_are_refused(svc: ContextService) -> None:
    svc.add_tasks([{"id": "a"}, {"id": "b", "depends_on": ["a"]}, {"id": "c", "depends_on": ["b"]}])
    with pytest.raises(DependencyCycleError, match="dependency cycle refused"):
        svc.add_dependency("a", "c")
    with pytest.raises(DependencyCycleError):
        svc.add_dependency("a", "a")
    with pytest.raises(DependencyCycleError):
        svc.add_tasks([{"id": "a", "depends_on": ["c"]}])
    assert dependency_edges(svc.store) == [("b", "a"), ("c", "b")]
    with pytest.raises(UnknownTaskError):
        svc.add_dependency("a", "nope")
    svc.add_dependency("c", "a")
    assert svc.get_task("c").depends_on == ("a", "b")


def test_cycle_check_reads_only_the_reach_of_the_new_edges(svc: ContextService) -> None:
    # two components: d -> c -> b -> a (plus d -> a) and y -> x
    svc.add_tasks([{"id": "a"}, {"id": "b", "depends_on": ["a"]}, {"id": "c", "depends_on": ["b"]},
                   {"id": "d", "depends_on": ["c", "a"]}, {"id": "x"}, {"id": "y", "depends_on": ["x"]}])
    assert svc.store.dependency_closure(["c"]) == [("b", "a"), ("c", "b")]
    assert svc.store.dependency_closure(["x", "b", "zz"]) == [("b", "a")]
    many = [f"missing-{i}" for i in range(40)]  # many starts: Neo4j searches level by level
    assert svc.store.dependency_closure([*many, "c", "y"]) == [("b", "a"), ("c", "b"), ("y", "x")]
    assert svc.store.dependency_closure(["d"]) == [("b", "a"), ("c", "b"), ("d", "a"), ("d", "c")]
    # the refused cycle is the one a search over every edge finds (the same message)
    for new_edges in ([("a", "d")], [("b", "d"), ("x", "y")], [("a", "y"), ("x", "d")]):
        expected = find_cycle(dependency_edges(svc.store), new_edges)
        assert expected is not None
        tasks = [{"id": src, "depends_on": [dst]} for src, dst in new_edges]
        with pytest.raises(DependencyCycleError) as refused:
            svc.add_tasks(tasks)
        assert refused.value.cycle == expected
    svc.add_tasks([{"id": "y", "depends_on": ["d"]}])  # no cycle: written
    assert svc.store.dependency_closure(["y"])[-2:] == [("y", "d"), ("y", "x")]


def test_readding_a_finished_task_keeps_its_outcome(svc: ContextService) -> None:
    _setup(svc)
    svc.add_task({"id": "t-auth", "name": "Add JWT validation middleware (renamed)"})
    t = svc.get_task("t-auth")
    assert t.status is TaskStatus.COMPLETED and t.success is True
    assert t.name.endswith("(renamed)")


def test_signals_are_stored_with_the_task(svc: ContextService) -> None:
    _setup(svc)
    t = svc.get_task("t-refresh")
    assert t.signals is not None
    assert "jwt" in t.signals.keywords and "auth" in t.signals.domains


def test_blockers_show_in_working_memory(svc: ContextService) -> None:
    _setup(svc)
    svc.block("t-pending", "waiting for Redis")
    ctx = svc.compute("t-refresh")
    assert [b.id for b in ctx.active_blockers] == ["t-pending"]
    assert 't-pending: "waiting for Redis"' in ctx.markdown
    svc.unblock("t-pending")
    assert svc.compute("t-refresh").active_blockers == ()


def test_requires_context_off_drops_working_memory(svc: ContextService) -> None:
    _setup(svc)
    svc.add_task({"id": "quiet", "objective": "Rotate JWT", "requires_context": False})
    ctx = svc.compute("quiet")
    assert ctx.recent_tasks == () and "Recent Task History" not in ctx.markdown


def test_compute_accepts_a_task_value_not_in_the_store(svc: ContextService) -> None:
    _setup(svc)
    ctx = svc.compute(Task(id="adhoc", objective="Fix JWT clock skew in auth", depends_on=("t-auth",)))
    assert [w.task_id for w in ctx.prior_work] == ["t-auth"]
    with pytest.raises(UnknownTaskError):
        svc.compute("missing")


def test_demo_project_loads_and_computes(svc: ContextService, demo_root: Path) -> None:
    tasks, files, handoffs = load_project(svc, demo_root)
    assert tasks >= 12 and files >= 10 and handoffs >= 10
    ctx = svc.compute(DEMO_TASK, debug=True)
    assert ctx.prior_work, "the demo task depends on completed tasks"
    assert ctx.code_references
    assert "## Context Debug" in ctx.markdown


def test_tiers_and_context_map_scores_through_the_store(svc: ContextService) -> None:
    from ctxgraph.core.models import FileEntry

    svc.add_tasks([{"id": "src", "objective": "history"},
                   {"id": "t", "name": "Rotate JWT", "objective": "Rotate the JWT signing key in auth/jwt.ts"}])
    svc.ingest_handoff({
        "task_id": "src", "summary": "lots learned", "completed_at": "2026-01-01T00:00:00Z",
        "patterns_discovered": [{"pattern": f"JWT pattern {i}", "applies_to": ["jwt"]} for i in range(12)],
        "gotchas": [{"issue": f"JWT gotcha {i}", "severity": "high", "applies_to": ["jwt"]} for i in range(8)],
    })
    svc.add_files([FileEntry(path=f"lib/jwt/mod{i:02d}.ts", component="jwt", notes="") for i in range(25)]
                  + [FileEntry(path="src/auth/jwt.ts", component="auth", notes="auth helpers")])
    counts = {}
    for tier in ("easy", "normal", "complex"):
        ctx = svc.compute("t", complexity=tier)
        counts[tier] = (len(ctx.patterns_to_follow), len(ctx.warnings), len(ctx.code_references))
    assert counts == {"easy": (3, 2, 5), "normal": (5, 3, 10), "complex": (10, 5, 10)}
    ctx = svc.compute("t")
    assert ctx.computed.signals.keywords == ("rotate", "jwt", "key", "auth", "jwt.ts")
    assert ctx.computed.signals.files_mentioned == ("auth/jwt.ts",)
    seed = {r.file: r.seed_score for r in ctx.code_references}
    assert ctx.code_references[0].file == "src/auth/jwt.ts"
    # keyword "auth" in the component (+2); "jwt", "auth", "jwt.ts" in the location (+1 each);
    # domain "auth" in the notes (+1); the mentioned file auth/jwt.ts in the location (+3)
    assert seed["src/auth/jwt.ts"] == 2 + 3 + 1 + 3
    # "jwt" in component (+2) and in location (+1)
    assert seed["lib/jwt/mod00.ts"] == 3


def test_query_limits_keyword_20_domain_10(svc: ContextService) -> None:
    svc.add_tasks([{"id": "src", "objective": "history"},
                   {"id": "t", "name": "Rotate JWT", "objective": "Rotate the JWT signing key", "complexity": "complex"}])
    svc.ingest_handoff({
        "task_id": "src", "summary": "lots learned", "completed_at": "2026-01-01T00:00:00Z",
        "patterns_discovered": [{"pattern": f"Pattern number {i}", "applies_to": ["jwt"]} for i in range(25)]
        + [{"pattern": f"Other pattern {i}", "applies_to": ["auth"]} for i in range(15)],
    })
    ctx = svc.compute("t")
    assert ctx.computed.signals.domains == ("auth",)
    assert (ctx.computed.keyword_hits, ctx.computed.domain_hits) == (20, 10)
    assert ctx.computed.patterns_found == 30
    assert len(ctx.patterns_to_follow) == 10


def test_context_degrades_gracefully_when_the_store_fails(tmp_path: Path) -> None:
    from ctxgraph.graph.local import LocalStore
    from ctxgraph.signals import SignalExtractor

    store = LocalStore.open(tmp_path / "g.db")
    svc = ContextService(store, SignalExtractor())
    _setup(svc)
    store.close()  # every query now fails as if the server were gone
    ctx = svc.compute(Task(id="adhoc", objective="Fix JWT clock skew", depends_on=("t-auth",)), debug=True)
    assert ctx.prior_work == () and ctx.patterns_to_follow == ()
    assert any(n.startswith("missing knowledge, dependency handoffs") for n in ctx.computed.notes)
    assert "missing knowledge, dependency handoffs" in ctx.markdown  # said in the debug section
    assert ctx.markdown.startswith("## Context (Computed)")


def test_knowledge_chains_keep_the_latest_version(svc: ContextService) -> None:
    svc.add_tasks([{"id": "t", "name": "Sign JWT tokens", "objective": "Sign the JWT access token"}])
    v1 = svc.add_knowledge("decision", "Sign JWT with HS256", tags=["jwt"], rationale="one service")
    adr = svc.add_knowledge("adr", "ADR 3: tokens are JWTs signed by the api", tags=["jwt"], importance=0.9)
    assert adr.token_estimate > 0 and "jwt" in adr.tags
    v2 = svc.revise_knowledge(v1.id, "Sign JWT with RS256", rationale="keys rotate per service")
    assert (v2.chain_id, v2.version) == (v1.id, 2)
    ctx = svc.compute("t", explain=True)
    decisions = [d.decision for d in ctx.relevant_decisions]
    assert decisions == ["Sign JWT with RS256"]
    reasons = {e.id: e.reason for e in ctx.explain or ()}
    assert reasons[v1.id] in ("superseded", "chain")
    assert ctx.patterns_to_follow[0].pattern.startswith("ADR 3")  # ADR ranks first (type priority 1)
    assert svc.get_knowledge(v1.id).status == "superseded"
    assert svc.store.stats().relationships["SUPERSEDES"] == 1


def test_one_context_waits_for_one_round_trip_on_neo4j(neo4j_store: object, extractor: object) -> None:
    """The history beside the files' text candidates and the tags' degrees and
    the gather: five statements in three read transactions, the history's two
    (its tasks' text candidates, then the evidence of those chosen) on the
    calling thread, the files' candidates and the gather each on a worker;
    with task vectors a sixth, the neighbours, on a worker in a fourth."""
    import threading

    from ctxgraph.graph.neo4j_store import Neo4jStore
    from ctxgraph.signals import SignalExtractor

    assert isinstance(neo4j_store, Neo4jStore) and isinstance(extractor, SignalExtractor)
    neo4j_store.clear()
    svc = ContextService(neo4j_store, extractor)
    _setup(svc)
    task = svc.get_task("t-refresh")
    # Whether any task has a vector is asked once a minute: here when the tasks
    # were added (their query vectors are made then when some task has one).
    before = neo4j_store.statements_run
    svc.compute(task)
    assert neo4j_store.statements_run - before == 5
    threads: list[str] = []
    rows = neo4j_store._rows

    def spy(tx: object, name: str, **params: object) -> object:
        threads.append(f"{name}@{threading.current_thread().name}")
        return rows(tx, name, **params)  # type: ignore[arg-type]

    def spied() -> tuple[ComputedContext, int, int]:
        """A context with its statements recorded in ``threads``: it, and the
        statements and read transactions it ran."""
        threads.clear()
        neo4j_store._rows = spy  # type: ignore[method-assign]
        try:
            before, reads = neo4j_store.statements_run, neo4j_store.transactions["read"]
            ctx = svc.compute(task)
        finally:
            del neo4j_store._rows
        return ctx, neo4j_store.statements_run - before, neo4j_store.transactions["read"] - reads

    ctx, statements, reads = spied()
    assert ctx.prior_work and statements == 5
    assert reads == 3
    main = threading.current_thread().name
    assert sorted(t.split("@")[0] for t in threads) == ["gather", "history", "history_text_files",
                                                        "history_text_tasks", "tag_stats"]
    assert f"history_text_tasks@{main}" in threads and f"history@{main}" in threads
    beside = {t.split("@")[1] for t in threads if t.startswith(("gather@", "tag_stats@"))}
    assert len(beside) == 1 and main not in beside  # one transaction on a worker, beside the history
    assert f"history_text_files@{main}" not in threads
    # With task vectors the neighbours are a statement of their own, on a
    # worker (a read transaction of its own), while the text ranks.
    svc.embed_tasks()
    svc.compute(task)
    ctx, statements, reads = spied()
    assert ctx.prior_work and statements == 6
    assert reads == 4
    assert sorted(t.split("@")[0] for t in threads) == ["gather", "history", "history_near", "history_text_files",
                                                        "history_text_tasks", "tag_stats"]
    assert f"history_near@{main}" not in threads
    # By id, the task's stored query vector comes with the task's own read.
    svc.compute("t-refresh")  # made and stored here (a task added before any vector)
    before = neo4j_store.statements_run
    svc.embedder = object()  # not embedded again: it would fail
    ctx = svc.compute("t-refresh", debug=True)
    assert ctx.prior_work and neo4j_store.statements_run - before == 7
    assert "embedding the task failed" not in ctx.markdown
    neo4j_store.clear()


def test_the_embedded_gather_runs_beside_a_large_history_on_a_second_connection(
    tmp_path: Path, extractor: object, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From ``SIDE_BY_SIDE_TASKS`` finished tasks on, the tag queries run on the
    side reader's connection in the worker thread and the history on the
    store's own (below, both on the calling thread's); the context is the one
    a lone gather gives; an error in the history is the one raised; ``close``
    stops the worker."""
    import threading

    from ctxgraph.core.models import GatherQuery
    from ctxgraph.graph.local import LocalStore
    from ctxgraph.graph.local import store as local_store
    from ctxgraph.signals import SignalExtractor

    assert isinstance(extractor, SignalExtractor)
    store = LocalStore.open(tmp_path / "graph.db")
    svc = ContextService(store, extractor)
    _setup(svc)
    task = svc.get_task("t-refresh")
    first = svc.compute(task, record=False)
    own, side = store.db.conn, store._side_reader()[0].conn
    main = threading.current_thread().name

    def traced() -> list[tuple[str, str]]:
        seen: list[tuple[str, str, str]] = []
        for name, conn in (("own", own), ("side", side)):
            conn.set_trace_callback(lambda sql, name=name: seen.append((name, threading.current_thread().name, sql)))
        again = svc.compute(task, record=False)
        for conn in (own, side):
            conn.set_trace_callback(None)
        assert again.markdown == first.markdown and first.prior_work
        assert all(c == "own" for c, t, _ in seen if t == main)
        return [(c, t) for c, t, sql in seen if "JOIN edges e INDEXED BY edges_by_dst" in sql]

    assert set(traced()) == {("own", main)}  # a small history: one thread, one connection
    monkeypatch.setattr(local_store, "SIDE_BY_SIDE_TASKS", 1)
    tag_queries = traced()
    assert tag_queries and {c for c, _ in tag_queries} == {"side"} and main not in {t for _, t in tag_queries}
    query = GatherQuery(keywords=("jwt",), domains=("auth",), files=(), dep_ids=("t-auth",), exclude=("t-refresh",),
                        keyword_limit=5, domain_limit=5, related_limit=5, recent_limit=3, working_memory=True)
    assert store.gather_with_history(query, ["jwt"])[0] == store.gather(query.model_copy(update={"context_map": False}))

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("history failed")

    store._history_evidence = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="history failed"):
        store.gather_with_history(query, ["jwt"])
    store.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("ctxgraph-local")]


def test_a_neo4j_graph_without_the_task_vector_index_has_no_vectors(neo4j_store: object, extractor: object) -> None:
    """A graph whose schema predates task vectors, read without applying it."""
    from ctxgraph.graph.neo4j_store import Neo4jStore
    from ctxgraph.signals import SignalExtractor

    assert isinstance(neo4j_store, Neo4jStore) and isinstance(extractor, SignalExtractor)
    neo4j_store.clear()
    svc = ContextService(neo4j_store, extractor)
    _setup(svc)
    with neo4j_store._session() as session:
        session.run("DROP INDEX task_embedding IF EXISTS").consume()
    try:
        assert neo4j_store.has_task_vectors() is False
        assert svc.compute(svc.get_task("t-refresh")).prior_work
    finally:
        neo4j_store.init_schema()
        neo4j_store.clear()


def test_a_tied_text_cut_runs_only_the_text_statement_again(neo4j_store: object, tmp_path: Path) -> None:
    """Equal scores at both text cuts (120 finished tasks and 250 files with the
    same words) make Neo4j's first candidates (40 tasks, 200 files) fail their
    check: only ``history_text_tasks`` and ``history_text_files`` run again, with
    more, then ``history`` once for the 20 tasks and 100 files chosen, the
    embedded store's choice."""
    from ctxgraph.core import evidence
    from ctxgraph.core.models import FileEntry
    from ctxgraph.graph.local import LocalStore
    from ctxgraph.graph.neo4j_store import Neo4jStore

    assert isinstance(neo4j_store, Neo4jStore)
    neo4j_store.clear()
    tasks = [Task(id=f"t-{i:03d}", name="Rotate refresh tokens", objective="Rotate the refresh tokens on login",
                  status=TaskStatus.COMPLETED, completed_at=f"2026-03-{1 + i % 20:02d}T10:00:00Z") for i in range(120)]
    files = [FileEntry(path=f"src/auth/t{i:03d}.py", component="auth", notes="refresh tokens rotation")
             for i in range(250)]
    terms = ["refresh", "tokens", "rotate", "rotation"]
    local = LocalStore.open(tmp_path / "graph.db")
    names: list[str] = []
    rows = neo4j_store._rows

    def spy(tx: object, name: str, **params: object) -> object:
        names.append(name)
        return rows(tx, name, **params)  # type: ignore[arg-type]

    try:
        for store in (neo4j_store, local):
            store.upsert_tasks(tasks)
            store.upsert_files(files)
        neo4j_store._rows = spy  # type: ignore[method-assign]
        got = history_of(neo4j_store, terms)
        del neo4j_store._rows
        # (the gather beside it asks for nothing but runs its own statements)
        text = [n for n in names if n.startswith("history_text")]
        assert sorted(text) == ["history_text_files"] * 2 + ["history_text_tasks"] * 2
        assert names[-1] == "history"
        assert len(got.tasks) == evidence.TASK_TOP and sum(f.text > 0 for f in got.files) == 100
        assert got.model_dump() == history_of(local, terms).model_dump()
    finally:
        local.close()
        neo4j_store.clear()
