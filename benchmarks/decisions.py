"""What decisions over time and concurrent work add to a context (docs/decisions.md).

On the benchmark suite's graph (``benchmarks/generator.py``, loaded as
``python -m benchmarks`` loads it), ``--in-progress`` extra tasks are put in
progress, each with a delivered context (so the read finds tasks and records),
and ``ContextService.compute(task_id)`` is timed over the dataset's query
tasks in alternating blocks of ``--block`` calls (each mode first in every other round):

- ``off``: the concurrent-work read not made (``CONCURRENT_TASKS_LIMIT = 0``:
  the context as before this feature, less the pure marker checks);
- ``on``: the read made (the other tasks in progress, the newest 20, with
  their latest delivery's record) and the warnings computed.

``added`` is on minus off per percentile, ``ratio`` on / off. Also timed apart:
the read alone (the store's ``gather`` with every other part empty, with and
without the concurrent work, alternating), and (pure, per context) the
likely-conflict check over the decisions shown and the concurrent-work
overlap, as ``compute.context.assemble`` runs them.
Nothing is recorded in the timed calls. Neo4j runs with ``--stores neo4j`` and
``NEO4J_URI``; its database is EMPTIED.

    python -m benchmarks.decisions [--sizes 1000] [--stores local,neo4j] [--calls 200] [--json]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.generator import generate
from benchmarks.suite import load, log, open_service, percentile, reset, stores_of, timing_parser, timing_rows
from ctxgraph.compute import limits as lim
from ctxgraph.compute.concurrent import concurrent_work, expected_files
from ctxgraph.compute.conflicts import likely_conflicts
from ctxgraph.core.models import GatherQuery


def stats(times: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(times, 50), 3), "p95": round(percentile(times, 95), 3)}


def run(store: str, nodes: int, seed: int, warmup: int, calls: int, block: int, busy: int) -> dict[str, Any]:
    def say(message: str) -> None:
        log(f"[decisions {store} {nodes:,}] {message}")

    ds = generate(nodes, seed)
    tasks = list(ds.queries)
    row: dict[str, Any] = {"store": store, "nodes": nodes, "queries": len(tasks), "calls": calls,
                           "in_progress": busy}
    limit = lim.CONCURRENT_TASKS_LIMIT
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-decisions-") as tmp:
        svc = open_service(store, Path(tmp))
        try:
            reset(svc, store, say)
            load(svc, ds, len(ds.handoffs), say)
            queried = svc.store.get_tasks(tasks)
            svc.add_tasks([{"id": f"busy-{i}", "name": f"In progress: {q.name}", "objective": q.objective,
                            "status": "in_progress"} for i, q in enumerate(queried[:busy])])
            for i in range(busy):
                svc.compute(f"busy-{i}")
            svc.flush_outcomes()
            svc.record_outcomes = False
            times: dict[bool, list[float]] = {False: [], True: []}
            n = 0
            say(f"{warmup} warm-up calls, then {calls} timed calls per mode in blocks of {block}")
            for _ in range(warmup):
                svc.compute(tasks[n % len(tasks)])
                n += 1
            try:
                rounds = 0
                while min(len(t) for t in times.values()) < calls:
                    rounds += 1
                    for mode in ((False, True) if rounds % 2 else (True, False)):  # neither always first
                        lim.CONCURRENT_TASKS_LIMIT = limit if mode else 0
                        for _ in range(block):
                            t0 = time.perf_counter()
                            svc.compute(tasks[n % len(tasks)])
                            times[mode].append((time.perf_counter() - t0) * 1000)
                            n += 1
            finally:
                lim.CONCURRENT_TASKS_LIMIT = limit
            off, on = stats(times[False][:calls]), stats(times[True][:calls])
            row.update(off=off, on=on, added={k: round(on[k] - off[k], 3) for k in on},
                       ratio={k: round(on[k] / off[k], 3) for k in on})
            contexts = [svc.compute(t) for t in tasks]
            row["warned"] = sum(1 for c in contexts if c.concurrent_work)
            gathered = [svc.gather(t, t.signals or svc.signals_for(t)) for t in svc.store.get_tasks(tasks)]
            pure = []
            for i in range(calls):
                ctx, cand = contexts[i % len(contexts)], gathered[i % len(gathered)]
                shown = {k.id: k for k in (h.item for h in (*cand.keyword_hits, *cand.domain_hits))}
                t0 = time.perf_counter()
                likely_conflicts([shown[d.id] for d in ctx.relevant_decisions if d.id in shown])
                own = expected_files(ctx.computed.signals.files_mentioned, [r.file for r in ctx.code_references])
                concurrent_work(own, cand.concurrent)
                pure.append((time.perf_counter() - t0) * 1000)
            row["pure"] = stats(pure)
            # The read alone: the store's gather with every other part empty, with and without it.
            bare = GatherQuery(keywords=(), domains=(), files=(), dep_ids=(), exclude=(), keyword_limit=0,
                               domain_limit=0, related_limit=0, recent_limit=0, working_memory=False,
                               context_map=False)
            asked = {False: bare, True: bare.model_copy(update={"concurrent_of": tasks[0],
                                                                 "concurrent_limit": limit})}
            reads: dict[bool, list[float]] = {False: [], True: []}
            for i in range(2 * calls):
                mode = bool(i % 2)
                t0 = time.perf_counter()
                found = svc.store.gather(asked[mode])
                reads[mode].append((time.perf_counter() - t0) * 1000)
                assert len(found.concurrent) == (busy if mode else 0)
            row["read"] = {"off": stats(reads[False]), "on": stats(reads[True])}
            if store == "neo4j":
                reset(svc, store, say)
        finally:
            svc.close()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = timing_parser("python -m benchmarks.decisions", __doc__, block=True)
    parser.add_argument("--in-progress", type=int, default=10, help="tasks put in progress (default 10)")
    args = parser.parse_args(argv)
    rows = timing_rows(args, stores_of(parser, args), lambda store, size: run(
        store, size, args.seed, args.warmup, args.calls, args.block, args.in_progress))
    if rows is None:
        return 0
    print("| store | nodes | in progress | off p50 / p95 ms | on p50 / p95 ms | added p50 / p95 ms "
          "| on / off p50 / p95 | read alone off → on p50 / p95 ms | pure checks p50 / p95 ms | contexts warned |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        read = r["read"]
        print(f"| {r['store']} | {r['nodes']:,} | {r['in_progress']} | {r['off']['p50']} / {r['off']['p95']} | "
              f"{r['on']['p50']} / {r['on']['p95']} | {r['added']['p50']:+} / {r['added']['p95']:+} | "
              f"{r['ratio']['p50']} / {r['ratio']['p95']} | {read['off']['p50']} → {read['on']['p50']} / "
              f"{read['off']['p95']} → {read['on']['p95']} | {r['pure']['p50']} / {r['pure']['p95']} | "
              f"{r['warned']} of {r['queries']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
