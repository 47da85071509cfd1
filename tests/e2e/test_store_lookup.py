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
