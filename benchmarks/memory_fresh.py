"""What the just-in-time check of the memory's hits costs a context
(docs/freshness.md, "Memory snippets"; ``ctxgraph.memory.recall.check``).

The benchmark suite's graph of ``--nodes`` nodes (``benchmarks/generator.py``)
on the embedded store, with the synthetic memory of ``benchmarks/recall.py``
(``--chunks`` chunks, random unit vectors) whose files are written under a
root, each chunk's text at its lines, and each chunk holding its file's real
stat. ``ContextService.compute`` over the dataset's query tasks, memory on,
in three modes alternating in blocks of ``--block`` calls (drift hits them
alike), ``--calls`` timed calls each after ``--warmup``:

- ``off``: the hits as indexed, their files not looked at (``check_memory = False``);
- ``stat``: the check with every file as indexed (a ``stat`` per hit, nothing read);
- ``changed``: the check with every file's mtime moved (each hit's file read,
  hashed, its chunk placed again: ``relocate`` finds its text).

Then the check alone: ``check`` over each context's hits, per context, with
the files as indexed and with every file changed, beside the gate it
replaced (``before``: each hit's path resolved and its first 8 KB read for
the binary sniff, whatever its stat).

    python -m benchmarks.memory_fresh [--nodes 1000] [--chunks 4000] [--calls 300] [--json]
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
from benchmarks.recall import load as load_chunks
from benchmarks.recall import synthetic
from benchmarks.suite import default_tail, load, log, open_service, percentile, reset
from ctxgraph.memory.recall import check, recall
from ctxgraph.memory.scan import SNIFF_BYTES, inside, is_binary
from ctxgraph.signals import terms

MODES = ("off", "stat", "changed")


def gate_before(root: Path, path: str) -> str:
    """The gate before the just-in-time check (for comparison only)."""
    target = inside(root, path)
    if target is None:
        return "missing"
    with target.open("rb") as fh:
        return "binary" if is_binary(fh.read(SNIFF_BYTES)) else ""


def stats(times: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(times, 50), 3), "p95": round(percentile(times, 95), 3)}


def run(nodes: int, chunks: int, calls: int, warmup: int, block: int) -> dict[str, Any]:
    def say(message: str) -> None:
        log(f"[memory fresh {nodes:,}] {message}")

    ds = generate(nodes)
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-memfresh-") as tmp:
        root = Path(tmp) / "code"
        project, rows = synthetic(root, chunks, 7)
        lines: dict[str, dict[int, str]] = {}
        for c in rows:
            lines.setdefault(c.path, {})[c.start_line] = c.text
        indexed: dict[str, int] = {}
        for path, at in lines.items():  # each chunk's text at its lines, filler between
            body = [f"filler_{n} = {n}" for n in range(max(at) + 40)]
            for start, text in at.items():
                body[start - 1] = text
            (root / path).write_text("\n".join(body) + "\n", encoding="utf-8")
            indexed[path] = (root / path).stat().st_mtime_ns - 10**9
            os.utime(root / path, ns=(indexed[path], indexed[path]))
        rows = [c.model_copy(update={"file_mtime_ns": indexed[c.path],
                                     "file_size": (root / c.path).stat().st_size}) for c in rows]
        svc = open_service("local", Path(tmp))
        try:
            reset(svc, "local", say)
            svc.record_outcomes = False
            load(svc, ds, default_tail(ds), say)
            load_chunks(svc.store, project, rows)
            tasks = list(ds.queries)

            def mode(name: str) -> None:
                svc.check_memory = name != "off"
                shift = 10**9 if name == "changed" else 0
                for path, ns in indexed.items():
                    os.utime(root / path, ns=(ns + shift, ns + shift))

            say(f"{len(rows):,} chunks in {len(indexed):,} files; {warmup} warm-up calls, then {calls} timed "
                f"calls per mode in blocks of {block}")
            for n in range(warmup):
                svc.compute(tasks[n % len(tasks)], memory=True, record=False)
            times: dict[str, list[float]] = {m: [] for m in MODES}
            n = 0
            while min(len(t) for t in times.values()) < calls:
                for name in MODES:
                    mode(name)
                    for _ in range(block):
                        t0 = time.perf_counter()
                        ctx = svc.compute(tasks[n % len(tasks)], memory=True, record=False)
                        times[name].append((time.perf_counter() - t0) * 1000)
                        n += 1
                        if n == 1:
                            assert "project bench" in ctx.computed.memory, ctx.computed.memory
            # the check alone, on each task's hits (as the store returns them)
            alone: dict[str, list[float]] = {"stat": [], "changed": [], "before": []}
            hits_per_context = []
            projects = tuple(svc.store.memory_projects())
            for name in alone:
                mode("stat" if name == "before" else name)
                for i in range(calls):
                    task = svc.get_task(tasks[i % len(tasks)])
                    found, _ = recall(svc.store, projects, task.text, terms(task.text), project=None,
                                      stale_hours=1e9, check_files=False)
                    assert found is not None
                    hits = [*found.by_vector, *found.by_text]
                    t0 = time.perf_counter()
                    for h in hits:
                        if name == "before":
                            gate_before(root, h.chunk.path)
                        else:
                            check(root, h)
                    alone[name].append((time.perf_counter() - t0) * 1000)
                    hits_per_context.append(len(hits))
        finally:
            svc.close()
    out = {m: stats(times[m][:calls]) for m in MODES}
    return {"nodes": nodes, "chunks": len(rows), "files": len(indexed), "calls": calls, **out,
            "added_stat": {k: round(out["stat"][k] - out["off"][k], 3) for k in ("p50", "p95")},
            "ratio_stat_p50": round(out["stat"]["p50"] / out["off"]["p50"], 3),
            "ratio_changed_p50": round(out["changed"]["p50"] / out["off"]["p50"], 3),
            "hits_per_context": round(sum(hits_per_context) / len(hits_per_context), 1),
            "check_stat": stats(alone["stat"]), "check_changed": stats(alone["changed"]),
            "gate_before": stats(alone["before"]),
            "load": round(os.getloadavg()[0], 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_fresh", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000, help="graph size (default 1,000)")
    parser.add_argument("--chunks", type=int, default=4000, help="synthetic memory chunks (default 4,000)")
    parser.add_argument("--calls", type=int, default=300, help="timed contexts per mode (default 300)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed contexts first (default 30)")
    parser.add_argument("--block", type=int, default=10, help="contexts per block of one mode (default 10)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    row = run(args.nodes, args.chunks, args.calls, args.warmup, args.block)
    if args.json:
        json.dump(row, sys.stdout, indent=2)
        print()
        return 0
    print("| nodes | chunks (files) | hits per context | off p50 / p95 ms | stat p50 / p95 ms | changed p50 / p95 ms "
          "| stat / off p50 | the check alone, stat / changed / the gate before p50 ms |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {row['nodes']:,} | {row['chunks']:,} ({row['files']:,}) | {row['hits_per_context']} | "
          f"{row['off']['p50']} / {row['off']['p95']} | {row['stat']['p50']} / {row['stat']['p95']} | "
          f"{row['changed']['p50']} / {row['changed']['p95']} | {row['ratio_stat_p50']} | "
          f"{row['check_stat']['p50']} / {row['check_changed']['p50']} / {row['gate_before']['p50']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
