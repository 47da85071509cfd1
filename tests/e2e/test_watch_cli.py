"""`ctxgraph index --watch` as a user runs it: a saved file is re-indexed, a
deleted one's chunks are gone, Ctrl-C (or SIGTERM) stops it; on both stores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore


def aged(path: Path) -> None:
    then = time.time() - 60
    os.utime(path, (then, then))


def project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "alpha.py").write_text("def alpha():\n    return 1\n", encoding="utf-8")
    (root / "beta.py").write_text("def beta():\n    return 2\n", encoding="utf-8")
    for i in range(30):  # enough files for the first run's progress lines (a tenth at a time)
        (root / "docs").mkdir(exist_ok=True)
        (root / "docs" / f"note{i:02d}.md").write_text(f"# Note {i}\n", encoding="utf-8")
    for p in root.iterdir():
        aged(p)
    return root


def next_run(out: IO[str], seconds: float = 60.0) -> dict[str, object]:
    """The next JSON line the watcher prints (one a run)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = out.readline()
        if line.strip():
            found: dict[str, object] = json.loads(line)
            return found
    raise AssertionError("no run reported")


@pytest.fixture(params=["local", "neo4j"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[list[str], dict[str, str], KnowledgeStore]]:
    """(store arguments, environment, the store read by the test) of each kind."""
    if request.param == "local":
        db = tmp_path / "graph.db"
        LocalStore.open(db).close()
        store = LocalStore.open(db, read_only=True)
        yield ["--store", str(db)], {}, store
        store.close()
        return
    from ctxgraph.graph.neo4j_store import Neo4jSettings

    settings = request.getfixturevalue("neo4j_settings")
    shared: KnowledgeStore = request.getfixturevalue("neo4j_store")
    assert isinstance(settings, Neo4jSettings)
    shared.clear()  # type: ignore[attr-defined]
    env = {"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user, "NEO4J_PASSWORD": settings.password or ""}
    yield [], env, shared
    shared.clear()  # type: ignore[attr-defined]


@pytest.mark.parametrize("how", [[], ["--poll", "0.2"]], ids=["events", "poll"])
def test_watch_reindexes_a_saved_file_and_forgets_a_deleted_one(
        tmp_path: Path, target: tuple[list[str], dict[str, str], KnowledgeStore], how: list[str]) -> None:
    store_args, env, store = target
    root = project(tmp_path / "watched")
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxgraph", "index", str(root), *store_args, "--watch", "--no-embeddings",
         "--format", "json", *how], cwd=tmp_path, env={**inherited, **env}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = next_run(proc.stdout)
        assert first["added"][:2] == ["alpha.py", "beta.py"] and len(first["added"]) == 32 and first["complete"]
        time.sleep(0.5)  # the watcher sets its watches up while the first run goes

        (root / "alpha.py").write_text("def alpha_renamed():\n    return 11\n", encoding="utf-8")
        saved = time.monotonic()
        changed = next_run(proc.stdout)
        assert changed["changed"] == ["alpha.py"] and changed["indexed"] == 1
        assert time.monotonic() - saved < 30  # the benchmark measures the latency; this only bounds a hang
        hits = store.search_memory("watched", None, ["renamed"], 5)[1]
        assert [h.chunk.path for h in hits] == ["alpha.py"]

        (root / "beta.py").unlink()
        deleted = next_run(proc.stdout)
        assert deleted["deleted"] == ["beta.py"] and deleted["removed"] == 1
        assert "beta.py" not in store.memory_state("watched").file_hashes
        assert store.search_memory("watched", None, ["beta"], 5)[1] == []
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "watching " in err and "stopping" in err and "Traceback" not in err
    assert "project watched: memory index 100 % (32/32 files" in err
