"""`ctxgraph history import` and `ctxgraph history explain`, run for real in a
git repository made here, on its embedded store (issue 44; the same on
Neo4j: tests/store/test_history_import.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _mcp_client import cli, cli_error, cli_ok

from tests._history_repo import git, project


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    project(tmp_path / "repo")
    return tmp_path / "repo"


def test_import_then_a_context_shows_the_prior_work(repo: Path) -> None:
    out = cli_ok("history", "import", cwd=repo)
    head = git(repo, "rev-parse", "HEAD")
    lines = out.splitlines()
    assert lines[0].startswith(f"history of HEAD ({head[:10]}) in {repo.resolve()}: full; 9 commits read, "
                               "6 imported, 0 unchanged, 0 updated, 0 joined to their task; 0 retired, 0 back; "
                               "6 given signals; 1 gotchas from reverts written, 0 removed (")
    assert lines[1:] == ["skipped: 1 no-files, 1 release, 1 revert", "files dropped: 2 lock"]
    (repo / "q.yaml").write_text("id: q-1\nname: Token expiry in the jwt parser\n"
                                 "objective: Fix the token expiry check\n")
    md = cli_ok("context", "--task-file", "q.yaml", "--no-memory", cwd=repo)
    assert "Fix token expiry check (#12)" in md and "src/auth/jwt.py" in md
    again = json.loads(cli_ok("history", "import", "--format", "json", cwd=repo))
    assert (again["mode"], again["read"], again["imported"], again["partial"]) == ("up to date", 0, 0, False)
    assert cli_ok("history", "import", "-q", cwd=repo) == ""


def test_an_amend_retires_and_explain_says_why(repo: Path) -> None:
    shas = git(repo, "log", "--format=%H", "--reverse").split()
    cli_ok("history", "import", "-q", cwd=repo)
    git(repo, "commit", "-q", "--amend", "-m", "Rename the token module")
    report = json.loads(cli_ok("history", "import", "--format", "json", cwd=repo))
    assert (report["retired"], report["imported"]) == (1, 1)
    assert cli_ok("history", "explain", shas[-1], cwd=repo).splitlines()[0] == (
        f"{shas[-1][:10]} was imported as c-{shas[-1][:10]}, now retired: it is not on HEAD any more")
    release = cli_ok("history", "explain", shas[3][:8], cwd=repo).splitlines()
    assert release[0] == f"{shas[3][:10]} is skipped by the rule 'release': a release or a version bump"
    assert release[1:] == ["  release version 1.0.0", "  A CHANGES.md", "  A src/auth/__init__.py"]
    found = json.loads(cli_ok("history", "explain", shas[5], "--format", "json", cwd=repo))
    assert (found["rule"], found["stored"], found["dropped"]) == (None, "completed",
                                                                  [{"path": "uv.lock", "rule": "lock"}])
    listed = cli_ok("task", "list", "--status", "retired", cwd=repo)
    assert f"c-{shas[-1][:10]}" in listed


def test_bad_input_is_one_line(repo: Path, tmp_path: Path) -> None:
    cli_ok("history", "import", "-q", cwd=repo)
    plain = tmp_path / "plain"
    plain.mkdir()
    code, line = cli_error("history", "import", "--root", str(plain), cwd=repo)
    assert (code, line) == (2, f"ctxgraph: error: {plain.resolve()}: not a git repository")
    code, line = cli_error("history", "import", "--branch", "nope", cwd=repo)
    assert (code, line) == (2, f"ctxgraph: error: 'nope' is not a commit in {repo.resolve()}")
    code, line = cli_error("history", "explain", "nope", cwd=repo)
    assert code == 2 and line.endswith("'nope' is not a commit in " + str(repo.resolve()))
    proc = cli("history", "import", "--max-commits", "0", cwd=repo)
    assert proc.returncode == 2 and b"--max-commits" in proc.stderr
    code, line = cli_error("history", "import", "--path", "../elsewhere", cwd=repo)
    assert (code, line) == (2, "ctxgraph: error: path: '../elsewhere' is not a folder inside the repository "
                               "(relative to its top)")


def test_a_folder_keeps_its_files_and_sync_keeps_the_folder(repo: Path) -> None:
    out = cli_ok("history", "import", "--path", "src/auth", cwd=repo).splitlines()
    assert out[1] == "folders kept: src/auth/"
    assert out[2] == "skipped: 1 no-files, 1 outside-paths, 1 release, 1 revert"
    assert out[3] == "files dropped: 2 lock, 2 outside-paths"
    (repo / "src" / "cache.py").write_text("C = 2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Cache again")
    synced = json.loads(cli_ok("sync", "--format", "json", cwd=repo))["past"]["history"]
    assert (synced["paths"], synced["read"], synced["imported"], synced["skipped"]) == (
        ["src/auth/"], 1, 0, {"outside-paths": 1})
