"""A fresh clone of a real project — ctxgraph's own repository, its hundreds
of commits — then `ctxgraph init` and the context of a new task: the context
shows prior work from the project's commits, and git sees nothing new (issue
44; the README shows the same on click)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def ctxgraph(*args: str, cwd: Path) -> str:
    """The CLI of this checkout (``-P``: never the clone's own package, which sits in ``cwd``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_", "GIT_"))}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run([sys.executable, "-P", "-m", "ctxgraph", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])
    return proc.stdout


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    if not (REPO / ".git").exists() or git("rev-parse", "--is-shallow-repository", cwd=REPO) == "true":
        pytest.skip("this checkout is not a full git clone: no history to import")
    git("clone", "-q", "--no-local", str(REPO), str(tmp_path / "ctxgraph"), cwd=tmp_path)
    return tmp_path / "ctxgraph"


def test_init_in_a_fresh_clone_shows_prior_work_from_its_commits(clone: Path) -> None:
    commits = int(git("rev-list", "--count", "--no-merges", "HEAD", cwd=clone))
    out = ctxgraph("init", "--no-embeddings", cwd=clone)
    imported = next(line for line in out.splitlines() if line.startswith("history: "))
    assert imported.startswith("history: ") and "commits imported as finished tasks" in imported, out
    count = int(imported.split()[1].replace(",", ""))
    assert commits * 0.5 < count <= commits, (commits, imported)
    assert git("status", "--porcelain", cwd=clone) == ""  # the store's folder ignores itself
    ctxgraph("task", "add", "t-1", "--name", "Import the git history as finished tasks at init",
             "--objective", "Each commit of the branch becomes a finished task with the files it changed", cwd=clone)
    ctx = json.loads(ctxgraph("context", "t-1", "--format", "json", cwd=clone))
    related = [t["id"] for t in ctx["related_tasks"]]
    assert related and all(i.startswith("c-") for i in related), related
    named = ctx["markdown"]
    assert "ctxgraph/service/history.py" in named or "ctxgraph/sources/history.py" in named, named
