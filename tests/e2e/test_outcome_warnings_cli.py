"""A delivery that cannot be recorded, or scored, is a warning with its cause
on stderr — never silence, never a failed command (issue 43): run for real,
on a store whose deliveries table refuses writes (SQLite triggers, as a
broken or foreign store would)."""

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
"""
REFRESH = """\
task_id: t-refresh
summary: Rotating refresh tokens
files_modified: [{path: src/auth/jwt.ts}]
"""
REFUSE = """
CREATE TRIGGER refuse_deliveries BEFORE INSERT ON deliveries BEGIN SELECT RAISE(ABORT, 'no new deliveries here'); END;
CREATE TRIGGER refuse_scores BEFORE UPDATE ON deliveries BEGIN SELECT RAISE(ABORT, 'no scores here'); END;
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=120)


def ok(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = run(*args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_a_delivery_not_recorded_or_not_scored_is_a_warning_with_its_cause(tmp_path: Path) -> None:
    ok("task", "add", "t-auth", "--name", "JWT middleware", "--objective", "Verify JWT tokens", cwd=tmp_path)
    ok("task", "add", "t-refresh", "--name", "Refresh tokens", "--objective", "Rotate the JWT on login",
       "--depends-on", "t-auth", cwd=tmp_path)
    (tmp_path / "auth.yaml").write_text(AUTH)
    (tmp_path / "refresh.yaml").write_text(REFRESH)
    ok("ingest", "handoff", "auth.yaml", "--no-embed", cwd=tmp_path)
    recorded = ok("context", "t-refresh", "--record", cwd=tmp_path)
    assert recorded.stderr == ""
    with sqlite3.connect(tmp_path / ".ctxgraph" / "graph.db") as conn:
        conn.executescript(REFUSE)

    refused = ok("context", "t-refresh", "--record", cwd=tmp_path)
    assert refused.stdout == recorded.stdout  # the context is the same, only its record is lost
    assert "1 delivery not recorded: " in refused.stderr and "no new deliveries here" in refused.stderr
    assert "Traceback" not in refused.stderr

    ingested = ok("ingest", "handoff", "refresh.yaml", "--no-embed", cwd=tmp_path)
    assert "deliveries of 1 handoff not scored: " in ingested.stderr and "no scores here" in ingested.stderr
    report = json.loads(ok("outcomes", "--format", "json", cwd=tmp_path).stdout)
    assert (report["deliveries"], report["scored"]) == (1, 0)  # the first one, unscored: as the warnings said
