"""`ctxgraph outcomes` and `ctxgraph context --record`, run for real as subprocesses."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

AUTH = """\
task_id: t-auth
summary: Added JWT validation middleware
files_created: [{path: src/auth/jwt.ts, purpose: JWT verify helper}]
files_modified: [{path: src/app.ts, purpose: mount middleware}]
"""
REFRESH = """\
task_id: t-refresh
summary: Rotating refresh tokens
files_modified: [{path: src/auth/jwt.ts}, {path: src/other.ts}]
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=120)


def ok(*args: str, cwd: Path) -> str:
    proc = run(*args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_outcomes_reports_what_the_handoff_used(tmp_path: Path) -> None:
    ok("task", "add", "t-auth", "--name", "Add JWT validation middleware", "--objective", "Verify JWT tokens",
       cwd=tmp_path)
    ok("task", "add", "t-refresh", "--name", "Refresh tokens", "--objective", "Rotate the JWT on login",
       "--depends-on", "t-auth", cwd=tmp_path)
    (tmp_path / "auth.yaml").write_text(AUTH)
    (tmp_path / "refresh.yaml").write_text(REFRESH)
    ok("ingest", "handoff", "auth.yaml", "--no-embed", cwd=tmp_path)
    plain = ok("context", "t-refresh", cwd=tmp_path)  # read-only: not recorded
    assert json.loads(ok("outcomes", "--format", "json", cwd=tmp_path))["deliveries"] == 0
    assert ok("context", "t-refresh", "--record", cwd=tmp_path) == plain
    report = json.loads(ok("outcomes", "--format", "json", cwd=tmp_path))
    assert (report["deliveries"], report["scored"], report["unscored"]) == (1, 0, 1)
    assert "no scored deliveries yet" in ok("outcomes", cwd=tmp_path)

    ok("ingest", "handoff", "refresh.yaml", "--no-embed", cwd=tmp_path)
    report = json.loads(ok("outcomes", "--format", "json", cwd=tmp_path))
    # Named: src/auth/jwt.ts (prior work and code reference), src/app.ts; changed: jwt.ts, other.ts.
    assert (report["scored"], report["recall5"], report["recall10"], report["hit_rate5"]) == (1, 0.5, 0.5, 1.0)
    text = ok("outcomes", "--last", "5", cwd=tmp_path)
    assert "recall@5 0.50, recall@10 0.50" in text and "code_references" in text
    assert json.loads(ok("outcomes", "--since", "2999-01-01", "--format", "json", cwd=tmp_path))["deliveries"] == 0

    # A corrupt record: contexts, ingestion and the report still work.
    with sqlite3.connect(tmp_path / ".ctxgraph" / "graph.db") as conn:
        conn.execute("UPDATE deliveries SET record = 'garbage', score = 'garbage'")
    assert ok("context", "t-refresh", "--record", cwd=tmp_path) == ok("context", "t-refresh", cwd=tmp_path)
    ok("ingest", "handoff", "refresh.yaml", "--no-embed", cwd=tmp_path)
    report = json.loads(ok("outcomes", "--format", "json", cwd=tmp_path))
    assert (report["deliveries"], report["unreadable"], report["scored"]) == (2, 1, 1)


def test_outcomes_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    for args, code, text in [
        (("--since", "last week"), 2, "--since: 'last week' is not a date"),
        (("--last", "0"), 2, "'--last': 0 is not in the range"),
        (("--store", "missing.db"), 5, "no embedded store at missing.db"),
    ]:
        proc = run("outcomes", *args, cwd=tmp_path)
        assert proc.returncode == code, proc.stderr
        assert text in proc.stderr and "Traceback" not in proc.stderr
    help_text = ok("outcomes", "--help", cwd=tmp_path)
    assert "--since DATE" in help_text and "--last N" in help_text and "recall@5" in help_text
