"""Concurrent writers: four `ctxgraph ingest handoff` processes at once, each
with its own handoffs plus some of another's (the same files, ingested twice
at the same moment), all touching shared files, patterns, decisions and
tags. On the embedded store and on Neo4j the result equals a sequential
ingest byte for byte (`ctxgraph export`): nothing lost, nothing duplicated,
and no "database is locked" or deadlock reaches the user."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _faults import FAULTS, Corpus, build_corpus, cli_env, ctxgraph, export_bytes, load_base, rows

from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.signals import SignalExtractor

WRITERS = 4
PER_WRITER = 12
OVERLAP = 4
N_HANDOFFS = WRITERS * PER_WRITER

#: Many small write transactions and reads on one fresh file, from several processes.
FRESH_WRITER = r"""
import sys
from ctxgraph.graph.local import LocalStore
from ctxgraph.core.models import FileEntry

path, me = sys.argv[1], int(sys.argv[2])
store = LocalStore.open(path)
for i in range(60):
    store.upsert_files([FileEntry(path=f"src/w{me}/f{i}.py", component=f"w{me}", notes="x"),
                        FileEntry(path="src/shared.py", component="shared", notes="shared")])
    store.stats()
store.close()
print("ok")
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, extractor: SignalExtractor) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("concurrency"), N_HANDOFFS, extractor)


def batches(corpus: Corpus) -> list[list[Path]]:
    files = corpus.handoff_files()
    out = []
    for w in range(WRITERS):
        own = files[w * PER_WRITER : (w + 1) * PER_WRITER]
        nxt = (w + 1) % WRITERS
        out.append(own + files[nxt * PER_WRITER : nxt * PER_WRITER + OVERLAP])
    return out


def run_writers(corpus: Corpus, store_args: list[str], env: dict[str, str], cwd: Path) -> list[dict[str, object]]:
    """Start the writers together; return each one's JSON results."""
    procs = [
        subprocess.Popen(
            ctxgraph("ingest", "handoff", *map(str, batch), "--format", "json", *store_args),
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for batch in batches(corpus)
    ]
    results = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-3000:]
            # the progress bar's label (not a terminal), and nothing else: no
            # warning, no retry noise, no "database is locked"
            assert err.replace("Ingesting handoffs\n", "") == "", err[-3000:]
            results.extend(json.loads(out))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
    FAULTS[f"concurrent writers ({store_args[0]})"] += len(procs)
    assert len(results) == WRITERS * (PER_WRITER + OVERLAP)
    return results


def assert_same_graph(got: bytes, corpus: Corpus) -> None:
    if got == corpus.reference:
        return
    mine, ref = rows(got), rows(corpus.reference)
    key = json.dumps
    extra = [r for r in mine if key(r) not in {key(x) for x in ref}]
    lost = [r for r in ref if key(r) not in {key(x) for x in mine}]
    raise AssertionError(f"{len(mine)} rows vs {len(ref)} sequential; extra {extra[:3]}, lost {lost[:3]}")


@pytest.mark.slow
def test_four_processes_create_and_write_one_fresh_embedded_store(tmp_path: Path) -> None:
    db = tmp_path / "fresh" / "graph.db"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", FRESH_WRITER, str(db), str(w)],
            env=cli_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WRITERS)
    ]
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0 and out == "ok\n", err[-3000:]
            assert err == "", err[-3000:]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
    FAULTS["concurrent writers (one fresh embedded store)"] += len(procs)
    store = LocalStore.open(db, read_only=True)
    try:
        assert store.stats().labels["File"] == WRITERS * 60 + 1
    finally:
        store.close()


@pytest.mark.slow
def test_concurrent_ingest_into_the_embedded_store_equals_a_sequential_one(corpus: Corpus, tmp_path: Path) -> None:
    db = tmp_path / "graph.db"
    store = LocalStore.open(db)
    try:
        load_base(store, corpus)
    finally:
        store.close()
    began = time.monotonic()
    results = run_writers(corpus, ["--store", str(db)], cli_env(), tmp_path)
    # One writer at a time on SQLite: each handoff is written exactly once, the
    # copies ingested by a second process find it there and change nothing.
    assert sum(bool(r["written"]) for r in results) == N_HANDOFFS, time.monotonic() - began
    store = LocalStore.open(db, read_only=True)
    try:
        assert_same_graph(export_bytes(store, tmp_path), corpus)
    finally:
        store.close()


@pytest.mark.slow
def test_concurrent_ingest_into_neo4j_equals_a_sequential_one(
    corpus: Corpus, neo4j_settings: object, neo4j_store: KnowledgeStore, tmp_path: Path
) -> None:
    from ctxgraph.graph.neo4j_store import Neo4jSettings

    assert isinstance(neo4j_settings, Neo4jSettings)
    load_base(neo4j_store, corpus)
    env = cli_env({"NEO4J_PASSWORD": neo4j_settings.password or "", "NEO4J_USER": neo4j_settings.user})
    try:
        results = run_writers(corpus, ["--neo4j", neo4j_settings.uri], env, tmp_path)
        # Two transactions may both find a handoff missing and both write it (the
        # second waits on the first's lock, then rewrites the same content).
        assert sum(bool(r["written"]) for r in results) >= N_HANDOFFS
        assert_same_graph(export_bytes(neo4j_store, tmp_path), corpus)
    finally:
        neo4j_store.clear()
