"""Parity after a real write history (issue 29): a generated history of 240
handoffs — rewrites, failures turned into successes, shared knowledge whose
fields disagree, files noted differently, equal completion times and equal
scores — ingested in two orders and by four concurrent writers, on both
stores, leaves the same export and the same context JSON (Markdown, scores,
explanation) for 20 tasks. The merge rules are in docs/parity.md."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ctxgraph.core.models import FileEntry, Task
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor

NOW = datetime(2026, 6, 1, tzinfo=UTC)
WORDS = ("token", "session", "cache", "refresh", "login", "schema", "migration", "index", "queue",
         "retry", "webhook", "billing", "invoice", "upload", "thumbnail", "search", "export", "audit")
AREAS = ("auth", "api", "db", "jobs", "billing", "media")
DAYS = [f"2026-03-{d:02d}T{h:02d}:00:00Z" for d in range(1, 21) for h in (9, 15)]
PATTERNS = [f"Wrap {w} calls with the {a} guard" for w in WORDS[:8] for a in AREAS[:2]]
GOTCHAS = [f"The {w} job double-fires under load" for w in WORDS[6:16]]
DECISIONS = [f"Keep {w} state in {a}" for w in WORDS[:6] for a in ("postgres", "redis")]
N_TASKS = 160
#: Tasks whose context is compared: pending ones (no handoff) and finished ones.
COMPARED = [f"t-{i:03d}" for i in range(140, 160)]


def _history() -> tuple[list[dict[str, Any]], list[FileEntry], list[list[dict[str, Any]]]]:
    """Task documents, a context map, and per task the versions of its handoff in order."""
    rng = random.Random(29)
    files = [FileEntry(path=f"src/{a}/{w}.py", component=a,
                       notes="" if rng.random() < 0.3 else f"{w} handling for {a}")
             for a in AREAS for w in rng.sample(WORDS, 6)]
    tasks = []
    for i in range(N_TASKS):
        # a few words from a small vocabulary: many tasks score the same
        words = rng.sample(WORDS, 2) if i % 5 else list(WORDS[:2])
        area = AREAS[i % len(AREAS)]
        deps = [f"t-{j:03d}" for j in sorted(rng.sample(range(max(0, i - 30), i), min(i, 2)))] if i >= 140 else []
        tasks.append({"id": f"t-{i:03d}", "name": f"{words[0]} {words[1]} in {area}",
                      "objective": f"Make the {area} {words[0]} {words[1]} work",
                      "depends_on": deps})
    handoffs: list[list[dict[str, Any]]] = []
    for i in range(140):
        versions = []
        for v in range(1 + (i % 3 == 0) + (i % 7 == 0)):
            picked = rng.sample(files, 3)
            extra = f"src/{AREAS[i % 6]}/new_{rng.choice(WORDS)}.py"
            doc: dict[str, Any] = {
                "task_id": f"t-{i:03d}",
                "summary": f"Did t-{i:03d} v{v}",
                "success": not (v == 0 and i % 6 == 0),
                "completed_at": DAYS[min(len(DAYS) - 1, i // 8 + 2 * v)],
                "files_created": [{"path": extra, "purpose": rng.choice(["", f"new {extra}", "helper"])}],
                "files_modified": [{"path": f.path, "purpose": rng.choice(["", "touched", f"fix {f.component}"])}
                                   for f in picked[:2]],
                "dependencies_for_next": [{"file": picked[2].path, "reason": "read first"}],
                "patterns_discovered": [{"pattern": rng.choice(PATTERNS), "applies_to": rng.sample(AREAS, 2),
                                         "location": rng.choice([f.path for f in picked])}],
                "gotchas": [{"issue": rng.choice(GOTCHAS), "severity": rng.choice(["low", "medium", "high"]),
                             "applies_to": [rng.choice(AREAS)]}],
                "decisions": [{"decision": rng.choice(DECISIONS), "rationale": rng.choice(["speed", "cost", ""])}],
            }
            versions.append(doc)
        handoffs.append(versions)
    return tasks, files, handoffs


@pytest.fixture(scope="module")
def history(extractor: SignalExtractor, tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[list[Task], list[FileEntry], list[list[dict[str, Any]]]]:
    """The history, its tasks prepared once (signals) with fixed times."""
    docs, files, handoffs = _history()
    scratch = LocalStore.open(tmp_path_factory.mktemp("prep") / "graph.db")
    try:
        prepared = ContextService(scratch, extractor).add_tasks(docs)
    finally:
        scratch.close()
    fixed = "2026-02-01T00:00:00Z"
    tasks = [t.model_copy(update={"created_at": fixed, "updated_at": fixed}) for t in prepared]
    assert sum(len(v) for v in handoffs) >= 200
    return tasks, files, handoffs


def _ordered(handoffs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Every first version in task order, then the rewrites."""
    depth = max(len(v) for v in handoffs)
    return [v[d] for d in range(depth) for v in handoffs if d < len(v)]


def _shuffled(handoffs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Another interleaving: tasks in a shuffled order, each task's versions in turn."""
    rng = random.Random(7)
    queues = [list(v) for v in handoffs]
    out = []
    while any(queues):
        q = rng.choice([q for q in queues if q])
        out.append(q.pop(0))
    return out


def _load(svc: ContextService, tasks: list[Task], files: list[FileEntry]) -> None:
    svc.store.upsert_tasks(tasks)
    svc.store.upsert_files(files)


def _ingest(svc: ContextService, docs: list[dict[str, Any]], batch: int) -> None:
    svc.ingest_handoffs([(f"h{n}", d) for n, d in enumerate(docs)], batch_size=batch)


def _outcome(svc: ContextService) -> dict[str, Any]:
    export = [json.dumps(r, sort_keys=True) for r in svc.store.export_rows()]
    contexts = {tid: svc.compute(tid, debug=True, explain=True, now=NOW, record=False).model_dump(mode="json")
                for tid in COMPARED}
    return {"export": export, "contexts": contexts}


def _run(open_store: Callable[[], KnowledgeStore], clear: Callable[[], None], extractor: SignalExtractor,
         history: tuple[list[Task], list[FileEntry], list[list[dict[str, Any]]]]) -> dict[str, dict[str, Any]]:
    tasks, files, handoffs = history
    out: dict[str, dict[str, Any]] = {}
    for name, docs, batch in (("ordered", _ordered(handoffs), 64), ("shuffled", _shuffled(handoffs), 23)):
        clear()
        store = open_store()
        svc = ContextService(store, extractor)
        _load(svc, tasks, files)
        _ingest(svc, docs, batch)
        out[name] = _outcome(svc)
        store.close()
    clear()
    first = open_store()
    _load(ContextService(first, extractor), tasks, files)
    writers = [open_store() for _ in range(4)]
    failures: list[BaseException] = []

    def write(n: int, store: KnowledgeStore) -> None:
        try:
            mine = [d for i, v in enumerate(handoffs) if i % 4 == n for d in v]
            for start in range(0, len(mine), 20):
                _ingest(ContextService(store, extractor), mine[start:start + 20], 20)
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(n, s)) for n, s in enumerate(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    for s in writers:
        s.close()
    out["concurrent"] = _outcome(ContextService(first, extractor))
    first.close()
    return out


@pytest.fixture(scope="module")
def local_runs(tmp_path_factory: pytest.TempPathFactory, extractor: SignalExtractor,
               history: tuple[list[Task], list[FileEntry], list[list[dict[str, Any]]]]) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("parity")
    n = [0]

    def clear() -> None:
        n[0] += 1

    def open_store() -> KnowledgeStore:
        return LocalStore.open(Path(root) / f"graph{n[0]}.db")

    return _run(open_store, clear, extractor, history)


@pytest.fixture(scope="module")
def neo4j_runs(neo4j_settings: object, neo4j_store: KnowledgeStore, extractor: SignalExtractor,
               history: tuple[list[Task], list[FileEntry], list[list[dict[str, Any]]]]
               ) -> Iterator[dict[str, dict[str, Any]]]:
    from ctxgraph.graph.neo4j_store import Neo4jSettings, Neo4jStore

    assert isinstance(neo4j_settings, Neo4jSettings)
    yield _run(lambda: Neo4jStore.connect(neo4j_settings), neo4j_store.clear, extractor, history)
    neo4j_store.clear()


def _same(a: dict[str, Any], b: dict[str, Any], what: str) -> None:
    assert a["export"] == b["export"], what
    for tid in COMPARED:
        assert a["contexts"][tid] == b["contexts"][tid], (what, tid)


@pytest.mark.parametrize("kind", ["local", "neo4j"])
def test_the_order_of_ingestion_does_not_matter(kind: str, request: pytest.FixtureRequest) -> None:
    runs: dict[str, dict[str, Any]] = request.getfixturevalue(f"{kind}_runs")
    _same(runs["ordered"], runs["shuffled"], f"{kind}: ordered vs shuffled")
    _same(runs["ordered"], runs["concurrent"], f"{kind}: ordered vs 4 concurrent writers")


def test_both_stores_give_the_same_graph_and_contexts(local_runs: dict[str, dict[str, Any]],
                                                      neo4j_runs: dict[str, dict[str, Any]]) -> None:
    for name in ("ordered", "shuffled", "concurrent"):
        _same(local_runs[name], neo4j_runs[name], f"local vs neo4j, {name}")


def _local_statistics(store: LocalStore) -> dict[str, Any]:
    """The full-text statistics the embedded store's BM25 indexes hold."""
    with store.db.read() as cur:
        corpus = store._corpus(cur)
    out: dict[str, Any] = {}
    for name, index in (("task", corpus.tasks_index), ("file", corpus.files_index)):
        out[name] = (index.count, {t: len(rows) for t, (rows, _) in index.postings.items()})
    return out


def _neo4j_statistics(store: KnowledgeStore) -> dict[str, Any]:
    """The statistics the Neo4j store keeps (Corpus nodes, Term task_df/file_df)."""
    with store._session() as session:  # type: ignore[attr-defined]
        corpus = {r["id"]: r["docs"] for r in session.run("MATCH (c:Corpus) RETURN c.id AS id, c.docs AS docs")}
        terms = list(session.run("MATCH (t:Term) RETURN t.name AS name, t.task_df AS task, t.file_df AS file"))
    return {name: (corpus.get(f"{name}_text", 0), {r["name"]: r[name] for r in terms if r[name]})
            for name in ("task", "file")}


def test_neo4j_keeps_the_statistics_of_the_embedded_index_and_recounts_them(
        neo4j_store: KnowledgeStore, tmp_path: Path, extractor: SignalExtractor,
        history: tuple[list[Task], list[FileEntry], list[list[dict[str, Any]]]]) -> None:
    """After rewrites, the documents counted and each term's document frequency
    on Neo4j equal the embedded store's index; a graph that lost them (written
    before they were kept) counts them again on connect."""
    tasks, files, handoffs = history
    local = LocalStore.open(tmp_path / "graph.db")
    neo4j_store.clear()
    try:
        for store in (local, neo4j_store):
            svc = ContextService(store, extractor)
            _load(svc, tasks, files)
            _ingest(svc, _shuffled(handoffs), 50)
        expected = _local_statistics(local)
        assert _neo4j_statistics(neo4j_store) == expected
        with neo4j_store._session() as session:  # type: ignore[attr-defined]
            session.run("MATCH (c:Corpus) DELETE c").consume()
            session.run("MATCH (t:Term) SET t.task_df = 7, t.file_df = null").consume()
        neo4j_store.init_schema()
        assert _neo4j_statistics(neo4j_store) == expected
    finally:
        local.close()
        neo4j_store.clear()
