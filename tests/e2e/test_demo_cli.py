"""`ctxgraph demo`: the packaged demo into the embedded store or into Neo4j,
never over a store that holds other work."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env=full, timeout=180)


def neo4j_env(settings: object) -> dict[str, str]:
    from ctxgraph.graph.neo4j_store import Neo4jSettings

    assert isinstance(settings, Neo4jSettings) and settings.password
    return {"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user, "NEO4J_PASSWORD": settings.password}


def task_ids(store: KnowledgeStore) -> set[str]:
    return {t.id for t in store.list_tasks()}


def test_demo_json_is_the_context_of_task_015(tmp_path: Path) -> None:
    proc = run("demo", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["task_id"] == "task-015"
    assert doc["markdown"].startswith("## Context (Computed)")


def next_command(stderr: str) -> list[str]:
    """The context command the demo suggests, to run as printed (``ctxgraph`` as this interpreter's module)."""
    lines = [line for line in stderr.splitlines() if line.startswith("Next, the same context again: ")]
    assert len(lines) == 1, stderr
    args = shlex.split(lines[0].split(": ", 1)[1])
    assert args[:3] == ["ctxgraph", "context", "task-015"]
    return args[1:]


def test_the_context_command_the_demo_suggests_works_as_printed(tmp_path: Path) -> None:
    demo = run("demo", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    args = next_command(demo.stderr)
    assert args == ["context", "task-015", "--store", ".ctxgraph/demo.db"]
    again = run(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == demo.stdout
    # The bare command names the demo's store instead of only `ctxgraph init`, and creates nothing.
    bare = run("context", "task-015", cwd=tmp_path)
    assert bare.returncode == 5
    assert bare.stderr.strip().endswith("the demo is in .ctxgraph/demo.db: add --store .ctxgraph/demo.db")
    assert not (tmp_path / ".ctxgraph" / "graph.db").exists()


def test_demo_refuses_a_store_holding_other_work(tmp_path: Path) -> None:
    assert run("task", "add", "mine-1", "--name", "My own task", cwd=tmp_path).returncode == 0
    store = tmp_path / ".ctxgraph" / "graph.db"
    proc = run("demo", "--store", str(store), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("ctxgraph: error: ") and "mine-1" in proc.stderr and "--reset" in proc.stderr
    with LocalStore.open(store, read_only=True) as kept:
        assert task_ids(kept) == {"mine-1"}
    assert run("demo", "--store", str(store), "--reset", cwd=tmp_path).returncode == 0
    with LocalStore.open(store, read_only=True) as loaded:
        assert "mine-1" not in task_ids(loaded) and "task-015" in task_ids(loaded)
    again = run("demo", "--store", str(store), cwd=tmp_path)  # only the demo there: reloaded
    assert again.returncode == 0, again.stderr


@pytest.mark.neo4j
def test_demo_loads_into_neo4j_by_option_and_by_environment(neo4j_settings: object, neo4j_store: KnowledgeStore,
                                                             tmp_path: Path) -> None:
    env = neo4j_env(neo4j_settings)
    neo4j_store.clear()
    uri = env.pop("NEO4J_URI")
    proc = run("demo", "--neo4j", uri, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## Context (Computed)")
    assert f"into {uri}" in proc.stderr
    args = next_command(proc.stderr)
    assert args == ["context", "task-015", "--neo4j", uri]
    again = run(*args, cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout == proc.stdout
    assert len(task_ids(neo4j_store)) == 17
    assert not (tmp_path / ".ctxgraph").exists(), "nothing went to the embedded store"

    neo4j_store.clear()
    proc = run("demo", cwd=tmp_path, env={**env, "NEO4J_URI": uri})
    assert proc.returncode == 0, proc.stderr
    assert len(task_ids(neo4j_store)) == 17
    assert not (tmp_path / ".ctxgraph").exists()
    assert next_command(proc.stderr) == ["context", "task-015"]  # NEO4J_URI is in the environment
    # An explicit --store outranks NEO4J_URI from the environment, with a note.
    proc = run("demo", "--store", "d.db", cwd=tmp_path, env={**env, "NEO4J_URI": uri})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "d.db").is_file()
    assert "ctxgraph: note: --store d.db given: NEO4J_URI from the environment is not used" in proc.stderr
    neo4j_store.clear()
