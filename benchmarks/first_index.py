"""Issue 42: a first index of this project's own source, before and after, in one run.

    python -m benchmarks.first_index [--stride 1] [--rounds 1] [--json]

Each round copies the files of ``ctxgraph/`` (every ``--stride``-th, by path)
into a fresh folder and indexes it into a fresh embedded store twice
(``index_project``: scanning, chunking, embedding, writing), the two settings
taking turns as to which goes first:

- ``before`` — the index as it was: the onnx runtime's one-thread session
  (``embed``, the contexts' path) and calls of at most 32 chunks;
- ``after`` — the index now: ``embed_bulk`` (a session on
  ``index_threads()`` threads: ``CTXGRAPH_EMBEDDING_THREADS`` when set, else
  the CPUs this process may use) and calls of at most ``EMBED_BATCH`` chunks,
  each sorted by length.

Per setting: chunks, seconds, chunks/s, and the speed-up of ``after``; then
the agreement of the two settings' vectors (cosine per chunk, min, printed to
four places, and the largest difference of a component). The machine's load
average at the start and end is printed too: on a shared machine the second
thread only helps while a core is free.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.suite import log, machine

ROOT = Path(__file__).resolve().parent.parent
OLD_EMBED_BATCH = 32


class Recording:
    """One setting's embedder: the single path (``before``) or the bulk path
    (``after``), keeping the vectors it made by text."""

    def __init__(self, embedder: Any, bulk: bool) -> None:
        self._embedder = embedder
        self._bulk = bulk
        self.vectors: dict[str, npt.NDArray[np.float32]] = {}
        if bulk:
            self.embed_bulk = self._record

    def _record(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        run = self._embedder.embed_bulk if self._bulk else self._embedder.embed
        out: npt.NDArray[np.float32] = run(texts, max_pieces)
        self.vectors.update(zip(texts, out, strict=True))
        return out

    def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        return self._record(texts, max_pieces)


def run(stride: int, rounds: int) -> dict[str, Any]:
    from ctxgraph.graph.local import LocalStore
    from ctxgraph.memory import index as index_module
    from ctxgraph.memory import index_steps
    from ctxgraph.memory.embed_onnx import OnnxEmbedder
    from ctxgraph.memory.model import index_threads
    from ctxgraph.memory.scan import SourceFile, walk

    source = ROOT / "ctxgraph"
    files = sorted((f for f in walk(source) if isinstance(f, SourceFile)), key=lambda f: f.path)[::stride]
    model = OnnxEmbedder("onnx")
    settings = {"before": Recording(model, bulk=False), "after": Recording(model, bulk=True)}
    totals = {name: [0, 0.0] for name in settings}
    new_batch = index_steps.EMBED_BATCH
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="ctxgraph-first-index-") as tmp:
        for r in range(rounds):
            tree = Path(tmp) / f"round{r}" / "ctxgraph"
            for f in files:
                (tree / f.path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source / f.path, tree / f.path)
            order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
            for name in order:
                index_steps.EMBED_BATCH = OLD_EMBED_BATCH if name == "before" else new_batch
                with LocalStore.open(Path(tmp) / f"{r}-{name}.db") as store:
                    report = index_module.index_project(store, tree, embedder=settings[name])
                totals[name][0] += report.chunks
                totals[name][1] += report.seconds
                log(f"[first index] round {r + 1}/{rounds} {name}: {report.chunks} chunks in "
                    f"{report.seconds:.1f}s ({report.chunks_per_s:.1f} chunks/s)")
    index_steps.EMBED_BATCH = new_batch
    load.append(os.getloadavg()[0])
    before, after = settings["before"].vectors, settings["after"].vectors
    common = [t for t in before if t in after]
    a = np.array([before[t] for t in common])
    b = np.array([after[t] for t in common])
    rows = [{"setting": name, "chunks": chunks, "seconds": round(seconds, 1),
             "chunks_per_s": round(chunks / seconds, 2)} for name, (chunks, seconds) in totals.items()]
    return {
        "files": len(files), "rows": rows,
        "speedup": round((totals["after"][0] / totals["after"][1]) / (totals["before"][0] / totals["before"][1]), 2),
        "threads_after": index_threads(), "embed_batch_after": new_batch,
        # what the bulk path measured last, per thread count (it keeps the faster)
        "ms_per_1000_pieces_by_threads": {n: round(c * 1e6, 1) for n, c in sorted(model._cost.items())},
        "vectors_compared": len(common), "cosine_min": f"{float((a * b).sum(axis=1).min()):.4f}",
        "max_component_diff": float(f"{float(np.abs(a - b).max()):.2g}"),
        "load_average_start_end": [round(x, 2) for x in load], "machine": machine(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.first_index", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stride", type=int, default=1, help="every n-th file of ctxgraph/ (default 1: all)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds, each indexing a fresh copy twice")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(max(1, args.stride), max(1, args.rounds))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"first index of ctxgraph/ ({result['files']} files), {result['threads_after']} thread(s) after; "
          f"load average {result['load_average_start_end'][0]} -> {result['load_average_start_end'][1]}")
    for row in result["rows"]:
        print(f"  {row['setting']:<7} {row['chunks']:>6} chunks {row['seconds']:>7.1f} s {row['chunks_per_s']:>7.2f} "
              "chunks/s")
    print(f"  after's last measure, ms per 1,000 word pieces by threads: {result['ms_per_1000_pieces_by_threads']}")
    print(f"  speed-up {result['speedup']}x; vectors: cosine min {result['cosine_min']} over "
          f"{result['vectors_compared']} chunks, largest component difference {result['max_component_diff']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
