"""How the ``ctxgraph`` process ends (``ctxgraph.cli.run``): after the command it
exits without tearing the interpreter down, yet with all of its output, its
exit code, the atexit handlers run, and a thread still running waited for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

SCRIPT = """
import atexit, sys, threading, time
from pathlib import Path
marks = Path(sys.argv[1])
atexit.register(lambda: (marks / "atexit").write_text("ran"))
def late() -> None:
    time.sleep(0.5)
    (marks / "thread").write_text("finished")
if sys.argv[2] == "thread":
    threading.Thread(target=late).start()
sys.argv = ["ctxgraph", *sys.argv[3:]]
from ctxgraph.cli import run
run()
"""


def ctxgraph(tmp_path: Path, *args: str, thread: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), "thread" if thread else "-", *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_output_exit_codes_atexit_handlers_and_threads_survive_the_quick_exit(tmp_path: Path) -> None:
    tasks = [{"id": f"t-{n:04}", "name": f"Task number {n} " + "padding " * 20} for n in range(400)]
    (tmp_path / "tasks.yaml").write_text(yaml.safe_dump({"tasks": tasks}), encoding="utf-8")
    assert ctxgraph(tmp_path, "ingest", "tasks", "tasks.yaml").returncode == 0
    listed = ctxgraph(tmp_path, "task", "list", "--format", "json")  # ~100 KB through a pipe
    assert listed.returncode == 0, listed.stderr
    assert [t["id"] for t in json.loads(listed.stdout)] == [t["id"] for t in tasks]
    assert (tmp_path / "atexit").read_text() == "ran"

    missing = ctxgraph(tmp_path, "task", "show", "nope")
    assert missing.returncode != 0 and missing.stderr.startswith("ctxgraph: error: ") and missing.stdout == ""

    (tmp_path / "atexit").unlink()
    waited = ctxgraph(tmp_path, "--version", thread=True)  # a thread that is not a daemon: waited for
    assert waited.returncode == 0 and "version" in waited.stdout
    assert (tmp_path / "thread").read_text() == "finished" and (tmp_path / "atexit").read_text() == "ran"
