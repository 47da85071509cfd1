"""`scripts/neo4j_local.py` with a named instance: `env` for an instance that
is not running fails (exit 1, nothing on stdout) instead of printing the
default URI for `eval` to accept. (That a running named instance advertises
its own Bolt port is checked on the fault tests' server,
tests/reliability/test_neo4j_faults.py, so the suite starts one server less.)
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "neo4j_local.py"
INSTANCES = REPO / ".cache" / "neo4j" / "instances"


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
