"""The embedded store is found from a subfolder as the settings file is: the
nearest ``.ctxgraph/graph.db`` upwards, else ``./.ctxgraph/graph.db``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ctxgraph.graph.local import DEFAULT_PATH, default_path


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=120)


def test_default_path_is_the_nearest_store_upwards(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert default_path(deep) == deep.resolve() / DEFAULT_PATH  # none yet: here
    (tmp_path / DEFAULT_PATH).parent.mkdir()
    (tmp_path / DEFAULT_PATH).touch()
    assert default_path(deep) == tmp_path.resolve() / DEFAULT_PATH
    (tmp_path / "a" / ".ctxgraph").mkdir()  # a folder without a store (a demo, a cache) does not capture
    (tmp_path / "a" / ".ctxgraph" / "demo.db").touch()
    assert default_path(deep) == tmp_path.resolve() / DEFAULT_PATH
    (tmp_path / "a" / DEFAULT_PATH).touch()
    assert default_path(deep) == (tmp_path / "a").resolve() / DEFAULT_PATH


def test_commands_in_a_subfolder_use_the_project_store(tmp_path: Path) -> None:
    assert run("task", "add", "t-1", "--name", "Login route", cwd=tmp_path).returncode == 0
    sub = tmp_path / "src" / "api"
    sub.mkdir(parents=True)
    shown = run("task", "show", "t-1", cwd=sub)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("t-1  [pending]  Login route")
    added = run("task", "add", "t-2", "--name", "Logout route", "--depends-on", "t-1", cwd=sub)
    assert added.returncode == 0, added.stderr
    assert not (sub / ".ctxgraph").exists(), "no second store below the project's"
    listed = run("task", "list", cwd=tmp_path)
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["t-1", "t-2"]
    stats = run("stats", cwd=sub)
    assert f"store: {tmp_path.resolve() / DEFAULT_PATH}" in stats.stdout


# -- one store per command ------------------------------------------------------------
# No Neo4j server is needed: the refused and the outranked server is never reached,
# and the one chosen (an unreachable port) fails before anything is written.

UNREACHABLE = "bolt://127.0.0.1:9"


def run_env(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env={**full, **env}, timeout=120)


def one_error_line(proc: subprocess.CompletedProcess[str], code: int) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxgraph: error: "), proc.stderr
    return lines[0]


def test_store_and_neo4j_on_the_command_line_are_refused(tmp_path: Path) -> None:
    for args in (["stats"], ["task", "add", "t-1", "--name", "Login"]):
        line = one_error_line(run_env(*args, "--store", "a.db", "--neo4j", UNREACHABLE, cwd=tmp_path, env={}), 2)
        assert "--store and --neo4j" in line
    line = one_error_line(run_env("stats", cwd=tmp_path, env={"CTXGRAPH_STORE": "a.db", "NEO4J_URI": UNREACHABLE}),
                          2)
    assert "CTXGRAPH_STORE and NEO4J_URI" in line
    assert list(tmp_path.iterdir()) == []


def test_the_command_line_outranks_the_environment_with_a_note(tmp_path: Path) -> None:
    added = run_env("task", "add", "t-1", "--name", "Login route", "--store", "a.db", cwd=tmp_path,
                    env={"NEO4J_URI": UNREACHABLE})
    assert added.returncode == 0, added.stderr
    assert added.stderr == "ctxgraph: note: --store a.db given: NEO4J_URI from the environment is not used\n"
    shown = run_env("task", "show", "t-1", "--store", "a.db", cwd=tmp_path, env={"NEO4J_URI": UNREACHABLE})
    assert shown.stdout.startswith("t-1  [pending]  Login route"), shown.stderr
    # --neo4j outranks CTXGRAPH_STORE: the server is used (here unreachable), the file is not touched.
    proc = run_env("stats", "--neo4j", UNREACHABLE, cwd=tmp_path, env={"CTXGRAPH_STORE": "b.db"})
    assert proc.returncode == 5
    assert proc.stderr.startswith("ctxgraph: note: --neo4j given: CTXGRAPH_STORE from the environment is not used\n")
    assert not any(p.name.startswith("b.db") for p in tmp_path.iterdir())


def test_a_failing_write_command_leaves_no_new_file(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("task_id: t-1\nsummary: [not, text]\n")
    failing = [
        (["task", "add", "t-1", "--depends-on", "nope"], 3),
        (["task", "block", "nope", "--reason", "keys"], 3),
        (["depend", "a", "b"], 3),
        (["ingest", "handoff", "bad.yaml"], 2),
        (["task", "add", "t-1", "--store", "deep/er/s.db", "--depends-on", "nope"], 3),
    ]
    for args, code in failing:
        proc = run(*args, cwd=tmp_path)
        assert proc.returncode == code, (args, proc.stderr)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"], args
    # On a store that exists, a failed write leaves it as it was (and the store stays).
    assert run("task", "add", "t-1", "--name", "Login", cwd=tmp_path).returncode == 0
    assert run("task", "add", "t-2", "--depends-on", "nope", cwd=tmp_path).returncode == 3
    listed = run("task", "list", cwd=tmp_path)
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["t-1"]
