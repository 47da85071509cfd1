"""`ctxgraph hooks install|uninstall|status` (issue 31, item 3): the git
post-commit hook that re-indexes the project's root after each commit, run
by the installed `ctxgraph` console script in throwaway git repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ctxgraph.cli._hooks import MARKER

SCRIPT = Path(sys.executable).with_name("ctxgraph")  # the installed console script
FOREIGN = "#!/bin/sh\necho \"the team's own hook\"\n"


def clean_env() -> dict[str, str]:
    """The environment without the suite's store variables (the Neo4j tests run
    with NEO4J_URI set) or git's: every process here uses the repo's own store."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_", "GIT_"))}


def run(*args: str, cwd: Path, code: int = 0) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, env=clean_env(),
                          timeout=120, check=False)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    return proc


def repo(folder: Path) -> Path:
    folder.mkdir()
    for cmd in (["init", "-q"], ["config", "user.name", "Tester"], ["config", "user.email", "t@example.com"]):
        subprocess.run(["git", *cmd], cwd=folder, check=True)
    (folder / "billing.py").write_text("def compute_invoice_total(lines):\n    return sum(lines)\n",
                                       encoding="utf-8")
    return folder


def test_install_is_idempotent_and_uninstall_removes_it(tmp_path: Path) -> None:
    shop = repo(tmp_path / "shop")
    hook = shop / ".git" / "hooks" / "post-commit"
    first = json.loads(run("hooks", "install", "--format", "json", cwd=shop).stdout)
    assert first["action"] == "installed" and first["hook"] == str(hook) and first["root"] == str(shop)
    text = hook.read_text(encoding="utf-8")
    assert os.access(hook, os.X_OK)
    assert MARKER in text.splitlines() and str(SCRIPT) in text and f"index {shop} " in text
    assert f"--store {shop / '.ctxgraph' / 'graph.db'}" in text and text.rstrip().endswith("&")

    again = json.loads(run("hooks", "install", "--format", "json", cwd=shop).stdout)
    assert again["action"] == "unchanged" and hook.read_text(encoding="utf-8") == text

    status = json.loads(run("hooks", "status", "--format", "json", cwd=shop).stdout)
    assert status["installed"] and status["executable"] and status["command"] == first["command"]
    assert "installed: " in run("hooks", "status", cwd=shop).stdout

    assert json.loads(run("hooks", "uninstall", "--format", "json", cwd=shop).stdout)["action"] == "removed"
    assert not hook.exists()
    assert json.loads(run("hooks", "uninstall", "--format", "json", cwd=shop).stdout)["action"] == "absent"
    assert not json.loads(run("hooks", "status", "--format", "json", cwd=shop).stdout)["installed"]


def test_a_foreign_hook_is_never_touched(tmp_path: Path) -> None:
    shop = repo(tmp_path / "shop")
    hook = shop / ".git" / "hooks" / "post-commit"
    hook.write_text(FOREIGN, encoding="utf-8")
    refused = run("hooks", "install", cwd=shop, code=2)
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxgraph: error: ") and "not ctxgraph's" in lines[0]
    assert str(SCRIPT) in lines[0]  # the line to add to the team's hook
    assert hook.read_text(encoding="utf-8") == FOREIGN
    status = json.loads(run("hooks", "status", "--format", "json", cwd=shop).stdout)
    assert status["state"] == "foreign" and not status["installed"]
    assert json.loads(run("hooks", "uninstall", "--format", "json", cwd=shop).stdout)["action"] == "foreign"
    assert hook.read_text(encoding="utf-8") == FOREIGN


def test_core_hooks_path_is_honoured(tmp_path: Path) -> None:
    shop = repo(tmp_path / "shop")
    subprocess.run(["git", "config", "core.hooksPath", "team-hooks"], cwd=shop, check=True)
    out = json.loads(run("hooks", "install", "--format", "json", cwd=shop).stdout)
    assert out["hook"] == str(shop / "team-hooks" / "post-commit")
    assert os.access(shop / "team-hooks" / "post-commit", os.X_OK)
    assert not (shop / ".git" / "hooks" / "post-commit").exists()


def test_a_worktree_shares_the_repository_hook(tmp_path: Path) -> None:
    shop = repo(tmp_path / "shop")
    # git, its hook and the listing all run without the suite's NEO4J_URI (with
    # it, a listing without --store reads the Neo4j server's projects).
    subprocess.run(["git", "add", "billing.py"], cwd=shop, check=True, env=clean_env())
    subprocess.run(["git", "commit", "-qm", "first"], cwd=shop, check=True, env=clean_env())
    subprocess.run(["git", "worktree", "add", "-q", str(tmp_path / "side")], cwd=shop, check=True)
    run("hooks", "install", cwd=shop)
    moved = run("hooks", "install", "--format", "json", cwd=tmp_path / "side")
    assert json.loads(moved.stdout)["hook"] == str(shop / ".git" / "hooks" / "post-commit")
    assert f"the hook indexed {shop}: it now indexes {tmp_path / 'side'}" in moved.stderr


def test_no_git_work_tree_is_one_clear_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for args in (("hooks", "install"), ("hooks", "install", "--root", str(plain)), ("hooks", "status")):
        proc = run(*args, cwd=plain, code=2)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ctxgraph: error: "), proc.stderr
    assert "not in a git work tree" in run("hooks", "install", "--root", str(plain), cwd=plain, code=2).stderr
    assert not any(plain.iterdir())


def test_a_commit_indexes_the_project_in_the_background(tmp_path: Path) -> None:
    shop = repo(tmp_path / "shop")
    run("hooks", "install", "--no-embeddings", cwd=shop)
    # git, its hook and the listing all run without the suite's NEO4J_URI (with
    # it, a listing without --store reads the Neo4j server's projects).
    subprocess.run(["git", "add", "billing.py"], cwd=shop, check=True, env=clean_env())
    subprocess.run(["git", "commit", "-qm", "first"], cwd=shop, check=True, env=clean_env())
    deadline = time.monotonic() + 60
    projects: list[dict[str, object]] = []
    while time.monotonic() < deadline:
        time.sleep(0.5)
        if (shop / ".ctxgraph" / "graph.db").exists():
            listed = subprocess.run([str(SCRIPT), "index", "--list", "--format", "json"], cwd=shop,
                                    capture_output=True, text=True, timeout=60, check=False, env=clean_env())
            projects = json.loads(listed.stdout) if listed.returncode == 0 else []
            if projects and projects[0].get("indexed_at") and projects[0].get("files") == 1:
                break
    assert [(p["id"], p["root"], p["files"]) for p in projects] == [("shop", str(shop), 1)]
    assert projects[0]["indexed_at"]
