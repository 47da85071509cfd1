"""SIGTERM while `ctxgraph mcp --http` ingests handoffs for several clients at
once (the MCP SDK's client, one session each), on each store: the server
stops taking requests, lets those in flight finish and exits 0; every handoff
a client was told is ingested is in the graph, whole; every other one is
whole or absent, none half written (`ctxgraph export`, compared with an
uninterrupted ingest's); a call refused on the way down fails with an error,
never a success that was not written."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from _faults import FAULTS, Corpus, build_corpus, check_all_or_nothing, cli_env, export_bytes, load_base, rows
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.signals import SignalExtractor

TOKEN = "sigterm-test-" + os.urandom(12).hex()
N_HANDOFFS = 96
CLIENTS = 6
#: SIGTERM once this many handoffs are in (well before the end: each client's next call is refused).
AT = 12
SERVING = re.compile(r"serving (http://\S+/mcp)")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, extractor: SignalExtractor) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("mcp-sigterm"), N_HANDOFFS, extractor)


@dataclass
class Target:
    """A store holding the corpus's tasks (no handoff yet), and how the server reaches it."""

    args: list[str]
    env: dict[str, str]
    #: the Neo4j store (None: the embedded store at ``path``, opened once the server is gone)
    shared: KnowledgeStore | None = None
    path: Path | None = None

    def export(self, tmp: Path) -> bytes:
        if self.shared is not None:
            return export_bytes(self.shared, tmp)
        from ctxgraph.graph.local import LocalStore

        assert self.path is not None
        store = LocalStore.open(self.path, read_only=True)
        try:
            return export_bytes(store, tmp)
        finally:
            store.close()


@pytest.fixture(params=["local", "neo4j"])
def target(request: pytest.FixtureRequest, corpus: Corpus, tmp_path: Path) -> Iterator[Target]:
    if request.param == "local":
        from ctxgraph.graph.local import LocalStore

        path = tmp_path / "graph.db"
        store = LocalStore.open(path)
        load_base(store, corpus)
        store.close()
        yield Target(["--store", str(path)], {}, path=path)
        return
    settings: Any = request.getfixturevalue("neo4j_settings")
    shared: KnowledgeStore = request.getfixturevalue("neo4j_store")
    load_base(shared, corpus)
    yield Target([], {"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user,
                      "NEO4J_PASSWORD": settings.password or ""}, shared=shared)
    shared.clear()


def _ingested(metrics_url: str) -> float:
    text = httpx2.get(metrics_url, timeout=30).text
    return sum(s.value for family in text_string_to_metric_families(text) for s in family.samples
               if s.name == "ctxgraph_handoffs_ingested_total")


async def _client(url: str, files: list[Path], outcomes: dict[str, str]) -> None:
    """Ingest ``files`` one after the other; each outcome: ``ok``, or the error (then stop)."""
    try:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"},
                                      timeout=httpx2.Timeout(30, read=300)) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            for path in files:
                try:
                    result = await client.call_tool("ingest_handoff", {"handoff": path.read_text(),
                                                                       "source": path.name, "embed": False})
                except Exception as exc:
                    outcomes[path.stem] = f"failed: {exc!r}"
                    return
                outcomes[path.stem] = "ok" if not result.is_error else f"error: {result.content[0].text}"  # type: ignore[union-attr]
                if result.is_error:
                    return
    except BaseException as exc:  # the session closed under it: the calls not made have no outcome
        if not isinstance(exc, Exception | BaseExceptionGroup):
            raise


async def _run(url: str, proc: subprocess.Popen[bytes], corpus: Corpus) -> dict[str, str]:
    outcomes: dict[str, str] = {}
    files = corpus.handoff_files()
    metrics_url = url.removesuffix("/mcp") + "/metrics"

    async def terminate() -> None:
        deadline = time.monotonic() + 240
        while await anyio.to_thread.run_sync(_ingested, metrics_url) < AT:
            assert time.monotonic() < deadline, "the ingests made no progress"
            await anyio.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        FAULTS["mcp: SIGTERM during concurrent ingests"] += 1

    async with anyio.create_task_group() as group:
        for i in range(CLIENTS):
            group.start_soon(_client, url, files[i::CLIENTS], outcomes)
        group.start_soon(terminate)
    return outcomes


@pytest.mark.slow
def test_sigterm_during_concurrent_ingests_leaves_no_half_written_handoff(target: Target, corpus: Corpus,
                                                                          tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ctxgraph", "mcp", "--http", "127.0.0.1:0", *target.args, "--no-index",
             "--shutdown-timeout", "120"],
            cwd=tmp_path, env=cli_env({**target.env, "CTXGRAPH_MCP_TOKEN": TOKEN}), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 120
        while not (found := SERVING.search(log.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        outcomes = anyio.run(_run, found.group(1), proc, corpus)
        assert proc.wait(180) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "SIGTERM: shutting down" in text and text.rstrip().endswith("stopped"), text
    assert TOKEN not in text

    snapshot = target.export(tmp_path)
    present = sorted(r["id"].removeprefix("handoff:") for r in rows(snapshot)
                     if r["kind"] == "node" and r["label"] == "Handoff")
    acknowledged = {task for task, outcome in outcomes.items() if outcome == "ok"}
    refused = {task: outcome for task, outcome in outcomes.items() if outcome != "ok"}
    assert acknowledged <= set(present), "a handoff the client was told is ingested is not in the graph"
    assert len(acknowledged) >= AT and len(present) < N_HANDOFFS, (len(acknowledged), len(present))
    assert refused, "no call was refused after SIGTERM"
    assert all(not outcome.startswith("error: ") for outcome in refused.values()), refused
    absent = sorted({p.stem for p in corpus.handoff_files()} - set(present))
    # present first, in any order: each one whole; every other one absent, its task untouched
    assert check_all_or_nothing(snapshot, corpus, present + absent) == len(present)
