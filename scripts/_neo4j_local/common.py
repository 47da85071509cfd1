"""Constants, the user-facing error, informational output and the tools neo4j_local needs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

PROG = "neo4j_local"

NEO4J_VERSION = "5.26.0"
BROWSER_VERSION = "5.24.0"
ARTIFACTS = (
    ("org.neo4j", "neo4j", NEO4J_VERSION),
    ("org.neo4j.client", "neo4j-browser", BROWSER_VERSION),
)
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "neo4j"
LIB = CACHE / "lib"
MARKER = LIB / ".fetched"

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


class Fail(Exception):
    """A user-facing error: printed as one line, exit status 1."""


class _Output:
    """Where informational output goes: stdout, or stderr under `run` (the wrapped command owns stdout)."""

    stream: TextIO = sys.stdout


def say(message: str) -> None:
    try:
        print(message, file=_Output.stream, flush=True)
    except BrokenPipeError:  # reader went away (`start | head`): keep going quietly
        _Output.stream = open(os.devnull, "w")  # noqa: SIM115


def say_on_stderr() -> None:
    """Send what `say` prints to stderr from now on."""
    _Output.stream = sys.stderr


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
