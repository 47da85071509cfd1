"""What recording a delivered context adds to a context (``ctxgraph.outcomes``).

On the benchmark suite's graphs (``benchmarks/generator.py``, loaded as
``python -m benchmarks`` loads them), with the deliveries log filled to its cap
first (``--prefill``, default 10,000: every write then also trims the oldest),
``ContextService.compute(task_id)`` is timed over the dataset's query tasks:

- ``off``: ``record_outcomes = False`` (nothing recorded);
- ``on``: recorded as every context is — built and written by the background
  writer, whose work competes with the next contexts for the two cores;

in alternating blocks of ``--block`` calls (off, on, off, on, ...) so that
drift hits both alike, ``--calls`` timed calls each after ``--warmup``.
``added`` is on minus off, per percentile. Also timed, apart:

- ``enqueue``: what ``compute`` itself spends recording (``record_delivery``:
  the context put on the writer's queue);
- ``build``: turning one context into its record (``outcomes.scoring.delivery``,
  on the writer's thread);
- ``write``: one delivery written synchronously (``record_deliveries``, the
  log at its cap) — what recording would add without the background writer.

Neo4j runs with ``--stores neo4j`` and ``NEO4J_URI``; its database is EMPTIED.

    python -m benchmarks.outcomes [--sizes 1000,10000] [--stores local,neo4j] [--calls 200] [--json]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.generator import generate
from benchmarks.suite import load, log, open_service, percentile, reset, stores_of, timing_parser, timing_rows
from ctxgraph.outcomes.delivery_log import new_delivery_id, now_iso
from ctxgraph.outcomes.records import DEFAULT_KEEP, DeliveredItem, Delivery
from ctxgraph.outcomes.scoring import delivery
from ctxgraph.service import ContextService


def stats(times: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(times, 50), 2), "p95": round(percentile(times, 95), 2)}


def prefill(svc: ContextService, n: int) -> None:
    """``n`` deliveries of 30 items, older than any timed one."""
    items = tuple(DeliveredItem(section="code_references", id=f"src/file{i}.py", rank=i + 1, tokens=12)
                  for i in range(30))
    for start in range(0, n, 1000):
        svc.store.record_deliveries([
            Delivery(id=f"delivery:prefill{i:06d}", task_id=f"task-{i % 500}", at=f"2000-01-01T00:00:00.{i:06d}Z",
                     tokens=900, sections={"code_references": 400}, items=items, files=tuple(x.id for x in items))
            for i in range(start, min(n, start + 1000))], DEFAULT_KEEP)


def run(store: str, nodes: int, seed: int, warmup: int, calls: int, block: int, fill: int) -> dict[str, Any]:
    def say(message: str) -> None:
        log(f"[outcomes {store} {nodes:,}] {message}")

    ds = generate(nodes, seed)
    tasks = list(ds.queries)
    row: dict[str, Any] = {"store": store, "nodes": nodes, "queries": len(tasks), "calls": calls, "prefill": fill}
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-outcomes-") as tmp:
        svc = open_service(store, Path(tmp))
        try:
            reset(svc, store, say)
            load(svc, ds, len(ds.handoffs), say)
            prefill(svc, fill)
            times: dict[bool, list[float]] = {False: [], True: []}
            n = 0
            say(f"{warmup} warm-up calls, then {calls} timed calls per mode in blocks of {block}")
            for _ in range(warmup):
                svc.compute(tasks[n % len(tasks)])
                n += 1
            while min(len(t) for t in times.values()) < calls:
                for mode in (False, True):
                    svc.record_outcomes = mode
                    for _ in range(block):
                        t0 = time.perf_counter()
                        svc.compute(tasks[n % len(tasks)])
                        times[mode].append((time.perf_counter() - t0) * 1000)
                        n += 1
            svc.flush_outcomes()
            off, on = stats(times[False][:calls]), stats(times[True][:calls])
            row.update(off=off, on=on, added={k: round(on[k] - off[k], 2) for k in on})
            contexts = [svc.compute(t, record=False) for t in tasks]
            svc.record_outcomes = True
            enqueue = []
            for i in range(calls):
                t0 = time.perf_counter()
                svc.record_delivery(contexts[i % len(contexts)])
                enqueue.append((time.perf_counter() - t0) * 1000)
                if i % 50 == 49:
                    svc.flush_outcomes()
            svc.flush_outcomes()
            build, write = [], []
            for i in range(calls):
                t0 = time.perf_counter()
                record = delivery(contexts[i % len(contexts)], delivery_id=new_delivery_id(), at=now_iso())
                build.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                svc.store.record_deliveries([record], DEFAULT_KEEP)
                write.append((time.perf_counter() - t0) * 1000)
            row.update(enqueue={k: round(percentile(enqueue, p), 3) for k, p in (("p50", 50), ("p95", 95))},
                       build=stats(build), write=stats(write), kept=len(svc.store.deliveries()),
                       record_bytes=round(sum(len(d.record or "") for d in svc.store.deliveries(last=50)) / 50))
            if store == "neo4j":
                reset(svc, store, say)
        finally:
            svc.close()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = timing_parser("python -m benchmarks.outcomes", __doc__, block=True)
    parser.add_argument("--prefill", type=int, default=DEFAULT_KEEP,
                        help=f"deliveries stored first (default {DEFAULT_KEEP:,}, the cap)")
    args = parser.parse_args(argv)
    rows = timing_rows(args, stores_of(parser, args), lambda store, size: run(
        store, size, args.seed, args.warmup, args.calls, args.block, args.prefill))
    if rows is None:
        return 0
    print("| store | nodes | off p50 / p95 ms | on p50 / p95 ms | added p50 / p95 ms | enqueue p50 / p95 ms "
          "| build p50 / p95 ms | sync write p50 / p95 ms | record bytes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['store']} | {r['nodes']:,} | {r['off']['p50']} / {r['off']['p95']} | {r['on']['p50']} / "
              f"{r['on']['p95']} | {r['added']['p50']:+} / {r['added']['p95']:+} | {r['enqueue']['p50']} / "
              f"{r['enqueue']['p95']} | {r['build']['p50']} / "
              f"{r['build']['p95']} | {r['write']['p50']} / {r['write']['p95']} | {r['record_bytes']:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
