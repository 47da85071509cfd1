"""Faults on Neo4j: the server is SIGKILLed in the middle of a batch ingest
through the CLI (`ctxgraph ingest handoff DIR --neo4j URI`).

* With a short retry time the CLI gives up: exit 5, one line, no traceback;
  what was committed is whole, nothing is half written.
* While the server is down, `context --task-file` still answers (exit 0, one
  warning) and `context ID` fails in one line.
* After a restart the same ingest completes; killed again mid-run and
  restarted within the driver's retry time, it completes without an error
  (the managed transaction is retried; the handoffs already in are left
  unchanged). The graph then equals an uninterrupted run's, byte for byte
  (`ctxgraph export`).

The test runs its own server (``scripts/neo4j_local.py --instance``) so it can
kill it; it needs Java and the Neo4j jars (`.cache/neo4j/lib`, fetched once).
Without them it is skipped — except with CI=true, where that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _faults import (
    FAULTS,
    REPO,
    Corpus,
    build_corpus,
    check_all_or_nothing,
    cli_env,
    ctxgraph,
    export_bytes,
    free_port,
    kill,
    load_base,
)

from ctxgraph.graph.neo4j_store import Neo4jSettings, Neo4jStore
from ctxgraph.signals import SignalExtractor

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
SCRIPT = REPO / "scripts" / "neo4j_local.py"
N_HANDOFFS = 100
PROGRESS_LABEL = "Ingesting handoffs\n"


@dataclass
class FaultServer:
    """A Neo4j server of this test's own, on free ports, that it may kill."""

    name: str
    bolt_port: int
    http_port: int
    starts: list[float]

    @property
    def base(self) -> Path:
        return REPO / ".cache" / "neo4j" / "instances" / self.name

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def password(self) -> str:
        return (self.base / "password").read_text().strip()

    def settings(self) -> Neo4jSettings:
        return Neo4jSettings(uri=self.uri, user="neo4j", password=self.password)

    def script(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}  # a password of its own
        return subprocess.run(
            [sys.executable, str(SCRIPT), "--instance", self.name, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self) -> None:
        began = time.monotonic()
        proc = self.script("start", "--bolt-port", str(self.bolt_port), "--http-port", str(self.http_port))
        if proc.returncode != 0:
            message = f"cannot start a Neo4j server for the fault tests: {proc.stderr.strip()[-1500:]}"
            if IN_CI:
                pytest.fail(message, pytrace=False)
            pytest.skip(message)
        self.starts.append(time.monotonic() - began)

    def kill(self) -> None:
        pid = int((self.base / "run" / "neo4j.pid").read_text().strip())
        kill(pid)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{pid}").exists() and _state(pid) not in ("Z", "X") and time.monotonic() < deadline:
            time.sleep(0.05)
        FAULTS["neo4j: server SIGKILLed during a CLI batch ingest"] += 1


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "X"


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        message = "no java: the fault tests run their own Neo4j server"
        if IN_CI:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    srv = FaultServer(name=f"fault-{os.getpid()}", bolt_port=free_port(), http_port=free_port(), starts=[])
    try:
        srv.start()
        yield srv
    finally:
        srv.script("stop", timeout=120)
        shutil.rmtree(srv.base, ignore_errors=True)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, extractor: SignalExtractor) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("neo4j-faults"), N_HANDOFFS, extractor)


def handoffs_in(store: Neo4jStore) -> int:
    return store.stats().labels.get("Handoff", 0)


def kill_when(store: Neo4jStore, server: FaultServer, proc: subprocess.Popen[str], at_least: int) -> int:
    """SIGKILL the server once ``at_least`` handoffs are in; returns how many were."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the ingest ended before the server could be killed"
        count = handoffs_in(store)
        if count >= at_least:
            server.kill()
            return count
        time.sleep(0.05)
    raise AssertionError("the ingest made no progress")


def ingest(server: FaultServer, corpus: Corpus, retry_seconds: int, cwd: Path) -> subprocess.Popen[str]:
    env = cli_env({"NEO4J_PASSWORD": server.password, "CTXGRAPH_NEO4J_RETRY_SECONDS": str(retry_seconds)})
    return subprocess.Popen(
        # small batches, so the server dies between commits (the default, 500, is one transaction here)
        ctxgraph("ingest", "handoff", str(corpus.handoffs), "--batch-size", "4", "--neo4j", server.uri),
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )



def http_root(port: int) -> dict[str, object]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/", headers={"Accept": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy for loopback
    with opener.open(request, timeout=10) as response:
        document: dict[str, object] = json.loads(response.read())
        return document


@pytest.mark.neo4j
def test_a_named_instance_advertises_its_own_bolt_port(server: FaultServer) -> None:
    """`scripts/neo4j_local.py --instance` on ports of its own (this module's server): the HTTP discovery
    document (what Neo4j Browser's connect form reads) advertises the instance's own Bolt port, and `env`
    prints that port. (Here, not in tests/e2e/test_neo4j_local.py, so the suite starts one server less.)"""
    root = http_root(server.http_port)
    assert root["bolt_direct"] == f"bolt://127.0.0.1:{server.bolt_port}", root
    assert str(root["bolt_routing"]).endswith(f":{server.bolt_port}"), root
    env = server.script("env")
    assert env.returncode == 0, env.stderr
    assert f"export NEO4J_URI=bolt://127.0.0.1:{server.bolt_port}\n" in env.stdout

@pytest.mark.slow
@pytest.mark.neo4j
def test_server_killed_during_a_batch_ingest(server: FaultServer, corpus: Corpus, tmp_path: Path) -> None:
    order = [f.stem for f in corpus.handoff_files()]
    store = Neo4jStore.connect(server.settings())
    try:
        load_base(store, corpus)

        # 1. Killed mid-run, and the driver gives up after 2 s of retrying.
        with ingest(server, corpus, 2, tmp_path) as proc:
            at_kill = kill_when(store, server, proc, N_HANDOFFS // 4)
            out, err = proc.communicate(timeout=120)
        assert proc.returncode == 5, (out[-2000:], err[-3000:])
        assert "Traceback" not in err
        lines = err.replace(PROGRESS_LABEL, "").strip("\n").splitlines()
        assert len(lines) == 1, err[-3000:]
        assert lines[0].startswith(f"ctxgraph: error: Neo4j at {server.uri} is unavailable"), lines[0]
        assert server.password not in out + err

        # 2. While it is down: a context of a task given in a file degrades with
        #    one warning; a stored task's context fails in one line.
        (tmp_path / "task.yaml").write_text("id: adhoc\nname: Add an orders endpoint\ndepends_on: [f-001]\n")
        down_env = cli_env({"NEO4J_PASSWORD": server.password})
        ctx = subprocess.run(
            ctxgraph("context", "--task-file", "task.yaml", "--neo4j", server.uri),
            env=down_env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ctx.returncode == 0, ctx.stderr
        assert ctx.stdout.startswith("## Context (Computed)")
        assert ctx.stderr.count("\n") == 1 and ctx.stderr.startswith("ctxgraph: warning: "), ctx.stderr
        stored = subprocess.run(
            ctxgraph("context", "f-001", "--neo4j", server.uri),
            env=down_env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert stored.returncode == 5 and "Traceback" not in stored.stderr, stored.stderr
        assert stored.stderr.startswith(f"ctxgraph: error: cannot reach Neo4j at {server.uri}")
        assert stored.stderr.count("\n") == 1, stored.stderr

        # 3. Restarted: what was committed is whole, the rest absent.
        server.start()
        present = check_all_or_nothing(export_bytes(store, tmp_path), corpus, order)
        assert at_kill <= present < N_HANDOFFS

        # 4. The same ingest again; the server is killed mid-run once more and
        #    restarted at once: the driver's retries carry the ingest through.
        with ingest(server, corpus, 120, tmp_path) as proc:
            kill_when(store, server, proc, present + (N_HANDOFFS - present) // 3)
            server.start()
            out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        assert err.replace(PROGRESS_LABEL, "") == "", err[-3000:]
        written, unchanged = (int(x.split()[0]) for x in out.strip().splitlines()[-1].split(", "))
        assert written + unchanged == N_HANDOFFS and unchanged >= present

        # 5. The graph equals an uninterrupted run's, through the CLI's export.
        exported = subprocess.run(
            ctxgraph("export", "graph.jsonl", "--neo4j", server.uri),
            env=down_env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert exported.returncode == 0, exported.stderr
        assert (tmp_path / "graph.jsonl").read_bytes() == corpus.reference
    finally:
        store.close()
