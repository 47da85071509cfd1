"""Issue 31's rows: the associative memory on by default, kept current.

- ``first_index``: ``index_project`` of this project's own source (the
  repository root: the package, tests, benchmarks, docs) into a fresh
  embedded store, embeddings on, with where the time goes: the stat-then-hash
  scan, the embedder's calls, the store's writes, and the rest (chunking,
  full-text terms, bookkeeping), when every file was searchable by full text
  (``full_text_after_s``: the vectors' phase began), and the process's CPU seconds (on a busy
  machine the wall time is the CPU time stretched by the load). Target:
  under 90 s.
- ``reindex``: ``ctxgraph index ROOT --watch --format json`` (a real
  process) on a copy of ``ctxgraph/memory/`` (indexed first): a function is
  appended to one file, and the time from the save to the run's JSON line on
  stdout is taken (the run has written by then), ``--rounds`` times, with
  file events and with ``--poll 0.25``. Target: under 1 s.
- ``context``: ``ContextService.compute`` p50/p95 with the memory on and off,
  alternating call by call in one process, on generated graphs of 1,000 and
  100,000 nodes (``benchmarks.generator``) holding a synthetic memory of
  ``--chunks`` chunks (``benchmarks.recall.synthetic``: random unit vectors,
  files on disk). Target: p95 on <= 1.5 x p95 off.
- ``context_while_indexing`` (``--only busy``): contexts of a 1,000-node graph
  (memory off: the graph's reads alone) for ``--busy-seconds`` while a
  :class:`~ctxgraph.service.keeper.MemoryKeeper` (what ``ctxgraph mcp`` runs)
  indexes this repository into the same store, then as many once it has
  stopped: no lock is shared, so the difference is the CPU (and the GIL) the
  indexer takes on a 2-core machine.

The machine is shared (see the load printed with each row): compare rows of
one run, as ratios.

    python -m benchmarks.memory_default [--only first_index|reindex|context] [--nodes 1000,100000] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.generator import generate
from benchmarks.suite import default_tail, load, log, open_service, reset
from ctxgraph.core.models import FileStat, MemoryChunk, MemoryProject
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.index import index_project
from ctxgraph.memory.scan import changes

REPO = Path(__file__).resolve().parents[1]


def load_avg() -> float:
    return round(os.getloadavg()[0], 1)


def pct(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


# ------------------------------------------------------------------ first index


class TimedStore:
    """A store whose ``write_memory`` calls are timed (the rest passes through)."""

    def __init__(self, store: KnowledgeStore) -> None:
        self._store = store
        self.write_s = 0.0

    def write_memory(self, project: MemoryProject, chunks: Sequence[MemoryChunk], replaced: Sequence[str]) -> None:
        t = time.perf_counter()
        self._store.write_memory(project, chunks, replaced)
        self.write_s += time.perf_counter() - t

    def touch_memory(self, project: str, stats: dict[str, FileStat]) -> None:
        self._store.touch_memory(project, stats)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class TimedEmbedder:
    def __init__(self) -> None:
        from ctxgraph.memory.embed import shared_embedder

        self._embedder = shared_embedder()
        self.embed_s = 0.0
        self.calls = 0
        self.texts = 0

    def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        t = time.perf_counter()
        out = self._embedder.embed(texts, max_pieces)
        self.embed_s += time.perf_counter() - t
        self.calls += 1
        self.texts += len(texts)
        return out


def first_index_row(root: Path) -> dict[str, Any]:
    embedder = TimedEmbedder()
    embedder.embed(["warm the model up"])  # loading the model is not indexing
    embedder.embed_s, embedder.calls, embedder.texts = 0.0, 0, 0
    load_before = load_avg()
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-index-") as tmp:
        t = time.perf_counter()
        scan = changes(root, {})
        scan_s = time.perf_counter() - t
        lines = sum(f.text.count("\n") for f in scan.added)
        store = LocalStore.open(Path(tmp) / "index.db")
        timed = TimedStore(store)
        try:
            t, cpu = time.perf_counter(), time.process_time()
            phases: dict[str, float] = {}

            def progress(p: Any) -> None:
                phases.setdefault(p.phase, time.perf_counter() - t)

            report = index_project(timed, root, project="self", embedder=embedder,  # type: ignore[arg-type]
                                   progress=progress)
            total, cpu = time.perf_counter() - t, time.process_time() - cpu
        finally:
            store.close()
    return {
        "row": "first_index", "root": str(root), "files": report.files, "lines": lines, "chunks": report.chunks,
        "seconds": round(total, 1), "cpu_s": round(cpu, 1), "chunks_per_s": round(report.chunks / total, 1),
        "full_text_after_s": round(phases.get("indexing", 0.0), 1),
        "scan_s": round(scan_s, 2), "embed_s": round(embedder.embed_s, 1), "embed_calls": embedder.calls,
        "chunks_per_call": round(embedder.texts / max(1, embedder.calls), 1), "write_s": round(timed.write_s, 2),
        "other_s": round(total - embedder.embed_s - timed.write_s - scan_s, 1),
        "load": [load_before, load_avg()], "target_s": 90,
    }


# ------------------------------------------------------------------ re-index under --watch


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}


def json_lines(proc: subprocess.Popen[str]) -> Iterator[dict[str, Any]]:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip():
            yield json.loads(line)


def reindex_rows(rounds: int) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-watch-") as tmp:
        root = Path(tmp) / "memory"
        shutil.copytree(REPO / "ctxgraph" / "memory", root, ignore=shutil.ignore_patterns("__pycache__"))
        target = root / "scan.py"
        original = target.read_text(encoding="utf-8")
        store = ["--store", str(Path(tmp) / "watch.db")]
        for how in (["events"], ["poll", "--poll", "0.25"]):
            proc = subprocess.Popen(
                [sys.executable, "-m", "ctxgraph", "index", str(root), *store, "--watch", "--format", "json", "-q",
                 *how[1:]], env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            try:
                runs = json_lines(proc)
                first = next(runs)
                waits: list[float] = []
                chunks: list[int] = []
                time.sleep(1.0)
                for n in range(rounds):
                    text = original + f"\n\ndef added_{how[0]}_{n}(x):\n    return x * {n}\n"
                    saved = time.perf_counter()
                    target.write_text(text, encoding="utf-8")
                    for run in runs:
                        if "scan.py" in run["changed"]:
                            break
                    waits.append(time.perf_counter() - saved)
                    chunks.append(int(run["chunks"]))
                    time.sleep(0.5)
            finally:
                proc.send_signal(2)
                proc.wait(60)
            rows.append({"row": "reindex", "watch": how[0], "rounds": rounds, "first_run_s": first["seconds"],
                         "files": first["files"], "chunks_rewritten": max(chunks),
                         "p50_s": round(pct(waits, 50), 3), "max_s": round(max(waits), 3), "load": load_avg(),
                         "target_s": 1.0})
            target.write_text(original, encoding="utf-8")
    return rows


# ------------------------------------------------------------------ context p95, memory on vs off


def context_row(nodes: int, chunks: int, calls: int) -> dict[str, Any]:
    from benchmarks.recall import load as load_chunks
    from benchmarks.recall import synthetic

    def say(message: str) -> None:
        log(f"[context {nodes:,}] {message}")

    ds = generate(nodes)
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-ctx-") as tmp:
        svc = open_service("local", Path(tmp))
        try:
            reset(svc, "local", say)
            load(svc, ds, default_tail(ds), say)  # the bulk part cached as the suite's (CTXGRAPH_BENCH_CACHE)
            project, rows = synthetic(Path(tmp) / "code", chunks, 7)
            load_chunks(svc.store, project, rows)
            ids = list(ds.queries)
            del ds
            gc.collect()
            for tid in ids:  # warm: the model, spaCy, the caches, the chunk index
                svc.compute(tid, memory=True, record=False)
                svc.compute(tid, memory=False, record=False)
            times: dict[bool, list[float]] = {True: [], False: []}
            for n in range(calls):
                for on in ((True, False) if n % 2 else (False, True)):
                    t = time.perf_counter()
                    ctx = svc.compute(ids[n % len(ids)], memory=on, record=False)
                    times[on].append((time.perf_counter() - t) * 1000)
                    if on and n == 0:
                        assert "project bench" in ctx.computed.memory, ctx.computed.memory
        finally:
            svc.close()
    on95, off95 = pct(times[True], 95), pct(times[False], 95)
    return {"row": "context", "nodes": nodes, "memory_chunks": chunks, "calls": calls,
            "on_p50_ms": round(pct(times[True], 50), 1), "on_p95_ms": round(on95, 1),
            "off_p50_ms": round(pct(times[False], 50), 1), "off_p95_ms": round(off95, 1),
            "p95_ratio": round(on95 / off95, 2), "load": load_avg(), "target_ratio": 1.5}


def busy_row(nodes: int, seconds: float) -> dict[str, Any]:
    """Contexts (memory off: the graph's reads alone) for ``seconds`` while
    ``ctxgraph mcp``'s keeper indexes this repository into the same embedded
    store (embeddings on; its own connection and thread), then as many with
    the keeper stopped."""
    from ctxgraph.service import ContextService
    from ctxgraph.service.keeper import MemoryKeeper

    def say(message: str) -> None:
        log(f"[busy {nodes:,}] {message}")

    ds = generate(nodes)
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-busy-") as tmp:
        db = Path(tmp) / "bench.db"
        svc = ContextService.open(db)
        try:
            load(svc, ds, default_tail(ds), say)
            ids = list(ds.queries)
            for tid in ids:
                svc.compute(tid, record=False)
            quiet: list[float] = []
            busy: list[float] = []
            lines: list[str] = []
            keeper = MemoryKeeper(lambda: LocalStore.open(db), REPO, "self", say=lines.append, watch_mode="poll")
            keeper.start()
            try:
                n = 0
                ends = time.monotonic() + seconds
                while time.monotonic() < ends and keeper.status()["state"] != "watching":
                    t = time.perf_counter()
                    svc.compute(ids[n % len(ids)], record=False, memory=False)
                    busy.append((time.perf_counter() - t) * 1000)
                    n += 1
                progress = keeper.status()
            finally:
                keeper.stop()
            for n in range(len(busy)):
                t = time.perf_counter()
                svc.compute(ids[n % len(ids)], record=False, memory=False)
                quiet.append((time.perf_counter() - t) * 1000)
        finally:
            svc.close()
    return {"row": "context_while_indexing", "nodes": nodes, "calls": len(busy), "seconds": seconds,
            "indexed_meanwhile": f"{progress['files_indexed']}/{progress['files']} files",
            "busy_p50_ms": round(pct(busy, 50), 1), "busy_p95_ms": round(pct(busy, 95), 1),
            "quiet_p50_ms": round(pct(quiet, 50), 1), "quiet_p95_ms": round(pct(quiet, 95), 1),
            "busy_max_ms": round(max(busy), 1), "p95_ratio": round(pct(busy, 95) / pct(quiet, 95), 2),
            "load": load_avg()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_default", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["first_index", "reindex", "context", "busy"], action="append")
    parser.add_argument("--root", type=Path, default=REPO, help="first_index: the tree to index [this repository]")
    parser.add_argument("--rounds", type=int, default=5, help="reindex: saves timed per way of watching")
    parser.add_argument("--nodes", default="1000,100000", help="context: graph sizes, comma-separated")
    parser.add_argument("--chunks", type=int, default=1300, help="context: chunks in the memory [1300]")
    parser.add_argument("--calls", type=int, default=200, help="context: timed calls each way per size")
    parser.add_argument("--busy-seconds", type=float, default=45.0, help="busy: seconds of contexts while indexing")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    only = set(args.only or ["first_index", "reindex", "context", "busy"])
    rows: list[dict[str, Any]] = []

    def show(row: dict[str, Any]) -> None:
        rows.append(row)
        if not args.json:
            print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)

    if "reindex" in only:
        for row in reindex_rows(args.rounds):
            show(row)
    if "context" in only:
        for nodes in (int(n) for n in args.nodes.split(",")):
            show(context_row(nodes, args.chunks, args.calls))
    if "busy" in only:
        show(busy_row(1000, args.busy_seconds))
    if "first_index" in only:
        show(first_index_row(args.root))
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
