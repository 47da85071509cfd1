"""`ctxgraph sync`, the just-in-time check of `ctxgraph context`, the post-commit
hook's sync line and the MCP `sync` tool, run for real on the embedded store
of a git repository made here (issue 32; the same on Neo4j:
tests/store/test_freshness.py)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from _mcp_client import clean_env, cli, stdio

from ctxgraph.cli._hooks import MARKER
from tests._git_repo import LEGACY, MARK, TASKS, change_repo, handoff, make_repo

SCRIPT = Path(sys.executable).with_name("ctxgraph")


def ok(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    proc = cli(*args, cwd=repo, stdin=stdin)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The project with its store in .ctxgraph/graph.db (the root: the git work
    tree around it), t-auth's handoff ingested, then the changing commit."""
    folder = tmp_path_factory.mktemp("sync") / "repo"
    commit = make_repo(folder)
    ok(folder, "ingest", "tasks", "-", stdin=yaml.safe_dump({"tasks": TASKS}).encode())
    ok(folder, "ingest", "handoff", "-", "--no-embed", stdin=json.dumps(handoff(commit)).encode())
    assert json.loads(ok(folder, "sync", "--format", "json"))["unchanged"] == 7
    change_repo(folder)
    yield folder


def test_context_marks_follows_and_retires_without_a_sync(repo: Path) -> None:
    md = ok(repo, "context", "t-next", "--no-memory")
    assert MARK in md and "src/auth/tokens.py" in md
    assert LEGACY not in md and "src/legacy.py" not in md and "src/auth/jwt.py" not in md


def test_sync_reports_stores_and_is_incremental(repo: Path) -> None:
    first = json.loads(ok(repo, "sync", "--format", "json"))
    assert (first["changed"], first["deleted"], first["renamed"], first["root"]) == (2, 2, 3, str(repo))
    again = json.loads(ok(repo, "sync", "--format", "json"))
    assert (again["hashed"], again["written"], again["renamed"]) == (0, 0, 0)
    assert ok(repo, "sync", "-q") == ""
    assert "7 anchors under" in ok(repo, "sync")
    explained = json.loads(ok(repo, "context", "t-next", "--no-memory", "--explain", "--format", "json"))
    retired = [e for e in explained["explain"] if e["reason"].startswith("retired: file deleted: src/legacy.py")]
    assert retired and all(e["fate"] == "dropped" for e in retired)
    assert LEGACY not in explained["markdown"] and MARK in explained["markdown"]


def test_sync_without_a_root_is_one_clear_error(tmp_path: Path) -> None:
    proc = cli("sync", "--store", str(tmp_path / "graph.db"), cwd=tmp_path)
    lines = proc.stderr.decode().strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("ctxgraph: error: no project root")


def test_the_hook_runs_sync_on_the_hooks_store(repo: Path) -> None:
    proc = subprocess.run([str(SCRIPT), "hooks", "install", "--no-embeddings"], cwd=repo, capture_output=True,
                          text=True, env=clean_env(), timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    hook = repo / ".git" / "hooks" / "post-commit"
    try:
        lines = hook.read_text(encoding="utf-8").splitlines()
        assert MARKER in lines
        line = next(x for x in lines if " sync --root " in x)
        argv = shlex.split(line.removeprefix("nohup ").removesuffix(" >/dev/null 2>&1 &"))
        assert argv[argv.index("--root") + 1] == str(repo)
        assert argv[argv.index("--store") + 1] == str(repo / ".ctxgraph" / "graph.db")
        ran = subprocess.run(argv, cwd=repo, capture_output=True, text=True, env=clean_env(), timeout=120,
                             check=False)
        assert ran.returncode == 0 and ran.stdout == "", ran.stderr
    finally:
        hook.unlink()


def test_mcp_sync_tool_and_markers_in_compute_context(repo: Path, tmp_path: Path) -> None:
    with (tmp_path / "stdio.log").open("w", encoding="utf-8") as errlog:
        client = stdio(["--store", str(repo / ".ctxgraph" / "graph.db")], cwd=repo, env=clean_env(),
                       errlog=errlog)
        try:
            report = client.ok("sync")["report"]
            assert (report["anchors"], report["changed"], report["deleted"]) == (7, 2, 2)
            result = client.call("compute_context", {"task_id": "t-next"})
            text = result.content[0].text  # type: ignore[union-attr]
            assert MARK in text and LEGACY not in text and "src/auth/tokens.py" in text
        finally:
            client.close()
