"""Issue 42: a first index in the background, as ``ctxgraph mcp`` runs it, with contexts meanwhile.

    python -m benchmarks.background_index ROOT [--seconds 600] [--every 2] [--json]

Opens a fresh embedded store (a temporary folder) on ROOT's project, adds one
task, and starts the memory's keeper exactly as ``ctxgraph mcp`` does
(:func:`ctxgraph.service.keeper.keep_memory`: an index worker at a lower
priority on a store connection of its own, runs of at most 300 s, the root
watched). Meanwhile the main thread computes the task's context every
``--every`` seconds (a new, unsaved variant of it each time, so that nothing
is cached but what a server caches) and samples the process's resident set
size. It stops once the index is complete and ten more contexts have been
computed, or after ``--seconds``.

Reported: the first index's files, chunks and seconds (chunks/s); context
latency p50 / p95 / max while the index runs and once it is complete (the
acceptance: within 2x, no multi-second stall); RSS at the start, its
maximum, and at the end. The machine's load average is printed at the start
and the end (the figures move with it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.measure import percentile
from benchmarks.memory import rss_mb
from benchmarks.suite import log, machine

TASK = {"id": "probe", "name": "Fix the completion of attribute names after a call",
        "objective": "Completing `obj.attr` after a function call returns no suggestions; the completer "
                     "should evaluate the call's return type when it is safe."}


def figures(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)
    return {"n": len(samples), "p50_ms": round(percentile(ordered, 50), 1),
            "p95_ms": round(percentile(ordered, 95), 1), "max_ms": round(ordered[-1], 1)}


def run(root: Path, seconds: float, every: float) -> dict[str, Any]:
    from ctxgraph import ContextService, Task
    from ctxgraph.service.keeper import keep_memory

    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bg-index-") as tmp:
        store = Path(tmp) / "graph.db"

        def open_service() -> ContextService:
            return ContextService.open(store, root=root)

        svc = open_service()
        svc.add_task(TASK)
        rss = [rss_mb()]
        keeper = keep_memory(svc, open_service, say=lambda line: log(f"[bg index] {line}"))
        assert not isinstance(keeper, str), keeper
        during: list[float] = []
        after: list[float] = []
        started = time.monotonic()
        done_at: float | None = None
        n = 0
        try:
            while time.monotonic() - started < seconds and len(after) < 10:
                n += 1
                task = Task(id=f"probe-{n}", name=TASK["name"], objective=f"{TASK['objective']} (variant {n})")
                began = time.perf_counter()
                svc.compute(task)
                took = (time.perf_counter() - began) * 1000
                state = keeper.status()
                complete = bool((state.get("last_run") or {}).get("complete"))
                if complete and done_at is None:
                    done_at = time.monotonic() - started
                    log(f"[bg index] first index complete after {done_at:.0f} s ({state['files_indexed']} files)")
                (after if complete else during).append(took)
                rss.append(rss_mb())
                threading.Event().wait(every)
            status = keeper.status()
        finally:
            keeper.stop()
            svc.close()
    load.append(os.getloadavg()[0])
    return {"root": str(root), "seconds_to_complete": None if done_at is None else round(done_at, 1),
            "status": status, "contexts_during": figures(during), "contexts_after": figures(after),
            "rss_mb": {"start": round(rss[0]), "max": round(max(rss)), "end": round(rss[-1])},
            "load_average_start_end": [round(x, 2) for x in load], "machine": machine()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.background_index", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path, help="the project's root (a git work tree, say)")
    parser.add_argument("--seconds", type=float, default=600.0, help="stop after this long (default 600)")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between contexts (default 2)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.root.resolve(), args.seconds, args.every)
    print(json.dumps(result, indent=2, default=str) if args.json else
          f"{result['root']}: first index complete after {result['seconds_to_complete']} s; contexts during "
          f"{result['contexts_during']}, after {result['contexts_after']}; RSS MB {result['rss_mb']}; "
          f"load {result['load_average_start_end']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
