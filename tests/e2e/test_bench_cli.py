"""``python -m benchmarks`` end to end on a tiny graph and the embedded store."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.suite import REQUIRED_KEYS

ROOT = Path(__file__).resolve().parents[2]


def test_a_quick_row_measures_both_configurations_and_their_ratio(tmp_path: Path) -> None:
    """A 1,000-node ``--quick`` row (fewer calls) with the real model: the graph's
    finished tasks get vectors (cached by text under the cache folder: a second
    run embeds nothing), and both configurations come out, the vectors row
    first with a finite p95 ratio to the full-text row."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CTXGRAPH_BENCH_CACHE": str(tmp_path / "cache")}
    env.pop("NEO4J_URI", None)
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--sizes", "1000", "--json", "--calls", "20",
         "--signal-calls", "5", "--seconds", "5", "--out", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # exactly one JSON document on stdout
    assert json.loads(out.read_text(encoding="utf-8")) == result
    assert [(r["store"], r["nodes"], r["vectors"]) for r in result["rows"]] == [
        ("local", 1000, True), ("local", 1000, False)]
    with_vectors, full_text = result["rows"]
    assert with_vectors["task_vectors"] > 100 and (tmp_path / "cache" / "vectors.npz").is_file()
    assert math.isfinite(with_vectors["p95_vs_full_text"]) and with_vectors["p95_vs_full_text"] > 0
    assert with_vectors["p95_vs_full_text"] == round(
        with_vectors["compute_p95_ms"] / full_text["compute_p95_ms"], 2)
    assert "p95_vs_full_text" not in full_text
    for row in result["rows"]:
        assert set(REQUIRED_KEYS) <= set(row)
        assert 0 < row["compute_p50_ms"] <= row["compute_p95_ms"] <= row["compute_p99_ms"]
        assert 0 < row["compute_inline_p50_ms"] <= row["compute_inline_p95_ms"]
        assert row["signals_p50_ms"] > 0 and row["ingest_handoffs_per_s"] > 0 and row["peak_rss_mb"] > 50
        assert 0.0 <= row["planted_recall"] <= 1.0 and row["tokens"] > 0
        assert row["accumulated_tokens"] > row["tokens"] and row["graph_nodes"] > 1000
    assert "[local 1,000]" in done.stderr and "p95 with vectors / full-text p95" in done.stderr


def test_bench_cli_prints_a_table_without_json(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CTXGRAPH_BENCH_CACHE": str(tmp_path / "cache")}
    env.pop("NEO4J_URI", None)
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--sizes", "300", "--stores", "local", "--calls", "5",
         "--signal-calls", "3", "--full-text"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.strip().splitlines()  # --full-text: one configuration, nothing embedded
    assert header.split()[:4] == ["store", "nodes", "vectors", "graph"] and row.split()[:3] == ["local", "300", "no"]
    assert "embedding" not in done.stderr and not (tmp_path / "cache" / "vectors.npz").exists()


def test_a_kept_graph_is_measured_again_without_loading(tmp_path: Path) -> None:
    """``--keep DIR``: the second run measures the graph the first one loaded and
    reports that load's figures; ``--warmup`` runs untimed contexts first.
    (``--full-text``: the kept graph is the same with vectors, which this does
    not need to embed.)"""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CTXGRAPH_BENCH_CACHE": str(tmp_path / "cache")}
    env.pop("NEO4J_URI", None)

    def run(*extra: str) -> tuple[dict[str, object], str]:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks", "--sizes", "300", "--stores", "local", "--json", "--calls", "5",
             "--signal-calls", "3", "--full-text", "--keep", "graphs", *extra],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["rows"][0], done.stderr

    first, log = run()
    assert "loaded in" in log and first["kept_graph"] is False and first["warmup_calls"] == 0
    kept = tmp_path / "graphs" / "local-300-seed42"
    assert (kept / "bench.db").is_file() and (kept / "loaded.json").is_file()
    again, log = run("--warmup", "1")
    assert "loaded in" not in log and "measuring the graph kept in" in log and again["kept_graph"] is True
    assert again["warmup_calls"] > 0 and "warm-up:" in log
    same = ("graph_nodes", "ingest_handoffs_per_s", "ingest_nodes_per_s", "bulk_load_s", "planted_recall", "tokens")
    assert {k: again[k] for k in same} == {k: first[k] for k in same}
    # a different load (another seed) is not the kept one: loaded, and kept beside it
    other, log = run("--seed", "7")
    assert "loaded in" in log and other["kept_graph"] is False and (tmp_path / "graphs" / "local-300-seed7").is_dir()
    # a store that no longer holds the graph the file describes is loaded again
    (kept / "bench.db").unlink()
    reloaded, log = run()
    assert "loaded in" in log and reloaded["kept_graph"] is False


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
