"""`ctxgraph index` and `ctxgraph eval --index-source`, run as the user runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

TINY = Path(__file__).parents[1] / "data" / "eval_tiny"

LEXER = '''"""Turns source text into tokens."""


def tokenize(source: str) -> list[str]:
    """Split the source text into tokens; an empty source gives no tokens."""
    return source.split()
'''

PRINTER = '''"""Pretty-prints syntax trees."""

_CACHE: dict[int, str] = {}


def print_node(node: object) -> str:
    """Print one node, remembering the text in the cache."""
    key = id(node)
    if key not in _CACHE:
        _CACHE[key] = repr(node)
    return _CACHE[key]
'''


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, capture_output=True, text=True,
                          env={**inherited, **(env or {})}, timeout=600, check=False)


def project(root: Path) -> Path:
    (root / "src" / "tiny").mkdir(parents=True)
    (root / "src" / "tiny" / "lexer.py").write_text(LEXER, encoding="utf-8")
    (root / "src" / "tiny" / "printer.py").write_text(PRINTER, encoding="utf-8")
    (root / "src" / "tiny" / "logo.py").write_bytes(b"\0\1binary")
    return root


def test_index_reports_then_reindexes_nothing_and_lists_projects(tmp_path: Path) -> None:
    root = project(tmp_path / "tiny")
    store = ["--store", str(tmp_path / "graph.db")]
    first = run("index", str(root), *store, "--format", "json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["project"] == "tiny" and report["files"] == 2 and report["indexed"] == 2
    assert report["chunks"] >= 2 and report["complete"] and report["chunks_per_s"] > 0
    assert report["skipped"] == [{"path": "src/tiny/logo.py", "reason": "binary"}]

    again = run("index", str(root), *store, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "2 files, 0 (re)indexed, 2 unchanged, 0 removed, 0 chunks" in again.stdout
    assert "skipped: 1 binary" in again.stdout

    listed = run("index", "--list", *store, "--format", "json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    [entry] = json.loads(listed.stdout)
    assert entry["id"] == "tiny" and entry["embeddings"] and entry["indexed_at"]

    task = tmp_path / "task.yaml"
    task.write_text("id: t-1\nname: The tokenizer crashes on an empty source text\n", encoding="utf-8")
    ctx = run("context", "--task-file", str(task), *store, "--debug", cwd=tmp_path)
    assert ctx.returncode == 0, ctx.stderr
    assert "### Relevant Codebase Context\n1. `src/tiny/lexer.py` lines 1-6 (similarity " in ctx.stdout
    assert "`def tokenize(source: str) -> list[str]:`" in ctx.stdout
    assert "Associative memory: project tiny:" in ctx.stdout
    off = run("context", "--task-file", str(task), *store, "--no-memory", cwd=tmp_path)
    assert off.returncode == 0 and "Relevant Codebase Context" not in off.stdout
    other = run("context", "--task-file", str(task), *store, "--debug", "--project", "other", cwd=tmp_path)
    assert other.returncode == 0 and "project 'other' is not indexed" in other.stdout


def test_a_time_limited_run_keeps_its_part_and_a_second_run_finishes(tmp_path: Path) -> None:
    """--time-limit stops the run and keeps the files it finished; the next run does the rest.
    150 files of one full-length chunk each (the model's 256 word pieces): several seconds of embedding
    with the fastest runtime on this project's machines (one-line files took under a second with onnx);
    the limit is the smallest allowed (1 s) so that the test stays quick."""
    root = tmp_path / "many"
    root.mkdir()
    for n in range(150):
        text = " ".join(f"printer{n} tokenizer{i} layout" for i in range(40))
        (root / f"note_{n:03}.md").write_text(f"Note {n}: {text}\n", encoding="utf-8")
    store = ["--store", str(tmp_path / "graph.db")]
    # One BLAS thread: on a busy machine numpy's default threads make the model ~8x slower.
    env = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    first = run("index", str(root), *store, "--time-limit", "1", "--format", "json", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    part = json.loads(first.stdout)
    assert part["complete"] is False and part["indexed_at"] == ""
    assert 0 < part["indexed"] < 150 and part["files_left"] == 150 - part["indexed"]
    # The progress line (stderr is not a terminal here: plain lines, the last one at the end).
    lines = first.stderr.strip().splitlines()
    assert lines and lines[-1].startswith(f"indexing many: {part['indexed']}/150 files, ")
    assert "chunks/s" in lines[-1] and "Traceback" not in first.stderr

    rest = run("index", str(root), *store, "-q", "--format", "json", cwd=tmp_path, env=env)
    assert rest.returncode == 0, rest.stderr
    assert rest.stderr == ""  # -q: no progress line
    done = json.loads(rest.stdout)
    assert done["complete"] is True and done["indexed_at"] and done["files_left"] == 0
    assert done["unchanged"] == part["indexed"] and done["indexed"] == 150 - part["indexed"]
    listed = run("index", "--list", *store, "--format", "json", cwd=tmp_path)
    assert [(p["id"], p["files"], bool(p["indexed_at"])) for p in json.loads(listed.stdout)] == [("many", 150, True)]


def test_watch_runs_the_worker_and_no_embeddings_needs_no_model(tmp_path: Path) -> None:
    root = project(tmp_path / "tiny")
    done = run("index", str(root), "--store", str(tmp_path / "graph.db"), "--watch", "--interval", "0.2",
               "--max-runs", "2", "--no-embeddings", cwd=tmp_path,
               env={"CTXGRAPH_EMBEDDING_MODEL": str(tmp_path / "no-model")})
    assert done.returncode == 0, done.stderr
    runs = [line for line in done.stdout.splitlines() if line.startswith("project tiny")]
    assert len(runs) == 2 and "lightweight (no embeddings)" in runs[0]
    assert "2 (re)indexed" in runs[0] and "0 (re)indexed, 2 unchanged" in runs[1]


@pytest.mark.parametrize("args, message", [
    (["index", "nowhere"], "nowhere: no such folder"),
    (["index"], "PATH is required (or --list)"),
    (["index", ".", "--project", "../x"], "project id '../x'"),
])
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    done = run(*args, "--store", str(tmp_path / "graph.db"), cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


def test_missing_model_is_one_line(tmp_path: Path) -> None:
    root = project(tmp_path / "tiny")
    done = run("index", str(root), "--store", str(tmp_path / "graph.db"), cwd=tmp_path,
               env={"CTXGRAPH_EMBEDDING_MODEL": str(tmp_path / "no-model")})
    assert done.returncode == 2 and "no model.safetensors in" in done.stderr and "Traceback" not in done.stderr


def fake_wheel(folder: Path) -> None:
    """tiny-1.0: the package folder tiny/ with the two source files, as pip wants a wheel."""
    folder.mkdir()
    with zipfile.ZipFile(folder / "tiny-1.0-py3-none-any.whl", "w") as whl:
        whl.writestr("tiny/__init__.py", '"""Tiny: a toy language."""\n')
        whl.writestr("tiny/lexer.py", LEXER)
        whl.writestr("tiny/printer.py", PRINTER)
        whl.writestr("tiny-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n")
        whl.writestr("tiny-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                 "Tag: py3-none-any\n")
        whl.writestr("tiny-1.0.dist-info/RECORD", "")


def test_eval_indexes_the_named_release_by_default(tmp_path: Path) -> None:
    dataset = tmp_path / "tiny"
    shutil.copytree(TINY, dataset)
    meta = json.loads((dataset / "meta.json").read_text(encoding="utf-8"))
    meta.update({"pypi": "tiny==1.0", "package_dir": "tiny/"})
    (dataset / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    fake_wheel(tmp_path / "wheels")
    env = {"CTXGRAPH_EVAL_FIND_LINKS": str(tmp_path / "wheels"), "CTXGRAPH_CACHE_DIR": str(tmp_path / "cache")}
    # meta.json names the release: its source is indexed with no flag, and the
    # ctxgraph row is the default a user gets (the memory on).
    done = run("eval", str(dataset), "--format", "json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert list(report["systems"]) == ["ctxgraph", "ctxgraph-no-memory", "ctxgraph+tuned", "bm25", "seed", "all"]
    assert report["index"]["files"] == 3 and report["index"]["project"] == "tiny"
    tree = tmp_path / "cache" / "eval-src" / "tiny-1.0"
    assert (tree / "src" / "tiny" / "lexer.py").read_text(encoding="utf-8") == LEXER
    assert (tmp_path / "cache" / "embeddings" / "all-MiniLM-L6-v2.npz").is_file()
    memory, plain = report["systems"]["ctxgraph"], report["systems"]["ctxgraph-no-memory"]
    assert memory["recall_at_5"] >= plain["recall_at_5"]

    # The same run again reuses the unpacked source and the cached vectors.
    shutil.rmtree(tmp_path / "wheels")
    again = run("eval", str(dataset), "--index-source", "--format", "json", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    repeat = json.loads(again.stdout)["systems"]
    figures = ("recall_at_5", "recall_at_10", "recall", "tokens")
    assert {n: [m[f] for f in figures] for n, m in repeat.items()} == \
        {n: [m[f] for f in figures] for n, m in report["systems"].items()}


def test_eval_index_source_needs_a_release(tmp_path: Path) -> None:
    done = run("eval", str(TINY), "--index-source", cwd=tmp_path)
    assert done.returncode == 2 and "meta.json needs \"pypi\"" in done.stderr
    done = run("eval", str(TINY), "--no-embeddings", cwd=tmp_path)
    assert done.returncode == 2 and "--no-embeddings applies to the source's index only" in done.stderr
