"""What code-anchored freshness costs (issue 32; docs/freshness.md).

1. ``sync``: a generated tree of ``--files`` files (default 10,000, about 1 KB
   each, 100 folders), every one anchored once (``make_anchor``, written with
   ``write_anchors``: the anchors an ingestion of handoffs naming them would
   leave), then ``ContextService.sync()`` timed ``--runs`` times with nothing
   changed (stat only), then once after 1 % of the files were edited (those
   read and hashed) and once after 1 % were deleted (git is not asked: the
   tree is not a repository, so this is the no-git path).
2. The just-in-time check: the benchmark suite's graph of ``--nodes`` nodes
   (``benchmarks/generator.py``), with every file its handoffs name written
   under a root first, so that ingestion anchors them; ``compute(task_id)``
   over the dataset's query tasks with the check on and off, in alternating
   blocks of ``--block`` calls (drift hits both alike), ``--calls`` timed
   calls each after ``--warmup``. ``added`` is on minus off, per percentile.

Neo4j runs with ``--stores neo4j`` and ``NEO4J_URI``; its database is EMPTIED.

    python -m benchmarks.sync [--files 10000] [--nodes 1000] [--stores local,neo4j] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.generator import generate
from benchmarks.suite import load, log, open_service, percentile, reset
from ctxgraph.core.models import utcnow
from ctxgraph.service import ContextService
from ctxgraph.service.anchors import make_anchor
from ctxgraph.service.root import ProjectRoot


def stats(times: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(times, 50), 3), "p95": round(percentile(times, 95), 3)}


def make_tree(root: Path, files: int) -> list[str]:
    paths = []
    for i in range(files):
        rel = f"src/pkg{i % 100:02d}/module_{i:05d}.py"
        file = root / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("".join(f"def f{i}_{j}(x):\n    return x + {j}\n\n" for j in range(30)), encoding="utf-8")
        paths.append(rel)
    return paths


def sync_row(svc: ContextService, store: str, root: Path, files: int, runs: int) -> dict[str, Any]:
    def say(message: str) -> None:
        log(f"[sync {store} {files:,} files] {message}")

    paths = make_tree(root, files)
    svc.root = ProjectRoot(root, "--root")
    at = utcnow()
    t0 = time.perf_counter()
    for start in range(0, files, 2000):
        svc.store.write_anchors([a for a in (make_anchor(root, owner=f"task-{i // 10}", task_id=f"task-{i // 10}",
                                                          path=p, lines=None, commit=None, at=at)
                                             for i, p in enumerate(paths[start:start + 2000], start)) if a])
    anchor_s = time.perf_counter() - t0
    say(f"{files:,} files anchored in {anchor_s:.2f}s; {runs} syncs with nothing changed")
    unchanged = []
    for _ in range(runs):
        t0 = time.perf_counter()
        report = svc.sync()
        unchanged.append(time.perf_counter() - t0)
        assert report.hashed == 0 and report.written == 0, report
    edited = paths[::100]
    time.sleep(0.01)
    for p in edited:
        with (root / p).open("a", encoding="utf-8") as f:
            f.write("# edited\n")
    t0 = time.perf_counter()
    changed = svc.sync()
    changed_s = time.perf_counter() - t0
    for p in paths[50::100]:
        (root / p).unlink()
    t0 = time.perf_counter()
    deleted = svc.sync()
    deleted_s = time.perf_counter() - t0
    return {"store": store, "files": files, "anchors": report.anchors, "anchor_s": round(anchor_s, 3),
            "unchanged_s": {"p50": round(percentile(unchanged, 50), 3), "max": round(max(unchanged), 3)},
            "edited_1pct_s": round(changed_s, 3), "edited_hashed": changed.hashed,
            "deleted_1pct_s": round(deleted_s, 3), "deleted": deleted.newly_deleted}


def jit_row(store: str, nodes: int, seed: int, warmup: int, calls: int, block: int) -> dict[str, Any]:
    def say(message: str) -> None:
        log(f"[jit {store} {nodes:,}] {message}")

    ds = generate(nodes, seed)
    tasks = list(ds.queries)
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-sync-") as tmp:
        root = Path(tmp) / "root"
        named = {c["path"] for h in ds.handoffs for c in (*h.get("files_created", ()), *h.get("files_modified", ()))}
        named |= {d["file"] for h in ds.handoffs for d in h.get("dependencies_for_next", ())}
        named |= {p["location"] for h in ds.handoffs for p in h.get("patterns_discovered", ()) if p.get("location")}
        named |= {f["path"] for f in ds.files}  # the context map's files exist too
        for p in named:
            (root / p).parent.mkdir(parents=True, exist_ok=True)
            (root / p).write_text(f"# {p}\n", encoding="utf-8")
        svc = open_service(store, Path(tmp))
        try:
            reset(svc, store, say)
            svc.root = ProjectRoot(root, "--root")
            svc.record_outcomes = False
            load(svc, ds, len(ds.handoffs), say)
            anchors = len(svc.store.read_anchors())
            say(f"{anchors:,} anchors; {warmup} warm-up calls, then {calls} timed calls per mode in blocks of {block}")
            for n in range(warmup):
                svc.compute(tasks[n % len(tasks)], record=False)
            times: dict[bool, list[float]] = {False: [], True: []}
            checked = 0
            n = 0
            while min(len(t) for t in times.values()) < calls:
                for mode in (False, True):
                    svc.check_anchors = mode
                    for _ in range(block):
                        t0 = time.perf_counter()
                        svc.compute(tasks[n % len(tasks)], record=False)
                        times[mode].append((time.perf_counter() - t0) * 1000)
                        n += 1
            # the check alone (its read, stats and Freshness input), on each task's gathered candidates
            svc.check_anchors = True
            gathered = [svc.gather(task, task.signals) for task in (svc.get_task(t) for t in tasks)]
            alone = []
            for i in range(calls):
                t0 = time.perf_counter()
                fresh = svc._fresh(gathered[i % len(gathered)])
                alone.append((time.perf_counter() - t0) * 1000)
                checked += len(fresh.anchors) if i < len(gathered) else 0
            off, on = stats(times[False][:calls]), stats(times[True][:calls])
            if store == "neo4j":
                reset(svc, store, say)
        finally:
            svc.close()
    per_context = round(checked / min(calls, len(tasks)), 1)
    return {"store": store, "nodes": nodes, "anchors": anchors, "anchors_per_context": per_context,
            "calls": calls, "off": off, "on": on, "added": {k: round(on[k] - off[k], 3) for k in on},
            "check": stats(alone)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sync", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000, help="files in the sync tree (default 10,000)")
    parser.add_argument("--runs", type=int, default=5, help="syncs with nothing changed (default 5)")
    parser.add_argument("--nodes", default="1000", help="graph sizes of the just-in-time rows (default 1000)")
    parser.add_argument("--stores", default="local", help="local and/or neo4j, comma-separated (default local)")
    parser.add_argument("--calls", type=int, default=300, help="timed contexts per mode (default 300)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed contexts first (default 30)")
    parser.add_argument("--block", type=int, default=10, help="contexts per block of one mode (default 10)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    if "neo4j" in stores and not os.environ.get("NEO4J_URI"):
        parser.error("--stores neo4j needs NEO4J_URI (and NEO4J_PASSWORD or NEO4J_PASSWORD_FILE)")
    syncs = []
    for store in stores:
        with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-sync-") as tmp:
            svc = open_service(store, Path(tmp))
            try:
                reset(svc, store, log)
                syncs.append(sync_row(svc, store, Path(tmp) / "tree", args.files, args.runs))
                if store == "neo4j":
                    reset(svc, store, log)
            finally:
                svc.close()
    jits = [jit_row(store, int(size), args.seed, args.warmup, args.calls, args.block)
            for size in args.nodes.split(",") if size.strip() for store in stores]
    if args.json:
        json.dump({"sync": syncs, "jit": jits}, sys.stdout, indent=2)
        print()
        return 0
    print("| store | files | sync, nothing changed (p50 / max s) | 1 % edited (s, files read) | 1 % deleted (s) |")
    print("|---|---|---|---|---|")
    for r in syncs:
        print(f"| {r['store']} | {r['files']:,} | {r['unchanged_s']['p50']} / {r['unchanged_s']['max']} | "
              f"{r['edited_1pct_s']} ({r['edited_hashed']}) | {r['deleted_1pct_s']} |")
    print()
    print("| store | nodes | anchors (per context) | check off p50 / p95 ms | on p50 / p95 ms | added p50 / p95 ms "
          "| the check alone p50 / p95 ms |")
    print("|---|---|---|---|---|---|---|")
    for r in jits:
        print(f"| {r['store']} | {r['nodes']:,} | {r['anchors']:,} ({r['anchors_per_context']}) | "
              f"{r['off']['p50']} / {r['off']['p95']} | {r['on']['p50']} / {r['on']['p95']} | "
              f"{r['added']['p50']:+} / {r['added']['p95']:+} | {r['check']['p50']} / {r['check']['p95']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
