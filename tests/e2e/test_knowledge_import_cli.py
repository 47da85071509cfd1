"""``ctxgraph knowledge import`` run for real on a git repository made here
(docs/knowledge-import.md; the same import on both stores:
tests/store/test_knowledge_import.py)."""

from __future__ import annotations

import json
from pathlib import Path

from _mcp_client import cli_error, cli_ok

from tests._git_repo import git

OLD = "# 1. Use Redis for sessions\n\n## Status\n\nSuperseded by [2. Use JWT](0002-use-jwt.md)\n"
NEW = "# 2. Use JWT for sessions\n\n## Status\n\nAccepted\n\n## Decision\n\nSessions are signed JWT tokens.\n"
CODE = "def login(user):\n    # WARNING: the session token is logged at debug level; never enable it in production\n" \
       "    return user\n"


def _repo(folder: Path) -> Path:
    (folder / "design" / "records").mkdir(parents=True)
    (folder / "design" / "records" / "0001-use-redis.md").write_text(OLD)
    (folder / "design" / "records" / "0002-use-jwt.md").write_text(NEW)
    (folder / "auth.py").write_text(CODE)
    (folder / "ctxgraph.toml").write_text('[knowledge]\nadr_dirs = ["design/records"]\n')
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "init")
    return folder


def test_import_reports_and_contexts_show_what_it_made(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "shop")
    out = cli_ok("knowledge", "import", cwd=repo)
    assert out.startswith("decisions: 2 from ADRs in design/records (1 superseded; 0 ADRs not in force); gotchas: 1 "
                          "from code notes (0 markers dropped as noise); files: 4 of 4 read; items: 3 written, "
                          "0 removed (")
    again = json.loads(cli_ok("knowledge", "import", "--format", "json", cwd=repo))
    assert {k: again[k] for k in ("read", "written", "decisions", "superseded", "gotchas", "adr_folders")} == {
        "read": 0, "written": 0, "decisions": 2, "superseded": 1, "gotchas": 1, "adr_folders": ["design/records"]}
    cli_ok("task", "add", "t-1", "--name", "Sign session tokens", "--objective",
           "Log in users with signed JWT session tokens", cwd=repo)
    md = cli_ok("context", "t-1", "--no-memory", cwd=repo)
    assert "- ADR 2: Use JWT for sessions — Sessions are signed JWT tokens. (design/records/0002-use-jwt.md) " \
           "(replaces: ADR 1: Use Redis for sessions)" in md
    assert "**high**: WARNING (auth.py:2, login): the session token is logged at debug level" in md
    assert cli_ok("knowledge", "import", "-q", cwd=repo) == ""


def test_switches_and_errors(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "shop")
    only = json.loads(cli_ok("knowledge", "import", "--no-notes", "--format", "json", cwd=repo))
    assert (only["decisions"], only["gotchas"]) == (2, 0)
    (repo / "auth.py").write_text(CODE.replace("WARNING", "NOTE"))
    both = json.loads(cli_ok("knowledge", "import", "--no-adrs", "--format", "json", cwd=repo))
    assert (both["decisions"], both["gotchas"], both["removed"], both["adr_folders"]) == (0, 1, 2, [])
    outside = tmp_path / "nowhere"
    outside.mkdir()
    code, line = cli_error("knowledge", "import", "--store", str(outside / "g.db"), cwd=outside)
    assert code == 1 and line == ("ctxgraph: error: no project root is known to import from: pass --root, or run "
                                  "it in a git work tree or beside a ctxgraph.toml")
    assert not (outside / "g.db").exists()
    (repo / "ctxgraph.toml").write_text("[knowledge]\nadr_dirs = \"design\"\n")
    code, line = cli_error("knowledge", "import", cwd=repo)
    assert code == 2 and "knowledge.adr_dirs must be a list of folders" in line
