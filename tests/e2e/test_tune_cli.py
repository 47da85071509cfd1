"""`ctxgraph tune`, run for real: it reports, writes the weights into the
settings file (keeping what was there) and contexts then rank with them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from _tune_history import teach

from ctxgraph.compute.ranking import DEFAULT_WEIGHTS
from ctxgraph.service import ContextService

SETTINGS = """\
# my project's settings
strategy = "recent"   # newest first

[tier_budgets]
easy = 3000
"""
#: Weights trusting the context map's own score, which the taught history makes misleading.
MISLED = """
[ranking.full_text]
votes = 0.1
text = 0.1
seed = 5.0
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    env["CTXGRAPH_TASK_VECTORS"] = "0"
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=300)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tune")
    with ContextService.open(root / ".ctxgraph" / "graph.db") as svc:
        svc.task_vectors = False
        teach(svc)
        svc.add_task({"id": "next", "name": "Change the parser widget", "objective": "Adjust parser handling"})
    return root


def test_tune_writes_the_weights_and_keeps_the_settings(project: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "ctxgraph.toml").write_text(SETTINGS + MISLED, encoding="utf-8")
    store = str(project / ".ctxgraph" / "graph.db")
    dry = run("tune", "--store", store, "--dry-run", "--format", "json", cwd=work)
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert report["written"] is False and report["tasks"] == 161 - 1
    assert (work / "ctxgraph.toml").read_text(encoding="utf-8") == SETTINGS + MISLED

    done = run("tune", "--store", store, "--seed", "3", cwd=work)
    assert done.returncode == 0, done.stderr
    assert "full_text: 80 queries (64 fitted, 16 newest validated)" in done.stdout
    assert f"wrote [ranking] to {work / 'ctxgraph.toml'}" in done.stdout
    text = (work / "ctxgraph.toml").read_text(encoding="utf-8")
    assert text.startswith(SETTINGS)  # the user's lines and comments stay as they were
    written = tomllib.loads(text)
    assert written["strategy"] == "recent" and written["tier_budgets"] == {"easy": 3000}
    assert written["ranking"]["dense"] == DEFAULT_WEIGHTS.dense.model_dump()
    assert written["ranking"]["full_text"] == report["weights"]["full_text"]
    assert written["ranking"]["full_text"]["seed"] < 5.0

    # contexts read the tuned weights from the settings file
    ctx = run("context", "next", "--store", store, "--format", "json", "--debug", cwd=work)
    assert ctx.returncode == 0, ctx.stderr
    refs = json.loads(ctx.stdout)["code_references"]
    assert [r["file"] for r in refs[:5]] == [f"src/parser/{k}.py" for k in range(5)]

    # the same history and seed give the same file
    again = run("tune", "--store", store, "--seed", "3", cwd=work)
    assert again.returncode == 0, again.stderr
    assert "nothing written" in again.stdout  # the written weights are the current ones now
    assert (work / "ctxgraph.toml").read_text(encoding="utf-8") == text


def test_tune_refuses_a_broken_settings_file(project: Path, tmp_path: Path) -> None:
    bad = tmp_path / "ctxgraph.toml"
    bad.write_text("strategy = [unclosed\n", encoding="utf-8")
    done = run("tune", "--store", str(project / ".ctxgraph" / "graph.db"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"ctxgraph: error: {bad}: not valid TOML")
    assert len(done.stderr.strip().splitlines()) == 1
    assert bad.read_text(encoding="utf-8") == "strategy = [unclosed\n"


def test_tune_on_a_missing_store_fails_cleanly(tmp_path: Path) -> None:
    done = run("tune", "--store", str(tmp_path / "nothing.db"), cwd=tmp_path)
    assert done.returncode == 5, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "nothing.db" in done.stderr
    assert not (tmp_path / "nothing.db").exists() and not (tmp_path / "ctxgraph.toml").exists()
