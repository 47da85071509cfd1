"""`ctxgraph conflicts`, run for real: a planted conflict listed (text and JSON),
resolved by a handoff that supersedes one side, and a bad `supersedes` refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HS256 = "Sign JWT access tokens with HS256 and one shared secret"
RS256 = "Sign JWT access tokens with RS256 and per-service keys"


def run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=120, input=stdin)


def ok(*args: str, cwd: Path, stdin: str | None = None) -> str:
    proc = run(*args, cwd=cwd, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def handoff(task: str, decision: str, supersedes: str = "") -> str:
    extra = f", supersedes: [{supersedes!r}]" if supersedes else ""
    return (f"task_id: {task}\nsummary: {task} done\n"
            f"decisions: [{{decision: {decision!r}, applies_to: [jwt, signing]{extra}}}]\n")


def test_conflicts_lists_a_planted_conflict_until_one_side_is_superseded(tmp_path: Path) -> None:
    assert "Jaccard" in ok("conflicts", "--help", cwd=tmp_path)
    for task in ("t-sign", "t-rotate", "t-review"):
        ok("task", "add", task, "--name", f"JWT signing work {task}", cwd=tmp_path)
    ok("ingest", "handoff", "-", cwd=tmp_path, stdin=handoff("t-sign", HS256))
    assert ok("conflicts", cwd=tmp_path) == "no likely conflicts among the decisions in force\n"
    ok("ingest", "handoff", "-", cwd=tmp_path, stdin=handoff("t-rotate", RS256))
    text = ok("conflicts", cwd=tmp_path)
    assert text.startswith("1 likely conflict among the decisions in force:\n")
    assert HS256 in text and RS256 in text and "jwt" in text
    (found,) = json.loads(ok("conflicts", "--format", "json", cwd=tmp_path))
    assert {found["first"], found["second"]} == {HS256, RS256}
    assert {"jwt", "signing"} <= set(found["shared_tags"]) and found["tag_similarity"] >= 0.4

    bad = run("ingest", "handoff", "-", cwd=tmp_path, stdin=handoff("t-review", "Sign with EdDSA", "Sign with magic"))
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "ctxgraph: error: <stdin>: invalid document: decisions[0].supersedes[0]: no decision 'Sign with magic' "
        "is stored or in this batch (name one by its id, decision:…, or by its exact text)"]
    ok("ingest", "handoff", "-", cwd=tmp_path, stdin=handoff("t-review", "Sign JWT with EdDSA", HS256))
    assert json.loads(ok("conflicts", "--format", "json", cwd=tmp_path)) == []
    shown = json.loads(ok("knowledge", "show", found["first_id"] if found["first"] == HS256 else found["second_id"],
                          "--format", "json", cwd=tmp_path))
    assert shown["status"] == "superseded" and shown["valid_until"]
