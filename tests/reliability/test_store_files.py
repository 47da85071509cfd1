"""The embedded store's files are their owner's alone and out of git (issues
40 and 42; ctxgraph.graph.local.folder): the folder ``0700``, the database
and its WAL files ``0600`` whatever the umask, older files tightened when a
store is opened on them, and a ``.ctxgraph`` folder made by any command holds
a ``.gitignore`` (``*``) that ``init`` mentions once."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from ctxgraph.core.models import Task
from ctxgraph.graph.local import LocalStore

NOTE = "ctxgraph: note: wrote .ctxgraph/.gitignore: git ignores the store's folder\n"


def run(*args: str, cwd: Path, umask: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_", "GIT_"))}
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=120, check=False, umask=-1 if umask is None else umask)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def git_status(repo: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, env={
        **env, "GIT_CONFIG_GLOBAL": os.devnull}, capture_output=True, text=True, check=True).stdout


def test_init_makes_a_private_store_that_git_ignores_and_says_so_once(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    first = run("init", "--no-index", "--no-history", "--no-knowledge", cwd=tmp_path, umask=0)
    assert (first.returncode, first.stdout, first.stderr) == (0, "ready: .ctxgraph/graph.db\n", NOTE)
    folder = tmp_path / ".ctxgraph"
    assert (folder / ".gitignore").read_text() == "*\n"
    assert (mode(folder), mode(folder / "graph.db")) == (0o700, 0o600)
    assert git_status(tmp_path) == ""
    again = run("init", "--no-index", "--no-history", "--no-knowledge", cwd=tmp_path)
    assert (again.returncode, again.stdout, again.stderr) == (0, "ready: .ctxgraph/graph.db\n", "")


def test_any_command_that_makes_the_folder_writes_the_gitignore(tmp_path: Path) -> None:
    added = run("task", "add", "t-1", "--name", "Login route", cwd=tmp_path, umask=0o002)
    assert added.returncode == 0 and added.stderr == "", added.stderr
    folder = tmp_path / ".ctxgraph"
    assert sorted(p.name for p in folder.iterdir()) == [".gitignore", "graph.db"]
    assert (mode(folder), mode(folder / "graph.db")) == (0o700, 0o600)
    # a store file elsewhere: no .gitignore, and the user's folder keeps its mode
    own = tmp_path / "mine"
    own.mkdir(mode=0o755)
    assert run("task", "add", "t-1", "--name", "Login", "--store", "mine/g.db", cwd=tmp_path).returncode == 0
    assert (mode(own), mode(own / "g.db"), (own / ".gitignore").exists()) == (0o755, 0o600, False)


def test_a_store_readable_by_others_is_tightened_when_opened(tmp_path: Path) -> None:
    assert run("task", "add", "t-1", "--name", "Login route", cwd=tmp_path).returncode == 0
    folder, db = tmp_path / ".ctxgraph", tmp_path / ".ctxgraph" / "graph.db"
    folder.chmod(0o755)
    db.chmod(0o644)
    listed = run("task", "list", cwd=tmp_path)  # a command that only reads
    assert listed.returncode == 0 and "t-1" in listed.stdout, listed.stderr
    assert (mode(folder), mode(db)) == (0o700, 0o600)


def test_the_wal_files_have_the_database_files_mode(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store = LocalStore.open(tmp_path / ".ctxgraph" / "graph.db")
    finally:
        os.umask(old)
    try:
        store.upsert_tasks([Task(id="t-1", name="Login route")])
        names = sorted(p.name for p in (tmp_path / ".ctxgraph").iterdir())
        assert names == [".gitignore", "graph.db", "graph.db-shm", "graph.db-wal"]
        assert {n: mode(tmp_path / ".ctxgraph" / n) for n in names[1:]} == dict.fromkeys(names[1:], 0o600)
    finally:
        store.close()


def test_the_cli_knows_the_folder_and_the_gitignore_the_store_writes() -> None:
    from ctxgraph.cli import _stores
    from ctxgraph.graph.local import folder

    assert (_stores.STORE_FOLDER, _stores.GITIGNORE) == (folder.FOLDER, folder.GITIGNORE)
    assert _stores.DEMO_STORE.parent.name == folder.FOLDER
