"""The server process of one instance: its command line, start (with the password step) and stop."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from .auth import ensure_password, try_login, wait_for_password
from .common import (
    ENTRY_POINT,
    HOST,
    JVM_FLAGS,
    LIB,
    NEO4J_VERSION,
    PAGECACHE,
    PROG,
    START_TIMEOUT,
    STOP_TIMEOUT,
    USER,
    VECTOR_MERGE_FACTOR,
    VECTOR_MERGE_SETTING,
    Fail,
    find_java,
    import_driver,
    rel,
    say,
)
from .fetch import fetch, is_fetched
from .instance import Instance
from .process import pid_alive, port_open, wait_reaped


def wait_for_bolt(
    inst: Instance, neo4j: Any, proc: subprocess.Popen[bytes], port: int, password: str, timeout: float
) -> bool:
    """Wait until Bolt answers; returns whether `password` already works."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            print(inst.log_tail(), file=sys.stderr)
            raise Fail(f"Neo4j exited during startup (status {proc.returncode}); log: {rel(inst.log_file)}")
        if port_open(port):
            answer = try_login(neo4j, port, password)
            if answer is not None:
                return answer
        time.sleep(0.5)
    print(inst.log_tail(), file=sys.stderr)
    stop_pid(proc.pid, quiet=True)
    raise Fail(f"Bolt did not answer on {HOST}:{port} within {timeout:.0f} s; log: {rel(inst.log_file)}")


def server_command(java: str, home: Path, bolt_port: int, http_port: int) -> list[str]:
    settings = {
        "server.default_listen_address": HOST,
        "server.bolt.listen_address": f"{HOST}:{bolt_port}",
        "server.http.listen_address": f"{HOST}:{http_port}",
        # What the HTTP root's discovery document (bolt_direct, bolt_routing,
        # read by Neo4j Browser's connect form) names; without these it names
        # port 7687 whatever port the server listens on.
        "server.bolt.advertised_address": f"{HOST}:{bolt_port}",
        "server.http.advertised_address": f"{HOST}:{http_port}",
        "server.https.enabled": "false",
        "server.memory.pagecache.size": PAGECACHE,
        "dbms.usage_report.enabled": "false",
        "dbms.security.auth_enabled": "true",
        "internal.server.bolt.connection_shutdown_wait_time": "1s",
        "internal.dbms.bolt.netty_server_shutdown_quiet_period": "0",
        # Vector indexes merge their Lucene segments two at a time, as Neo4j's
        # other Lucene indexes do (its default for vector indexes is 50): each
        # write transaction adds a segment and a search walks every segment's
        # HNSW graph, so with 50 a graph written in small transactions searches
        # ~10x slower (docs/embedding.md, "Neo4j's vector indexes").
        VECTOR_MERGE_SETTING: VECTOR_MERGE_FACTOR,
    }
    cmd = [
        java,
        *JVM_FLAGS,
        "-cp",
        str(LIB / "*"),
        ENTRY_POINT,
        f"--home-dir={home}",
        f"--config-dir={home / 'conf'}",
        "--console-mode",
    ]
    for key, value in settings.items():
        cmd += ["-c", f"{key}={value}"]
    return cmd


def browser_url(state: dict[str, Any]) -> str:
    return f"http://{HOST}:{state['http_port']}/browser/?dbms=bolt://{HOST}:{state['bolt_port']}"


def describe(inst: Instance, state: dict[str, Any]) -> None:
    say(f"  Bolt:     bolt://{HOST}:{state['bolt_port']}  (user {USER}, password in {rel(inst.password_file)})")
    say(f"  Browser:  {browser_url(state)}")
    say(f"  Home:     {rel(Path(state['home']))}   log: {rel(inst.log_file)}")


def browser_check(state: dict[str, Any]) -> None:
    url = f"http://{HOST}:{state['http_port']}/browser/"
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy for loopback
        with opener.open(url, timeout=5) as response:
            ok = response.status == 200
    except (urllib.error.URLError, OSError):
        ok = False
    if not ok:
        print(f"{PROG}: warning: Neo4j Browser did not answer at {url}", file=sys.stderr)


def start(inst: Instance, home: Path, bolt_port: int, http_port: int) -> tuple[dict[str, Any], bool]:
    """Start the instance's server unless running; returns (state, started_now)."""
    neo4j = import_driver()
    with inst.run_lock():
        state = inst.read_state()
        if state is not None:
            port = state["bolt_port"]
            if port_open(port) and try_login(neo4j, port, inst.wanted_password()) is not None:
                say(f"Neo4j already running (pid {state['pid']})")
                describe(inst, state)
                return state, False
            raise Fail(
                f"Neo4j process {state['pid']} is alive but Bolt does not answer on "
                f"port {state['bolt_port']} (still starting or stuck; see "
                f"{rel(inst.log_file)}, or run stop)"
            )
        java = find_java()
        target = inst.wanted_password()
        if not is_fetched():
            fetch()
        for name, port in (("Bolt", bolt_port), ("HTTP", http_port)):
            if port_open(port, timeout=0.5):
                raise Fail(
                    f"{name} port {port} on {HOST} is already in use by another "
                    f"process (pick another with --{name.lower()}-port)"
                )
        home = home.resolve()
        (home / "conf").mkdir(parents=True, exist_ok=True)
        inst.run_dir.mkdir(parents=True, exist_ok=True)
        log_file = inst.log_file
        if log_file.exists():
            log_file.replace(log_file.with_suffix(".log.prev"))
        began = time.monotonic()
        with open(log_file, "wb") as log:
            proc = subprocess.Popen(
                server_command(java, home, bolt_port, http_port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=home,
                start_new_session=True,
            )
        state = {
            "pid": proc.pid,
            "bolt_port": bolt_port,
            "http_port": http_port,
            "home": str(home),
            "version": NEO4J_VERSION,
            "started_at": time.time(),
        }
        inst.write_state(state)
        say(f"Starting Neo4j {NEO4J_VERSION} (pid {proc.pid}) ...")
        try:
            works = wait_for_bolt(inst, neo4j, proc, bolt_port, target, START_TIMEOUT)
            password = ensure_password(inst, neo4j, bolt_port, target, works)
            wait_for_password(neo4j, bolt_port, password)
        except BaseException:
            stop_pid(proc.pid, quiet=True)
            inst.clear_state()
            raise
        browser_check(state)
        say(f"Neo4j running after {time.monotonic() - began:.1f} s")
        describe(inst, state)
        return state, True


def stop_pid(pid: int, quiet: bool = False) -> None:
    if not pid_alive(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            wait_reaped(pid)
            return
        time.sleep(0.25)
    if not quiet:
        say(f"Neo4j (pid {pid}) did not stop within {STOP_TIMEOUT:.0f} s; killing it")
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    for _ in range(40):
        if not pid_alive(pid):
            wait_reaped(pid)
            return
        time.sleep(0.25)
    raise Fail(f"could not kill Neo4j process {pid}")


def stop(inst: Instance) -> bool:
    with inst.run_lock():
        state = inst.read_state()
        if state is None:
            inst.clear_state()
            say("Neo4j is not running")
            return False
        began = time.monotonic()
        stop_pid(state["pid"])
        inst.clear_state()
        say(f"Neo4j stopped (pid {state['pid']}, {time.monotonic() - began:.1f} s)")
        return True
