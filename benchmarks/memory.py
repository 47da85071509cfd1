"""Memory soak: many ``compute`` calls in one long-lived ``ContextService``.

Loads a synthetic project (``benchmarks.generator``), then computes contexts
in one process — the stored query tasks in turn and, every tenth call, an
unsaved task with a new text (so the signal extractor and its result cache
work too) — and samples the resident set size as it goes. The first
``--warmup`` calls fill the caches (spaCy's vocabulary and string store, the
extractor's bounded result cache, the embedded store's corpus cache, the
driver's connection pool); growth is measured after them. With
``--tracemalloc`` the Python allocations are traced too (slower) and the
largest growing allocation sites are listed.

    python -m benchmarks.memory [--nodes 1000] [--calls 10000] [--store local|neo4j] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from benchmarks.generator import generate
from benchmarks.suite import load, log, open_service, reset

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_mb() -> float:
    """The current resident set size of this process, in MiB (Linux)."""
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * _PAGE / (1024 * 1024)


def slope_per_1000(samples: list[tuple[int, float]]) -> float:
    """Least-squares growth of RSS in MiB per 1,000 calls."""
    if len(samples) < 2:
        return 0.0
    xs = [x for x, _ in samples]
    ys = [y for _, y in samples]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return 0.0 if den == 0 else 1000 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den


def soak(store: str, nodes: int, calls: int, warmup: int, every: int, trace: bool, seed: int) -> dict[str, Any]:
    def say(message: str) -> None:
        log(f"[memory {store} {nodes:,}] {message}")

    ds = generate(nodes, seed)
    with tempfile.TemporaryDirectory(prefix="ctxgraph-soak-") as tmp:
        svc = open_service(store, Path(tmp))
        try:
            reset(svc, store, say)
            load(svc, ds, len(ds.handoffs), say)
            tasks = [svc.get_task(q) for q in ds.queries]
            samples: list[tuple[int, float]] = []
            snapshot = None
            started = time.perf_counter()
            for i in range(1, calls + 1):
                task = tasks[i % len(tasks)]
                if i % 10 == 0:  # an unsaved task with a new text: fresh signals
                    task = task.model_copy(
                        update={"id": f"adhoc-{i}", "signals": None, "objective": f"{task.objective} Variant {i}."}
                    )
                svc.compute(task)
                if i == warmup:
                    gc.collect()
                    if trace:
                        tracemalloc.start(1)
                        snapshot = tracemalloc.take_snapshot()
                if i >= warmup and (i % every == 0 or i == calls):
                    gc.collect()
                    samples.append((i, rss_mb()))
                if i % 1000 == 0:
                    say(
                        f"{i:,} calls, rss {rss_mb():.1f} MiB, {(time.perf_counter() - started) / i * 1000:.1f} ms/call"
                    )
            elapsed = time.perf_counter() - started
            top: list[str] = []
            traced_growth = None
            if snapshot is not None:
                gc.collect()
                diff = tracemalloc.take_snapshot().compare_to(snapshot, "lineno")
                traced_growth = round(sum(d.size_diff for d in diff) / (1024 * 1024), 3)
                top = [str(d) for d in diff[:5]]
                tracemalloc.stop()
            if store == "neo4j":
                reset(svc, store, say)
        finally:
            svc.close()
    start_rss = samples[0][1] if samples else rss_mb()
    end_rss = samples[-1][1] if samples else rss_mb()
    return {
        "store": store,
        "nodes": nodes,
        "calls": calls,
        "warmup": warmup,
        "ms_per_call": round(elapsed / calls * 1000, 2),
        "rss_after_warmup_mb": round(start_rss, 1),
        "rss_end_mb": round(end_rss, 1),
        "rss_growth_mb": round(end_rss - start_rss, 2),
        "rss_slope_mb_per_1000_calls": round(slope_per_1000(samples), 3),
        "traced_growth_mb": traced_growth,
        "top_growth": top,
        "samples": [[i, round(mb, 2)] for i, mb in samples],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.memory", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=1_000, help="graph size (default 1000)")
    parser.add_argument("--calls", type=int, default=10_000, help="compute calls (default 10000)")
    parser.add_argument("--warmup", type=int, default=1_000, help="calls before growth is measured (default 1000)")
    parser.add_argument("--every", type=int, default=250, help="RSS sample interval in calls (default 250)")
    parser.add_argument("--store", default="local", choices=("local", "neo4j"))
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--tracemalloc", action="store_true", help="also trace Python allocations (slower)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.warmup >= args.calls:
        parser.error("--warmup must be smaller than --calls")
    result = soak(args.store, args.nodes, args.calls, args.warmup, args.every, args.tracemalloc, args.seed)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            if key != "samples":
                print(f"{key:>28}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
