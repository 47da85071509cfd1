"""``python -m benchmarks`` end to end on a tiny graph and the embedded store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.suite import REQUIRED_KEYS

ROOT = Path(__file__).resolve().parents[2]


def test_bench_cli_prints_one_json_object_with_the_issue_keys(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CTXGRAPH_BENCH_CACHE": str(tmp_path / "cache")}
    env.pop("NEO4J_URI", None)
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--sizes", "300", "--json", "--calls", "20", "--signal-calls", "5",
         "--out", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # exactly one JSON document on stdout
    assert json.loads(out.read_text(encoding="utf-8")) == result
    assert [(r["store"], r["nodes"]) for r in result["rows"]] == [("local", 300)]
    row = result["rows"][0]
    assert set(REQUIRED_KEYS) <= set(row)
    assert 0 < row["compute_p50_ms"] <= row["compute_p95_ms"] <= row["compute_p99_ms"]
    assert row["signals_p50_ms"] > 0 and row["ingest_handoffs_per_s"] > 0 and row["peak_rss_mb"] > 50
    assert 0.0 <= row["planted_recall"] <= 1.0 and row["tokens"] > 0
    assert row["accumulated_tokens"] > row["tokens"] and row["graph_nodes"] > 300
    assert "[local 300]" in done.stderr  # progress goes to stderr


def test_bench_cli_prints_a_table_without_json(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CTXGRAPH_BENCH_CACHE": str(tmp_path / "cache")}
    env.pop("NEO4J_URI", None)
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--sizes", "300", "--stores", "local", "--calls", "5",
         "--signal-calls", "3"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.strip().splitlines()
    assert header.split()[:3] == ["store", "nodes", "graph"] and row.split()[:2] == ["local", "300"]


def test_neighbours_benchmark_prints_its_figures(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NEO4J_URI", None)
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.neighbours", "--sizes", "60", "--queries", "5", "--texts", "4", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["embedding"]["embed_p50_ms"] > 0 and result["embedding"]["embed_tasks_per_s"] > 0
    (run,) = result["runs"]
    assert (run["store"], run["tasks"]) == ("local", 60)
    assert 0 < run["vector_p50_ms"] <= run["vector_p95_ms"] and 0 < run["plain_p50_ms"] <= run["plain_p95_ms"]
