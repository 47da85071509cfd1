"""The memory's snippets are checked just in time (docs/freshness.md, "Memory
snippets"): in a git work tree, `ctxgraph init` indexes the code; after a
commit changes a file, the next `ctxgraph context` shows its lines as they
are now, with no re-index; after a commit deletes it, its snippet is gone.
The embedded store, the installed `ctxgraph` console script, the lightweight
index (full-text snippets; the snippet bar lowered in ctxgraph.toml so that
a two-file project's BM25 scores pass it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from _mcp_client import cli

from tests._git_repo import git

OLD = "def verify_jwt_token(token):\n    return decode_jwt(token, KEY)\n"
NEW = "def verify_jwt_token(token, leeway=30):\n    return decode_jwt(token, KEY, leeway=leeway)\n"
TASK = "Refresh expired JWT tokens with verify_jwt_token and decode_jwt"


def ok(repo: Path, *args: str) -> str:
    proc = cli(*args, cwd=repo)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


def context(repo: Path) -> tuple[list[dict[str, object]], str]:
    """(the context's snippets, its Markdown)."""
    out = json.loads(ok(repo, "context", "t-refresh", "--format", "json"))
    found, md = out["codebase_context"], out["markdown"]
    assert isinstance(found, list) and isinstance(md, str)
    return found, md


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("memfresh") / "repo"
    (folder / "src" / "auth").mkdir(parents=True)
    (folder / "src" / "auth" / "jwt.py").write_text(OLD, encoding="utf-8")
    (folder / "src" / "app.py").write_text("def main():\n    return serve()\n", encoding="utf-8")
    (folder / "ctxgraph.toml").write_text("memory_min_bm25 = 0.0\nmemory_snippet_bm25 = 0.0\n", encoding="utf-8")
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "init")
    ok(folder, "init", "--no-embeddings", "-q")
    ok(folder, "task", "add", "t-refresh", "--name", "Refresh tokens", "--objective", TASK)
    yield folder


def test_a_changed_file_shows_its_current_lines_and_a_deleted_one_no_snippet(repo: Path) -> None:
    (repo / "src" / "auth" / "jwt.py").write_text(NEW, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "leeway")
    after, md = context(repo)
    jwt = [s for s in after if s["path"] == "src/auth/jwt.py"]
    assert len(jwt) == 1 and jwt[0]["text"] == "def verify_jwt_token(token, leeway=30):"
    assert jwt[0]["stale"] == "⚠ file changed since it was indexed"
    assert "def verify_jwt_token(token, leeway=30):" in md and "def verify_jwt_token(token):" not in md

    git(repo, "rm", "-q", "src/auth/jwt.py")
    git(repo, "commit", "-q", "-m", "gone")
    gone, md = context(repo)
    assert all(s["path"] != "src/auth/jwt.py" for s in gone) and "verify_jwt_token" not in md
