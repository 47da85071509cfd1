"""``ctxgraph index`` says what it left out in plain words — an empty file,
a handoff file (which ``ingest handoff`` reads; nothing claims it was
ingested) — and an unchanged tree indexed again reports 0 (re)indexed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HANDOFF = "task_id: t-1\nsummary: Added the login route\nfiles_created: [{path: src/login.py, purpose: route}]\n"


def index(root: Path, store: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    done = subprocess.run([sys.executable, "-m", "ctxgraph", "index", str(root), "--no-embeddings", "--store",
                           str(store)], capture_output=True, text=True, timeout=300, check=False,
                          env={**env, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_index_names_what_it_skips_and_reindexes_nothing_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "login.py").write_text("def login():\n    return True\n", encoding="utf-8")
    (root / "src" / "__init__.py").write_text("", encoding="utf-8")
    (root / "handoff-t-1.yaml").write_text(HANDOFF, encoding="utf-8")
    first = index(root, tmp_path / "graph.db")
    assert "1 (re)indexed" in first and "skipped: 1 empty, 1 handoff file (for ctxgraph ingest handoff)" in first
    assert "knowledge is in the graph" not in first
    again = index(root, tmp_path / "graph.db")
    assert "0 (re)indexed, 1 unchanged" in again, again
