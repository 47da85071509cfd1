"""`/readyz` of `ctxgraph mcp --http` follows Neo4j: a server of the test's own
(``scripts/neo4j_local.py --instance``) is stopped under a running ctxgraph
server and started again. While it is down `/readyz` answers 503 with the
reason, `/healthz` still 200, a tool call fails as store_unavailable (counted
in `/metrics`); once it is back `/readyz` turns 200 and calls work again, in
the same ctxgraph process (no restart).

Neo4j tests run when ``NEO4J_URI`` is set (the suite's convention); the test
starts a server of its own beside that one, so it can stop it. Without
``NEO4J_URI`` it is skipped, except with CI=true, where that is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
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
from _faults import FAULTS, REPO, cli_env, free_port
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
SCRIPT = REPO / "scripts" / "neo4j_local.py"
TOKEN = "readyz-test-" + os.urandom(12).hex()
SERVING = re.compile(r"serving (http://\S+/mcp)")


def _unavailable(message: str) -> None:
    if IN_CI:
        pytest.fail(f"CI=true and {message}", pytrace=False)
    pytest.skip(message)


@dataclass
class Instance:
    """A Neo4j server of this test's own, on free ports, that it may stop and start."""

    name: str
    bolt_port: int
    http_port: int

    @property
    def base(self) -> Path:
        return REPO / ".cache" / "neo4j" / "instances" / self.name

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def password(self) -> str:
        return (self.base / "password").read_text().strip()

    def script(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}  # a password of its own
        return subprocess.run([sys.executable, str(SCRIPT), "--instance", self.name, *args], env=env,
                              capture_output=True, text=True, timeout=300)

    def start(self) -> None:
        proc = self.script("start", "--bolt-port", str(self.bolt_port), "--http-port", str(self.http_port))
        assert proc.returncode == 0, f"cannot start Neo4j: {proc.stderr.strip()[-1500:]}"

    def stop(self) -> None:
        proc = self.script("stop")
        assert proc.returncode == 0, proc.stderr[-1500:]


@pytest.fixture(scope="module")
def instance() -> Iterator[Instance]:
    if not os.environ.get("NEO4J_URI"):
        _unavailable("no Neo4j: set NEO4J_URI (python scripts/neo4j_local.py run -- pytest ...)")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        _unavailable("no java: the readiness test runs a Neo4j server of its own")
    inst = Instance(name=f"readyz-{os.getpid()}", bolt_port=free_port(), http_port=free_port())
    try:
        inst.start()
        yield inst
    finally:
        inst.script("stop")
        shutil.rmtree(inst.base, ignore_errors=True)


def _get(url: str) -> tuple[int, Any]:
    response = httpx2.get(url, timeout=60)
    return response.status_code, response.json()


def _metric(base: str, name: str, **labels: str) -> float:
    text = httpx2.get(base + "/metrics", timeout=60).text
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and s.labels == labels:
                return float(s.value)
    return 0.0


def _until(base: str, code: int) -> Any:
    """The body of the first /readyz answer with ``code`` (polled; a hang is an error)."""
    deadline = time.monotonic() + 180
    while True:
        got, body = _get(base + "/readyz")
        if got == code:
            return body
        assert time.monotonic() < deadline, f"/readyz never answered {code}: {body}"
        time.sleep(0.2)


async def _get_task(url: str, task_id: str) -> Any:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        return await client.call_tool("get_task", {"task_id": task_id})


@pytest.mark.slow
@pytest.mark.neo4j
def test_readyz_is_503_with_the_reason_while_neo4j_is_down_and_recovers_by_itself(instance: Instance,
                                                                                   tmp_path: Path) -> None:
    env = cli_env({"NEO4J_PASSWORD": instance.password, "CTXGRAPH_MCP_TOKEN": TOKEN,
                   "CTXGRAPH_NEO4J_RETRY_SECONDS": "1"})
    added = subprocess.run([sys.executable, "-m", "ctxgraph", "task", "add", "t-ready", "--neo4j", instance.uri],
                           env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    log = tmp_path / "server.log"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "ctxgraph", "mcp", "--http", "127.0.0.1:0", "--neo4j",
                                 instance.uri, "--no-index"], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 120
        while not (found := SERVING.search(log.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        url = found.group(1)
        base = url.removesuffix("/mcp")
        assert _until(base, 200)["projects"]["default"]["store"] == "ok"

        instance.stop()
        FAULTS["mcp: Neo4j stopped under a serving ctxgraph"] += 1
        body = _until(base, 503)
        assert body["status"] == "not ready", body
        assert body["reason"].startswith(f"project default: cannot reach Neo4j at {instance.uri}"), body
        assert body["projects"]["default"]["store"] == "unavailable"
        assert _get(base + "/healthz") == (200, {"status": "alive"})
        assert _metric(base, "ctxgraph_store_up", project="default") == 0
        down = anyio.run(_get_task, url, "t-ready")
        assert down.is_error and down.meta["ctxgraph/exit_code"] == 5, down.content
        assert _metric(base, "ctxgraph_mcp_tool_errors_total", tool="get_task", kind="store_unavailable") == 1

        instance.start()
        body = _until(base, 200)
        assert body == {"status": "ready", "projects": {"default": {"store": "ok", "memory": {"state": "off"}}}}
        assert _metric(base, "ctxgraph_store_up", project="default") == 1
        up = anyio.run(_get_task, url, "t-ready")
        assert not up.is_error, up.content
        assert json.loads(up.content[0].text)["task"]["id"] == "t-ready"  # type: ignore[union-attr]
        assert proc.poll() is None  # the same process throughout
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert instance.password not in log.read_text() and TOKEN not in log.read_text()
