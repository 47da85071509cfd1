"""``ctxgraph eval SET --source DIR``: a folder indexed as the project's source
instead of its fetched release (no download, no meta.json release needed);
the JSON report counts the indexed files unless ``--index-paths``; a bad
``--source`` is one clear error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

TINY = Path(__file__).parents[1] / "data" / "eval_tiny"
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    env = {**inherited, "PYTHONPATH": str(ROOT), "CTXGRAPH_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "ctxgraph", "eval", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=600, check=False)


def test_a_source_folder_is_indexed_instead_of_the_release(tmp_path: Path) -> None:
    dataset = tmp_path / "tiny"
    shutil.copytree(TINY, dataset)  # its meta.json names no release
    source = tmp_path / "checkout"
    (source / "src" / "tiny").mkdir(parents=True)
    (source / "src" / "tiny" / "lexer.py").write_text('"""Turns source text into tokens."""\n\n\ndef lex(text):\n'
                                                      "    return text.split()\n", encoding="utf-8")
    (source / "src" / "tiny" / "printer.py").write_text('"""Prints the syntax tree."""\n', encoding="utf-8")
    (source / "README.md").write_text("# tiny\n\nA toy language.\n", encoding="utf-8")
    done = run(str(dataset), "--source", str(source), "--no-embeddings", "--no-tune", "--format", "json",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert list(report["systems"])[:2] == ["ctxgraph", "ctxgraph-no-memory"]
    index = report["index"]
    assert (index["files"], index["indexed"], index["files_added"]) == (3, 3, 3) and "added" not in index
    listed = run(str(dataset), "--source", str(source), "--no-embeddings", "--no-tune", "--format", "json",
                 "--index-paths", cwd=tmp_path)
    assert sorted(json.loads(listed.stdout)["index"]["added"]) == ["README.md", "src/tiny/lexer.py",
                                                                   "src/tiny/printer.py"]


def test_a_bad_source_is_one_clear_error(tmp_path: Path) -> None:
    for args, message in (((str(tmp_path / "nowhere"),), "not a folder"),
                          ((str(tmp_path), "--no-index-source"), "not with --repo nor --no-index-source")):
        done = run(str(TINY), "--source", *args, cwd=tmp_path)
        assert done.returncode == 2 and "ctxgraph: error: " in done.stderr and message in done.stderr, done.stderr
        assert not (tmp_path / "cache").exists()
