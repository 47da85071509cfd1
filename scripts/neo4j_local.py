#!/usr/bin/env python3
"""Run a real Neo4j 5.26 Community server on this machine without Docker.

The server comes from Neo4j's own jars on Maven Central (fetched once with
Maven into ``.cache/neo4j/lib``) and runs as a plain ``java`` process bound to
127.0.0.1, with authentication on. The password is set on first start and
kept in ``.cache/neo4j/password`` (mode 0600); it is never printed.

Subcommands: fetch, start, stop, status, env, run. ``run -- CMD...`` starts a
server (or reuses a running one), runs CMD with NEO4J_URI / NEO4J_USER /
NEO4J_PASSWORD in its environment, stops the server again if it started it,
and exits with CMD's exit code. See scripts/README.md.

Standard library only; the ``neo4j`` Python driver is imported when a step
needs to talk to the server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

PROG = "neo4j_local"

NEO4J_VERSION = "5.26.0"
BROWSER_VERSION = "5.24.0"
ARTIFACTS = (
    ("org.neo4j", "neo4j", NEO4J_VERSION),
    ("org.neo4j.client", "neo4j-browser", BROWSER_VERSION),
)
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "neo4j"
LIB = CACHE / "lib"
MARKER = LIB / ".fetched"
RUN_DIR = CACHE / "run"
PID_FILE = RUN_DIR / "neo4j.pid"
STATE_FILE = RUN_DIR / "neo4j.json"
LOG_FILE = RUN_DIR / "neo4j.log"
LOCK_FILE = RUN_DIR / "lock"
PASSWORD_FILE = CACHE / "password"
DEFAULT_HOME = CACHE / "home"
INSTANCE_ENV = "NEO4J_LOCAL_INSTANCE"
INSTANCE_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")

HOST = "127.0.0.1"
DEFAULT_BOLT_PORT = 7687
DEFAULT_HTTP_PORT = 7474
USER = "neo4j"
INITIAL_PASSWORD = "neo4j"  # what a fresh Neo4j home starts with (must be changed)
START_TIMEOUT = 180.0
STOP_TIMEOUT = 30.0

#: Memory of a started server: env NEO4J_LOCAL_HEAP (JVM maximum heap, default
#: 1g) and NEO4J_LOCAL_PAGECACHE (default 512m) — raise both for a
#: 1,000,000-node benchmark graph.
HEAP = os.environ.get("NEO4J_LOCAL_HEAP", "1g")
PAGECACHE = os.environ.get("NEO4J_LOCAL_PAGECACHE", "512m")

#: The Lucene merge factor of the vector indexes (an internal setting of Neo4j 5;
#: docker-compose.yml sets the same).
VECTOR_MERGE_SETTING = "internal.dbms.index.vector.standard_merge_factor"
VECTOR_MERGE_FACTOR = "2"

#: The JVM flags of Neo4j's own launcher (the server.jvm.additional lines of
#: the neo4j.conf it ships) that bear on speed and errors, besides the heap.
JVM_FLAGS = (
    "-Xms512m",
    f"-Xmx{HEAP}",
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
)

# Informational output goes here; `run` switches it to stderr so that the
# wrapped command owns stdout.
_out = sys.stdout


class Fail(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def say(message: str) -> None:
    global _out
    try:
        print(message, file=_out, flush=True)
    except BrokenPipeError:  # reader went away (`start | head`): keep going quietly
        _out = open(os.devnull, "w")  # noqa: SIM115


# --------------------------------------------------------------------- tools


def find_java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    candidates = [str(Path(java_home) / "bin" / "java")] if java_home else []
    candidates.append(shutil.which("java") or "")
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            break
    else:
        raise Fail("java not found (Neo4j 5.26 needs Java 17 or 21 on PATH or in JAVA_HOME)")
    probe = subprocess.run([candidate, "-version"], capture_output=True, text=True, check=False)
    found = re.search(r'version "(\d+)(?:\.(\d+))?', probe.stderr + probe.stdout)
    if found:
        major = int(found.group(1))
        if major == 1 and found.group(2):  # "1.8.0" style
            major = int(found.group(2))
        if major < 17:
            raise Fail(f"java {major} found at {candidate}; Neo4j 5.26 needs Java 17 or 21")
    return candidate


def find_mvn() -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise Fail(f"mvn not found (Maven is needed once to fetch Neo4j's jars into {rel(LIB)})")
    return mvn


def import_driver() -> Any:
    try:
        import neo4j
    except ImportError:
        raise Fail("the neo4j Python driver is not installed (pip install neo4j)") from None
    return neo4j


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------- fetch


def marker_text() -> str:
    return "\n".join(f"{g}:{a}:{v}" for g, a, v in ARTIFACTS) + "\n"


def is_fetched() -> bool:
    try:
        return MARKER.read_text() == marker_text() and any(LIB.glob("neo4j-*.jar"))
    except OSError:
        return False


def pom_xml() -> str:
    deps = "\n".join(
        "    <dependency>\n"
        f"      <groupId>{g}</groupId>\n"
        f"      <artifactId>{a}</artifactId>\n"
        f"      <version>{v}</version>\n"
        "    </dependency>"
        for g, a, v in ARTIFACTS
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        "<!-- Written by scripts/neo4j_local.py to fetch Neo4j's jars; throwaway. -->\n"
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        "  <groupId>local.ctxgraph</groupId>\n"
        "  <artifactId>neo4j-local-runtime</artifactId>\n"
        "  <version>1</version>\n"
        "  <packaging>pom</packaging>\n"
        "  <dependencies>\n"
        f"{deps}\n"
        "  </dependencies>\n"
        "</project>\n"
    )


def fetch(force: bool = False) -> None:
    if is_fetched() and not force:
        say(f"Neo4j {NEO4J_VERSION} jars already in {rel(LIB)}")
        return
    mvn = find_mvn()
    CACHE.mkdir(parents=True, exist_ok=True)
    pom = CACHE / "pom.xml"
    pom.write_text(pom_xml())
    partial = CACHE / "lib.partial"
    shutil.rmtree(partial, ignore_errors=True)
    say(f"Fetching Neo4j {NEO4J_VERSION} and Neo4j Browser {BROWSER_VERSION} from Maven Central ...")
    began = time.monotonic()
    cmd = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(pom),
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={partial}",
    ]
    result = subprocess.run(cmd, cwd=CACHE, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-15:]
        print("\n".join(tail), file=sys.stderr)
        raise Fail(f"mvn dependency:copy-dependencies failed (exit {result.returncode})")
    if not any(partial.glob("neo4j-*.jar")):
        raise Fail(f"mvn finished but no Neo4j jars landed in {partial}")
    shutil.rmtree(LIB, ignore_errors=True)
    partial.rename(LIB)
    MARKER.write_text(marker_text())
    count = len(list(LIB.glob("*.jar")))
    say(f"Fetched {count} jars into {rel(LIB)} in {time.monotonic() - began:.1f} s")


# ----------------------------------------------------------- process helpers


def pid_alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError, OSError):
        done, _ = os.waitpid(pid, os.WNOHANG)  # reap it if it is our own child
        if done == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        with contextlib.suppress(OSError, IndexError):
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return False
    return True


def is_our_server(pid: int) -> bool:
    """True when pid is alive and (where /proc says) is a Neo4j entry point."""
    if not pid_alive(pid):
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        with contextlib.suppress(OSError):
            return ENTRY_POINT.encode() in cmdline.read_bytes()
    return True


def port_open(port: int, timeout: float = 1.0) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=timeout):
        return True
    return False


@contextlib.contextmanager
def run_lock() -> Iterator[None]:
    """Serialize start/stop between concurrent invocations (Unix only)."""
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-Unix
        yield
        return
    with open(LOCK_FILE, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_state() -> dict[str, Any] | None:
    """The recorded server if its process is still alive, else None (and cleaned)."""
    try:
        pid = int(PID_FILE.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        state: dict[str, Any] = json.loads(STATE_FILE.read_text())
    except (OSError, ValueError):
        state = {}
    state["pid"] = pid
    state.setdefault("bolt_port", DEFAULT_BOLT_PORT)
    state.setdefault("http_port", DEFAULT_HTTP_PORT)
    if not is_our_server(pid):
        clear_state()
        return None
    return state


def clear_state() -> None:
    for path in (PID_FILE, STATE_FILE):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def write_state(state: dict[str, Any]) -> None:
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    STATE_FILE.write_text(json.dumps(state, indent=2) + "\n")
    PID_FILE.write_text(f"{state['pid']}\n")


def log_tail(lines: int = 40) -> str:
    try:
        text = LOG_FILE.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


# ------------------------------------------------------------------ password


def write_password(password: str) -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    fd = os.open(PASSWORD_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(password + "\n")
    os.chmod(PASSWORD_FILE, 0o600)


def read_password_file() -> str | None:
    try:
        text = PASSWORD_FILE.read_text().strip()
    except OSError:
        return None
    return text or None


def wanted_password() -> str:
    """NEO4J_PASSWORD if set, else the saved one, else a new random one."""
    from_env = os.environ.get("NEO4J_PASSWORD")
    if from_env:
        if len(from_env) < 8:
            raise Fail("NEO4J_PASSWORD must be at least 8 characters (Neo4j's minimum)")
        if from_env == INITIAL_PASSWORD:
            raise Fail("NEO4J_PASSWORD must differ from Neo4j's initial password")
        return from_env
    return read_password_file() or secrets.token_urlsafe(24)


def driver_for(neo4j: Any, port: int, password: str) -> Any:
    return neo4j.GraphDatabase.driver(
        f"bolt://{HOST}:{port}",
        auth=(USER, password),
        connection_timeout=5.0,
        max_connection_lifetime=60,
    )


def try_login(neo4j: Any, port: int, password: str) -> bool | None:
    """True: these credentials work. False: refused. None: Bolt not answering yet."""
    driver = driver_for(neo4j, port, password)
    try:
        driver.verify_connectivity()
        return True
    except neo4j.exceptions.AuthError:
        return False
    except (neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.SessionExpired, OSError):
        return None
    finally:
        driver.close()


def change_password(neo4j: Any, port: int, old: str, new: str) -> bool:
    """Log in with `old` and set `new`; False when `old` is refused."""
    driver = driver_for(neo4j, port, old)
    try:
        with driver.session(database="system") as session:
            session.run("ALTER CURRENT USER SET PASSWORD FROM $old TO $new", old=old, new=new).consume()
        return True
    except neo4j.exceptions.AuthError:
        return False
    except neo4j.exceptions.ClientError as exc:
        # The message may quote our input; keep only Neo4j's code.
        raise Fail(f"Neo4j refused the password change ({exc.code})") from None
    finally:
        driver.close()


def ensure_password(neo4j: Any, port: int, target: str, works_already: bool) -> str:
    """Make the server's neo4j user use `target` as password, saved to the file."""
    previous = read_password_file()
    write_password(target)  # saved before the change, so it cannot be lost after it
    if works_already:
        return target
    for old in (INITIAL_PASSWORD, previous):
        if not old or old == target:
            continue
        if change_password(neo4j, port, old, target):
            how = "initial password" if old == INITIAL_PASSWORD else "saved password"
            say(f"Set the neo4j user's password (was the {how}); saved in {rel(PASSWORD_FILE)}")
            return target
    if previous:
        write_password(previous)
    else:
        PASSWORD_FILE.unlink(missing_ok=True)
    raise Fail(
        "the server refused both the wanted and the known passwords for user neo4j "
        "(this home was set up with another password: set NEO4J_PASSWORD to it, or "
        "stop the server and remove the home's data folder)"
    )


def wait_for_password(neo4j: Any, port: int, password: str, timeout: float = 60.0) -> None:
    """Run a query on the default database until it succeeds (databases come up late)."""
    deadline = time.monotonic() + timeout
    driver = driver_for(neo4j, port, password)
    try:
        while True:
            try:
                driver.execute_query("RETURN 1")
                return
            except neo4j.exceptions.AuthError:
                raise Fail("the password was set but the server then refused it") from None
            except neo4j.exceptions.Neo4jError as exc:
                if time.monotonic() > deadline:
                    raise Fail(f"the default database did not come online ({exc.code})") from None
            except neo4j.exceptions.DriverError:
                if time.monotonic() > deadline:
                    raise Fail("the server stopped answering after the password step") from None
            time.sleep(0.5)
    finally:
        driver.close()


# ---------------------------------------------------------------- start/stop


def wait_for_bolt(neo4j: Any, proc: subprocess.Popen[bytes], port: int, password: str, timeout: float) -> bool:
    """Wait until Bolt answers; returns whether `password` already works."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            print(log_tail(), file=sys.stderr)
            raise Fail(f"Neo4j exited during startup (status {proc.returncode}); log: {rel(LOG_FILE)}")
        if port_open(port):
            answer = try_login(neo4j, port, password)
            if answer is not None:
                return answer
        time.sleep(0.5)
    print(log_tail(), file=sys.stderr)
    stop_pid(proc.pid, quiet=True)
    raise Fail(f"Bolt did not answer on {HOST}:{port} within {timeout:.0f} s; log: {rel(LOG_FILE)}")


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


def describe(state: dict[str, Any]) -> None:
    say(f"  Bolt:     bolt://{HOST}:{state['bolt_port']}  (user {USER}, password in {rel(PASSWORD_FILE)})")
    say(f"  Browser:  {browser_url(state)}")
    say(f"  Home:     {rel(Path(state['home']))}   log: {rel(LOG_FILE)}")


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


def start(home: Path, bolt_port: int, http_port: int) -> tuple[dict[str, Any], bool]:
    """Start the server unless running; returns (state, started_now)."""
    neo4j = import_driver()
    with run_lock():
        state = read_state()
        if state is not None:
            port = state["bolt_port"]
            if port_open(port) and try_login(neo4j, port, wanted_password()) is not None:
                say(f"Neo4j already running (pid {state['pid']})")
                describe(state)
                return state, False
            raise Fail(
                f"Neo4j process {state['pid']} is alive but Bolt does not answer on "
                f"port {state['bolt_port']} (still starting or stuck; see "
                f"{rel(LOG_FILE)}, or run stop)"
            )
        java = find_java()
        target = wanted_password()
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
        RUN_DIR.mkdir(parents=True, exist_ok=True)
        if LOG_FILE.exists():
            LOG_FILE.replace(LOG_FILE.with_suffix(".log.prev"))
        began = time.monotonic()
        with open(LOG_FILE, "wb") as log:
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
        write_state(state)
        say(f"Starting Neo4j {NEO4J_VERSION} (pid {proc.pid}) ...")
        try:
            works = wait_for_bolt(neo4j, proc, bolt_port, target, START_TIMEOUT)
            password = ensure_password(neo4j, bolt_port, target, works)
            wait_for_password(neo4j, bolt_port, password)
        except BaseException:
            stop_pid(proc.pid, quiet=True)
            clear_state()
            raise
        browser_check(state)
        say(f"Neo4j running after {time.monotonic() - began:.1f} s")
        describe(state)
        return state, True


def wait_reaped(pid: int, timeout: float = 3.0) -> None:
    """Give init a moment to reap the exited server so no <defunct> entry lingers."""
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)


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


def stop() -> bool:
    with run_lock():
        state = read_state()
        if state is None:
            clear_state()
            say("Neo4j is not running")
            return False
        began = time.monotonic()
        stop_pid(state["pid"])
        clear_state()
        say(f"Neo4j stopped (pid {state['pid']}, {time.monotonic() - began:.1f} s)")
        return True


# ----------------------------------------------------------------- commands


def cmd_fetch(args: argparse.Namespace) -> int:
    fetch(force=args.force)
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    start(args.home, args.bolt_port, args.http_port)
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    stop()
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    state = read_state()
    if state is None:
        say("Neo4j is not running")
        return 1
    answering = port_open(state["bolt_port"])
    say(f"Neo4j running (pid {state['pid']}){'' if answering else ', Bolt not answering yet'}")
    describe(state)
    return 0 if answering else 1


def start_hint(instance: str | None) -> str:
    """The command that starts this instance, for error messages."""
    if not instance:
        return "python scripts/neo4j_local.py start"
    return f"python scripts/neo4j_local.py --instance {instance} start --bolt-port PORT --http-port PORT"


def cmd_env(args: argparse.Namespace) -> int:
    # A stopped server is an error, not a default URI: `eval "$(... env)"`
    # would accept that silently and point the shell at another server.
    state = read_state()
    if state is None:
        which = f" (instance {args.instance})" if args.instance else ""
        raise Fail(f"Neo4j is not running{which}; start it first: {start_hint(args.instance)}")
    if not PASSWORD_FILE.exists():
        print(f"# {PROG}: no password file yet ({PASSWORD_FILE})", file=sys.stderr)
    uri = f"bolt://{HOST}:{state['bolt_port']}"
    print(f"export NEO4J_URI={shlex.quote(uri)}")
    print(f"export NEO4J_USER={shlex.quote(USER)}")
    print(f"export NEO4J_PASSWORD_FILE={shlex.quote(str(PASSWORD_FILE))}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    global _out
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise Fail("run needs a command after --, e.g. run -- python -m pytest")
    _out = sys.stderr
    state, started = start(args.home, args.bolt_port, args.http_port)
    password = read_password_file()
    if password is None:
        raise Fail(f"no password file at {PASSWORD_FILE}")
    env = dict(os.environ)
    env.update(NEO4J_URI=f"bolt://{HOST}:{state['bolt_port']}", NEO4J_USER=USER, NEO4J_PASSWORD=password)

    def on_term(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, on_term)
    child: subprocess.Popen[bytes] | None = None
    try:
        try:
            child = subprocess.Popen(command, env=env)
        except FileNotFoundError:
            print(f"{PROG}: error: command not found: {command[0]}", file=sys.stderr)
            return 127
        except PermissionError:
            print(f"{PROG}: error: cannot execute: {command[0]}", file=sys.stderr)
            return 126
        return child.wait()
    except KeyboardInterrupt:
        return 130
    finally:
        if child is not None and child.poll() is None:
            child.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=10)
            if child.poll() is None:
                child.kill()
        signal.signal(signal.SIGTERM, previous)
        if started:
            stop()


def use_instance(name: str | None) -> None:
    """Scope run state, password and default home to a named instance.

    The unnamed (default) instance keeps the historical layout under
    ``.cache/neo4j``; a named one lives in ``.cache/neo4j/instances/NAME`` so
    that several servers (on other ports) can run side by side.
    """
    global RUN_DIR, PID_FILE, STATE_FILE, LOG_FILE, LOCK_FILE, PASSWORD_FILE, DEFAULT_HOME
    if not name:
        return
    if not INSTANCE_NAME.fullmatch(name):
        raise Fail(f"instance names are 1-40 letters, digits, '-' or '_': {name!r}")
    base = CACHE / "instances" / name
    RUN_DIR = base / "run"
    PID_FILE = RUN_DIR / "neo4j.pid"
    STATE_FILE = RUN_DIR / "neo4j.json"
    LOG_FILE = RUN_DIR / "neo4j.log"
    LOCK_FILE = RUN_DIR / "lock"
    PASSWORD_FILE = base / "password"
    DEFAULT_HOME = base / "home"


def port_number(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port: {text!r}")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            f"Run Neo4j {NEO4J_VERSION} Community locally from Maven Central jars "
            "(no Docker). Auth on; the password lives in "
            ".cache/neo4j/password and is never printed."
        ),
    )
    parser.add_argument(
        "--instance",
        default=os.environ.get(INSTANCE_ENV) or None,
        metavar="NAME",
        help=f"a separate server with its own home, state and password under "
        f".cache/neo4j/instances/NAME (env {INSTANCE_ENV}); pair it with other ports",
    )
    sub = parser.add_subparsers(dest="command_name", metavar="COMMAND", required=True)

    def server_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--home",
            type=Path,
            default=None,
            help="Neo4j home (data, logs); default .cache/neo4j/home, or the instance's",
        )
        p.add_argument(
            "--bolt-port",
            type=port_number,
            default=DEFAULT_BOLT_PORT,
            help=f"Bolt port on {HOST} (default {DEFAULT_BOLT_PORT})",
        )
        p.add_argument(
            "--http-port",
            type=port_number,
            default=DEFAULT_HTTP_PORT,
            help=f"HTTP/Browser port on {HOST} (default {DEFAULT_HTTP_PORT})",
        )

    p = sub.add_parser(
        "fetch",
        help="download Neo4j's jars with Maven (once)",
        description="Download Neo4j and Neo4j Browser jars from Maven Central "
        "into .cache/neo4j/lib (skipped when already there).",
    )
    p.add_argument("--force", action="store_true", help="fetch again even if cached")
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser(
        "start",
        help="start the server in the background",
        description="Fetch if needed, start Neo4j detached, wait for Bolt "
        "and set the neo4j user's password. Does nothing when "
        "already running.",
    )
    server_options(p)
    p.set_defaults(func=cmd_start)

    p = sub.add_parser(
        "stop",
        help="stop the server",
        description=f"SIGTERM the server, SIGKILL after {STOP_TIMEOUT:.0f} s.",
    )
    p.set_defaults(func=cmd_stop)

    p = sub.add_parser(
        "status",
        help="say whether the server runs (exit 0) or not (exit 1)",
        description="Exit 0 when the server runs and Bolt answers, else 1.",
    )
    p.set_defaults(func=cmd_status)

    p = sub.add_parser(
        "env",
        help="print export lines for the running server (NEO4J_URI/USER/PASSWORD_FILE)",
        description="Print shell export lines (NEO4J_URI with the running "
        "server's Bolt port, NEO4J_USER, NEO4J_PASSWORD_FILE); the password "
        "itself is not printed. When the server (of --instance, if given) is "
        "not running, print nothing and exit 1. "
        'Use: eval "$(python scripts/neo4j_local.py env)"',
    )
    p.set_defaults(func=cmd_env)

    p = sub.add_parser(
        "run",
        help="run a command against a server, then stop it",
        usage=f"{PROG} run [options] -- CMD [ARG ...]",
        description="Start the server (or reuse a running one), run CMD with "
        "NEO4J_URI, NEO4J_USER and NEO4J_PASSWORD in its "
        "environment, stop the server if this call started it, "
        "and exit with CMD's status.",
    )
    server_options(p)
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD [ARG ...]", help="the command to run")
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        use_instance(args.instance)
        if getattr(args, "home", "absent") is None:
            args.home = DEFAULT_HOME
        return int(args.func(args))
    except Fail as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
