"""What code-anchored freshness costs (issue 32; docs/freshness.md).

1. ``sync``: a generated tree of ``--files`` files (default 10,000, about 1 KB
   each, 100 folders; 0: no sync rows), every one anchored once
   (``make_anchor``, written with ``write_anchors``: the anchors an ingestion
   of handoffs naming them would leave), then ``ContextService.sync()`` timed
   ``--runs`` times with nothing changed (stat only), then once after 1 % of
   the files were edited (those read and hashed) and once after 1 % were
   deleted (git is not asked: the tree is not a repository, so this is the
   no-git path).
2. The just-in-time check: the benchmark suite's graph of ``--nodes`` nodes
   (``benchmarks/generator.py``), with every file its handoffs and context map
   name written under a root first (one line each, one fixed mtime), so that
   ingestion anchors them; ``compute(task_id)`` over the dataset's query tasks
   with the check on and off, in alternating blocks of ``--block`` calls
   (drift hits both alike), ``--calls`` timed calls each after ``--warmup``;
   ``added`` is on minus off, per percentile. Then the store's gather alone
   (the transaction a context's candidates come from, without the history),
   with the anchors the check needs read and without, back to back in pairs
   taking turns at going first (``gather_added``: what the read costs inside
   the gather), and the check alone on each task's gathered candidates
   (``_fresh``: the anchors' stats, a stat of each candidate file —
   ``files_asked`` — and a read only when one is missing: the gather's
   work-tree part, before compute), each call
   followed by a control: a fixed 0.5 ms of arithmetic (calibrated at the
   start, the best of 20), whose p95 is what the machine's scheduling makes
   of any work that short, and by the read of the same anchors in a
   transaction of their own (``separate_read``: what the check did before the
   gather read them). The check's own cost is ``gather_added`` plus
   ``check``.

   With ``--keep DIR`` a size's graph is the one ``python -m benchmarks
   --sizes N --keep DIR`` left (``benchmarks/kept.py``; with vectors, the
   default tail), not loaded here: its handoffs, loaded without a root, are
   anchored as ingestion would have (``anchor_keys``, checked against
   ingestion's at 1,000 nodes), once — the anchors stay in the kept graph
   (``Anchor`` nodes on Neo4j, the ``anchors`` table embedded; nothing else
   is written), and a later run finds them and writes nothing.

Neo4j runs with ``--stores neo4j`` and ``NEO4J_URI``; its database is EMPTIED
(not with ``--keep``: the kept graph is measured as it is).

    python -m benchmarks.sync [--files 10000] [--nodes 1000] [--stores local,neo4j] [--keep DIR] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from benchmarks import kept
from benchmarks.generator import Dataset, generate
from benchmarks.suite import default_tail, load, log, open_service, percentile, reset
from ctxgraph.core.anchors import anchor_id
from ctxgraph.core.models import Anchor, Candidates, Task, split_location, utcnow
from ctxgraph.graph.records import stable_id
from ctxgraph.service import ContextService
from ctxgraph.service.anchors import make_anchor
from ctxgraph.service.root import ProjectRoot
from ctxgraph.service.work_tree import candidate_files
from ctxgraph.signals import TaskSignals


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


#: The mtime of every file of the just-in-time rows' tree: anchors made against
#: one run's tree are as the next run's tree stats them (a kept graph's anchors).
TREE_MTIME_NS = 1_736_154_000 * 10**9
#: Anchors written per transaction when anchoring a kept graph.
ANCHOR_BATCH = 5_000


def named_files(ds: Dataset) -> set[str]:
    """Every file the dataset's handoffs and context map name."""
    named = {c["path"] for h in ds.handoffs for c in (*h.get("files_created", ()), *h.get("files_modified", ()))}
    named |= {d["file"] for h in ds.handoffs for d in h.get("dependencies_for_next", ())}
    named |= {split_location(p["location"])[0] for h in ds.handoffs for p in h.get("patterns_discovered", ())
              if p.get("location")}
    return named | {f["path"] for f in ds.files}  # the context map's files exist too


def write_tree(root: Path, paths: Iterable[str]) -> None:
    for p in sorted(paths):
        file = root / p
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(f"# {p}\n", encoding="utf-8")
        os.utime(file, ns=(TREE_MTIME_NS, TREE_MTIME_NS))


def anchor_keys(handoffs: Iterable[dict[str, Any]]) -> Iterator[tuple[str, str, str, str | None, str | None, str]]:
    """(owner, task, path, lines, commit, at) of each anchor ingesting
    ``handoffs`` under a root holding their files makes
    (``ContextService.anchor_handoffs``: the handoff's file links, its patterns'
    locations), worked out without ingesting them: for a kept graph, loaded
    without a root. The 1,000-node row checks them against its ingestion's."""
    for h in handoffs:
        task, commit, at = h["task_id"], h.get("commit"), h.get("completed_at") or utcnow()
        links: dict[tuple[str, str], str | None] = {}
        for rel, key in (("CREATED", "files_created"), ("MODIFIED", "files_modified")):
            for c in h.get(key, ()):
                links[(rel, c["path"])] = c.get("lines")
        for d in h.get("dependencies_for_next", ()):
            links[("READ_NEXT", d["file"])] = None
        for (_, path), lines in links.items():
            yield task, task, path, lines, commit, at
        for p in h.get("patterns_discovered", ()):
            if p.get("location"):
                yield (stable_id("pattern", p["pattern"]), task, *split_location(p["location"]), commit, at)


def made(root: Path, keys: Iterable[tuple[str, str, str, str | None, str | None, str]]) -> Iterator[Anchor]:
    for owner, task, path, lines, commit, at in keys:
        anchor = make_anchor(root, owner=owner, task_id=task, path=path, lines=lines, commit=commit, at=at)
        if anchor is not None:
            yield anchor


def anchor_kept(svc: ContextService, root: Path, ds: Dataset, say: Callable[[str], None]) -> int:
    """Anchor a kept graph's handoffs as an ingestion under ``root`` would
    have: written once (skipped when a sample of 50 handoffs' anchors is stored
    as this tree makes them); the number of anchors."""
    keys = list(anchor_keys(ds.handoffs))  # (an anchor named again by a later handoff: replaced, as ingested)
    total = len({anchor_id(o, p, lines) for o, _, p, lines, _, _ in keys})
    sample = list(made(root, anchor_keys(ds.handoffs[:: max(1, len(ds.handoffs) // 50)])))
    stored = {a.id: a for a in svc.store.read_anchors(sorted({a.owner for a in sample}), [])}
    if all(a.id in stored and (stored[a.id].blob, stored[a.id].seen_mtime_ns) == (a.blob, a.seen_mtime_ns)
           for a in sample):
        say(f"the kept graph holds its {total:,} anchors already")
        return total
    say(f"anchoring the kept graph: {total:,} anchors ({len(keys):,} made, in handoff order)")
    t0, batch, done = time.perf_counter(), [], 0
    for anchor in made(root, keys):
        batch.append(anchor)
        if len(batch) == ANCHOR_BATCH:
            svc.store.write_anchors(batch)
            done, batch = done + len(batch), []
            if done % (ANCHOR_BATCH * 20) == 0:
                say(f"anchors made {done:,}/{len(keys):,}")
    svc.store.write_anchors(batch)
    say(f"{total:,} anchors written in {time.perf_counter() - t0:.1f}s")
    return total


def open_kept(store: str, keep: Path, ds: Dataset, say: Callable[[str], None]) -> ContextService:
    """The service on the graph ``python -m benchmarks --keep KEEP`` left (with
    vectors, the default tail); an error when there is none."""
    where = kept.folder(keep, store, ds.nodes, ds.seed)
    svc = open_service(store, where)
    facts = kept.read(where, kept.identity(store, ds.nodes, ds.seed, default_tail(ds)),
                      sum(svc.stats()["labels"].values()))
    if facts is None:
        svc.close()
        raise SystemExit(f"no kept graph of {ds.nodes:,} nodes ({store}) in {where}: "
                         f"make one with python -m benchmarks --sizes {ds.nodes} --stores {store} --keep {keep}")
    say(f"the graph kept in {where} ({facts['graph_nodes']:,} graph nodes)")
    return svc


def alternating(svc: ContextService, calls: int, block: int, run: Callable[[int], object]) -> dict[bool, list[float]]:
    """``run(n)`` timed with the check off and on, in alternating blocks of ``block`` (ms)."""
    times: dict[bool, list[float]] = {False: [], True: []}
    n = 0
    while min(len(t) for t in times.values()) < calls:
        for mode in (False, True):
            svc.check_anchors = mode
            for _ in range(block):
                t0 = time.perf_counter()
                run(n)
                times[mode].append((time.perf_counter() - t0) * 1000)
                n += 1
    svc.check_anchors = True
    return {mode: t[:calls] for mode, t in times.items()}


#: The work of the control timed beside the check alone (ms, on an idle core).
CONTROL_MS = 0.5


def spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def calibrate(ms: float) -> int:
    """Iterations of :func:`spin` taking ``ms`` at best (the least of 20 tries):
    a fixed piece of work whose timed percentiles, taken beside the check's,
    show what the machine's scheduling adds to any work that short."""
    n = 100_000
    best = min(_timed(spin, n) for _ in range(20))
    return max(1, round(n * ms / best))


def _timed(fn: Callable[[int], object], n: int) -> float:
    t0 = time.perf_counter()
    fn(n)
    return (time.perf_counter() - t0) * 1000


def paired(calls: int, run: Callable[[int, bool], object]) -> dict[bool, list[float]]:
    """``run(n, mode)`` timed ``calls`` times with each mode, back to back, the
    pairs taking turns at which mode goes first (ms)."""
    times: dict[bool, list[float]] = {False: [], True: []}
    for n in range(calls):
        for mode in (False, True) if n % 2 == 0 else (True, False):
            t0 = time.perf_counter()
            run(n, mode)
            times[mode].append((time.perf_counter() - t0) * 1000)
    return times


def files_asked(svc: ContextService, task: Task, signals: TaskSignals, candidates: Candidates) -> list[str]:
    """The candidate files a context of ``task`` looks at in the work tree:
    every candidate file, stat'ed by the gather before compute
    (:func:`ctxgraph.service.work_tree.file_states`); none without a root."""
    if svc.root is None or not svc.check_anchors:
        return []
    return sorted(candidate_files(candidates))


def jit_row(store: str, nodes: int, seed: int, warmup: int, calls: int, block: int,
            keep: Path | None = None) -> dict[str, Any]:
    def say(message: str) -> None:
        log(f"[jit {store} {nodes:,}] {message}")

    ds = generate(nodes, seed)
    tasks = list(ds.queries)
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-sync-") as tmp:
        root = Path(tmp) / "root"
        write_tree(root, named_files(ds))
        svc = open_kept(store, keep, ds, say) if keep else open_service(store, Path(tmp))
        try:
            svc.root = ProjectRoot(root, "--root")
            svc.record_outcomes = False
            if keep:
                anchors = anchor_kept(svc, root, ds, say)
            else:
                reset(svc, store, say)
                load(svc, ds, len(ds.handoffs), say)  # through the API: ingestion anchors
                stored = {a.id for a in svc.store.read_anchors()}
                assert stored == {anchor_id(o, p, lines) for o, _, p, lines, _, _ in anchor_keys(ds.handoffs)}
                anchors = len(stored)
            del ds
            gc.collect()
            say(f"{anchors:,} anchors; {warmup} warm-up contexts, then {calls} timed contexts and gathers per "
                f"mode in blocks of {block}")
            for n in range(warmup):
                svc.compute(tasks[n % len(tasks)], record=False)
            contexts = alternating(svc, calls, block, lambda n: svc.compute(tasks[n % len(tasks)], record=False))
            # the store's gather alone (a transaction, two statements on Neo4j),
            # with the anchors read and without, in pairs taking turns at going
            # first; then the check alone (the stats, and a read only when a file
            # is gone) on each task's candidates
            queries = svc.store.get_tasks(tasks)
            signals = [t.signals or svc.signals_for(t) for t in queries]
            asked = [svc.gather_query(t, s).model_copy(update={"context_map": False})
                     for t, s in zip(queries, signals, strict=True)]
            gathers = paired(calls, lambda n, mode: svc.store.gather(
                asked[n % len(asked)].model_copy(update={"anchors": mode})))
            gathered = [svc.gather(t, s) for t, s in zip(queries, signals, strict=True)]
            looked = [files_asked(svc, t, s, c) for t, s, c in zip(queries, signals, gathered, strict=True)]
            alone, control, separate, checked = [], [], [], 0
            spins = calibrate(CONTROL_MS)
            for i in range(calls):
                t0 = time.perf_counter()
                fresh, _ = svc._fresh(gathered[i % len(gathered)])
                alone.append((time.perf_counter() - t0) * 1000)
                checked += len(fresh.anchors) if i < len(gathered) else 0
                t0 = time.perf_counter()
                spin(spins)
                control.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()  # the read of their own the anchors had before the gather read them
                svc.store.read_anchors(gathered[i % len(gathered)].anchor_owners(), [])
                separate.append((time.perf_counter() - t0) * 1000)
            if store == "neo4j" and not keep:
                reset(svc, store, say)
        finally:
            svc.close()
    off, on = stats(contexts[False]), stats(contexts[True])
    g_off, g_on = stats(gathers[False]), stats(gathers[True])
    return {"store": store, "nodes": nodes, "kept_graph": keep is not None, "anchors": anchors,
            "anchors_per_context": round(checked / min(calls, len(gathered)), 1),
            "files_per_context": round(sum(map(len, looked)) / len(looked), 1), "calls": calls,
            "off": off, "on": on, "added": {k: round(on[k] - off[k], 3) for k in on},
            "gather_off": g_off, "gather_on": g_on, "gather_added": {k: round(g_on[k] - g_off[k], 3) for k in g_on},
            "check": stats(alone), "control": stats(control), "separate_read": stats(separate)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sync", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000, help="files in the sync tree (default 10,000; 0: none)")
    parser.add_argument("--runs", type=int, default=5, help="syncs with nothing changed (default 5)")
    parser.add_argument("--nodes", default="1000", help="graph sizes of the just-in-time rows (default 1000)")
    parser.add_argument("--stores", default="local", help="local and/or neo4j, comma-separated (default local)")
    parser.add_argument("--calls", type=int, default=300, help="timed contexts per mode (default 300)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed contexts first (default 30)")
    parser.add_argument("--block", type=int, default=10, help="contexts per block of one mode (default 10)")
    parser.add_argument("--keep", type=Path, help="measure the graphs python -m benchmarks --keep DIR left here")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    if "neo4j" in stores and not os.environ.get("NEO4J_URI"):
        parser.error("--stores neo4j needs NEO4J_URI (and NEO4J_PASSWORD or NEO4J_PASSWORD_FILE)")
    syncs = []
    for store in stores if args.files > 0 else ():
        with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-sync-") as tmp:
            svc = open_service(store, Path(tmp))
            try:
                reset(svc, store, log)
                syncs.append(sync_row(svc, store, Path(tmp) / "tree", args.files, args.runs))
                if store == "neo4j":
                    reset(svc, store, log)
            finally:
                svc.close()
    jits = [jit_row(store, int(size), args.seed, args.warmup, args.calls, args.block, args.keep)
            for size in args.nodes.split(",") if size.strip() for store in stores]
    if args.json:
        json.dump({"sync": syncs, "jit": jits}, sys.stdout, indent=2)
        print()
        return 0
    if syncs:
        print("| store | files | sync, nothing changed (p50 / max s) | 1 % edited (s, files read) | 1 % deleted (s) |")
        print("|---|---|---|---|---|")
    for r in syncs:
        print(f"| {r['store']} | {r['files']:,} | {r['unchanged_s']['p50']} / {r['unchanged_s']['max']} | "
              f"{r['edited_1pct_s']} ({r['edited_hashed']}) | {r['deleted_1pct_s']} |")
    print()
    print("| store | nodes | anchors (per context; files looked at) | contexts, check off p50 / p95 ms | on | added "
          "| gathers, off p50 / p95 ms | on | added | the check alone p50 / p95 ms | control (0.5 ms) "
          "| a read of its own |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in jits:
        print(f"| {r['store']} | {r['nodes']:,} | {r['anchors']:,} ({r['anchors_per_context']}; "
              f"{r['files_per_context']}) | "
              f"{r['off']['p50']} / {r['off']['p95']} | {r['on']['p50']} / {r['on']['p95']} | "
              f"{r['added']['p50']:+} / {r['added']['p95']:+} | "
              f"{r['gather_off']['p50']} / {r['gather_off']['p95']} | {r['gather_on']['p50']} / "
              f"{r['gather_on']['p95']} | {r['gather_added']['p50']:+} / {r['gather_added']['p95']:+} | "
              f"{r['check']['p50']} / {r['check']['p95']} | {r['control']['p50']} / {r['control']['p95']} | "
              f"{r['separate_read']['p50']} / {r['separate_read']['p95']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
