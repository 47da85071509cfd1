"""`scripts/neo4j_local.py` with a named instance on ports of its own.

* Started on other ports, the server's HTTP discovery document (what Neo4j
  Browser's connect form reads) advertises the instance's own Bolt port, and
  `env` prints that port.
* `env` for an instance that is not running fails (exit 1, nothing on stdout)
  instead of printing the default URI for `eval` to accept.

The first test runs a real server, so it needs Java and the Neo4j jars
(`.cache/neo4j/lib`, fetched once); without them it is skipped — except with
CI=true, where that is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "neo4j_local.py"
INSTANCES = REPO / ".cache" / "neo4j" / "instances"
LIB = REPO / ".cache" / "neo4j" / "lib"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def instance_name() -> str:
    return f"test-local-{os.getpid()}-{secrets.token_hex(3)}"


def script(instance: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    # No NEO4J_* from the caller: the instance gets a password of its own and
    # a small memory footprint.
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(NEO4J_LOCAL_HEAP="512m", NEO4J_LOCAL_PAGECACHE="64m")
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--instance", instance, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def http_root(port: int) -> dict[str, object]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/", headers={"Accept": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy for loopback
    with opener.open(request, timeout=10) as response:
        document: dict[str, object] = json.loads(response.read())
        return document


def need_a_server() -> None:
    missing = None
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        missing = "no java: this test runs its own Neo4j server"
    elif not any(LIB.glob("neo4j-*.jar")) and shutil.which("mvn") is None:
        missing = f"no Neo4j jars in {LIB} and no mvn to fetch them"
    if missing:
        if IN_CI:
            pytest.fail(missing, pytrace=False)
        pytest.skip(missing)


@pytest.mark.neo4j
@pytest.mark.slow
def test_a_named_instance_advertises_its_own_bolt_port() -> None:
    need_a_server()
    name = instance_name()
    bolt_port = free_port()
    http_port = free_port()
    while http_port == bolt_port:
        http_port = free_port()
    try:
        proc = script(name, "start", "--bolt-port", str(bolt_port), "--http-port", str(http_port))
        assert proc.returncode == 0, proc.stderr[-3000:]

        root = http_root(http_port)
        assert root["bolt_direct"] == f"bolt://127.0.0.1:{bolt_port}", root
        assert str(root["bolt_routing"]).endswith(f":{bolt_port}"), root

        env = script(name, "env")
        assert env.returncode == 0, env.stderr
        assert f"export NEO4J_URI=bolt://127.0.0.1:{bolt_port}\n" in env.stdout
    finally:
        script(name, "stop", timeout=120)
        shutil.rmtree(INSTANCES / name, ignore_errors=True)


def test_env_for_a_stopped_instance_fails() -> None:
    name = instance_name()
    try:
        proc = script(name, "env", timeout=60)
        assert proc.returncode == 1
        assert proc.stdout == ""
        assert proc.stderr.startswith("neo4j_local: error: Neo4j is not running"), proc.stderr
        assert f"--instance {name} start" in proc.stderr
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
    finally:
        shutil.rmtree(INSTANCES / name, ignore_errors=True)
