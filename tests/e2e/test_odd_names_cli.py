"""A file name that is not UTF-8 never stops a context or a sync (issue 40):
``caf%E9.py`` committed and then changed beside an anchored file deleted,
so that git's rename detection runs and lists it, then an anchored file
renamed to such a name — ``ctxgraph context``, ``ctxgraph sync`` and MCP
``compute_context`` (for a stored task and for an unsaved one) all succeed,
and the new name is shown escaped (``%FF``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from _mcp_client import clean_env, cli, stdio

from tests._git_repo import LEGACY, TASKS, git, handoff, make_repo


def ok(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    proc = cli(*args, cwd=repo, stdin=stdin)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode()


def test_odd_file_names_break_no_context_and_no_sync(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit = make_repo(repo)
    ok(repo, "ingest", "tasks", "-", stdin=yaml.safe_dump({"tasks": TASKS}).encode())
    ok(repo, "ingest", "handoff", "-", "--no-embed", stdin=json.dumps(handoff(commit)).encode())
    odd = os.fsdecode(b"caf\xe9.py")
    (repo / odd).write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "an odd name")
    (repo / odd).write_text("x = 2\n")
    (repo / "src" / "legacy.py").unlink()

    assert LEGACY not in ok(repo, "context", "t-next", "--no-memory")
    assert json.loads(ok(repo, "sync", "--format", "json"))["newly_deleted"] == 2
    git(repo, "mv", "src/app.py", os.fsdecode(b"src/\xff-app.py"))
    git(repo, "commit", "-q", "-am", "rename")
    report = json.loads(ok(repo, "sync", "--format", "json"))
    assert (report["renamed"], report["hashed"]) == (1, 1)
    assert "`src/%FF-app.py`" in ok(repo, "context", "t-next", "--no-memory")
    with (tmp_path / "stdio.log").open("w", encoding="utf-8") as errlog:
        client = stdio(["--no-index", "--store", str(repo / ".ctxgraph" / "graph.db")], cwd=repo,
                       env=clean_env(), errlog=errlog)
        try:
            stored = client.ok("compute_context", {"task_id": "t-next"})
            assert "`src/%FF-app.py`" in stored["context"]["markdown"]
            unsaved = client.ok("compute_context", {"task": {
                "id": "t-new", "name": "JWT refresh", "objective": "Refresh JWT tokens", "depends_on": ["t-auth"]}})
            assert "`src/%FF-app.py`" in unsaved["context"]["markdown"]
        finally:
            client.close()
