"""Neo4j's jars from Maven Central, fetched once into .cache/neo4j/lib (shared by every instance)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

from .common import ARTIFACTS, BROWSER_VERSION, CACHE, LIB, MARKER, NEO4J_VERSION, Fail, find_mvn, rel, say


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
