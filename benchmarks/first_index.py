"""Issue 42: a first index of this project's own source, before and after, in one run.

    python -m benchmarks.first_index [--stride 1] [--rounds 1] [--spin] [--json]

Each round copies the files of ``ctxgraph/`` (every ``--stride``-th, by path)
into a fresh folder and indexes it into a fresh embedded store once per
setting (``index_project``: scanning, chunking, embedding, writing), the
settings taking turns as to which goes first:

- ``before`` — the index as it was: the onnx runtime's one-thread session
  (``embed``, the contexts' path) and calls of at most 32 chunks;
- ``after`` — the index now: ``embed_bulk`` (``index_threads()`` batches at
  a time, each on the one-thread session: ``CTXGRAPH_EMBEDDING_THREADS``
  when set, else the CPUs this process may use, while that is faster than
  one at a time) and calls of at most ``EMBED_BATCH`` chunks, each sorted by
  length;
- ``threads-in-op`` — ``after`` as it was before: one batch at a time on a
  session of ``index_threads()`` intra-op threads (onnxruntime splits each
  operator over them);
- ``fused`` — ``after`` on the fused graph (``onnx_build.build_graph(...,
  fused=True)``: onnxruntime's ``Attention``, ``SkipLayerNormalization`` and
  ``BiasGelu`` operators), built into a temporary folder;
- ``spin`` (with ``--spin``) — ``threads-in-op`` with the session's waiting
  threads spinning (``session.intra_op.allow_spinning=1``).

Per setting: chunks, seconds, chunks/s, CPU ms per chunk (this process's
CPU time, all its threads: it moves less with the machine's load than the
wall clock) and the speed-up over ``before``; then per setting the agreement
of its vectors with ``before``'s (cosine per chunk, min, printed to four
places, and the largest difference of a component). The machine's load
average at the start and end is printed too: on a shared machine a second
thread only helps while a core is free.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.suite import log, machine

ROOT = Path(__file__).resolve().parent.parent
OLD_EMBED_BATCH = 32


class Recording:
    """One setting's embedder: the single path (``before``) or the bulk path,
    keeping the vectors it made by text."""

    def __init__(self, embedder: Any, bulk: bool) -> None:
        self.embedder = embedder
        self._bulk = bulk
        self.vectors: dict[str, npt.NDArray[np.float32]] = {}
        if bulk:
            self.embed_bulk = self._record

    def _record(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        run = self.embedder.embed_bulk if self._bulk else self.embedder.embed
        out: npt.NDArray[np.float32] = run(texts, max_pieces)
        self.vectors.update(zip(texts, out, strict=True))
        return out

    def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        return self._record(texts, max_pieces)


class ThreadsInOp:
    """The bulk path of ``embed_bulk`` before: one batch at a time on a session
    of ``index_threads()`` intra-op threads (``spin``: their waits spinning)."""

    def __init__(self, embedder: Any, spin: bool = False) -> None:
        import onnxruntime as ort

        from ctxgraph.memory.model import index_threads

        options = ort.SessionOptions()
        options.intra_op_num_threads = index_threads()
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        self._session = ort.InferenceSession(embedder._model, options, providers=["CPUExecutionProvider"])
        self._tokenizer = embedder.tokenizer
        self._cost: dict[int, float] = {}

    def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        from ctxgraph.memory.model import BATCH, BATCH_PIECES, encode, run_encoded

        def forward(ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
            return np.asarray(self._session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})[0])

        return run_encoded(encode(self._tokenizer, texts, max_pieces), forward, BATCH, BATCH_PIECES)

    embed_bulk = embed


def settings(tmp: Path, spin: bool) -> dict[str, Recording]:
    from ctxgraph.memory.embed_onnx import OnnxEmbedder
    from ctxgraph.memory.model import model_dir
    from ctxgraph.memory.onnx_build import build

    fused = build(model_dir() / "model.safetensors", tmp / "fused.onnx", quantize=False, fused=True)
    today = OnnxEmbedder("onnx")
    chosen = {"before": Recording(today, bulk=False), "after": Recording(today, bulk=True),
              "threads-in-op": Recording(ThreadsInOp(today), bulk=True),
              "fused": Recording(OnnxEmbedder("onnx", model=fused), bulk=True)}
    if spin:
        chosen["spin"] = Recording(ThreadsInOp(today, spin=True), bulk=True)
    return chosen


def agreement(before: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    common = [t for t in before if t in other]
    a = np.array([before[t] for t in common])
    b = np.array([other[t] for t in common])
    return {"vectors_compared": len(common), "cosine_min": f"{float((a * b).sum(axis=1).min()):.4f}",
            "max_component_diff": float(f"{float(np.abs(a - b).max()):.2g}")}


def run(stride: int, rounds: int, spin: bool = False) -> dict[str, Any]:
    from ctxgraph.graph.local import LocalStore
    from ctxgraph.memory import index as index_module
    from ctxgraph.memory import index_steps
    from ctxgraph.memory.model import index_threads
    from ctxgraph.memory.scan import SourceFile, walk

    source = ROOT / "ctxgraph"
    files = sorted((f for f in walk(source) if isinstance(f, SourceFile)), key=lambda f: f.path)[::stride]
    new_batch = index_steps.EMBED_BATCH
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="ctxgraph-first-index-") as tmp:
        chosen = settings(Path(tmp), spin)
        totals = {name: [0, 0.0, 0.0] for name in chosen}
        for r in range(rounds):
            tree = Path(tmp) / f"round{r}" / "ctxgraph"
            for f in files:
                (tree / f.path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source / f.path, tree / f.path)
            order = list(chosen)[r % len(chosen):] + list(chosen)[:r % len(chosen)]
            for name in order:
                index_steps.EMBED_BATCH = OLD_EMBED_BATCH if name == "before" else new_batch
                cpu = time.process_time()
                with LocalStore.open(Path(tmp) / f"{r}-{name}.db") as store:
                    report = index_module.index_project(store, tree, embedder=chosen[name])
                cpu = time.process_time() - cpu
                for i, value in enumerate((report.chunks, report.seconds, cpu)):
                    totals[name][i] += value
                log(f"[first index] round {r + 1}/{rounds} {name}: {report.chunks} chunks in {report.seconds:.1f}s "
                    f"({report.chunks_per_s:.1f} chunks/s, {1000 * cpu / max(1, report.chunks):.0f} CPU ms/chunk)")
    index_steps.EMBED_BATCH = new_batch
    load.append(os.getloadavg()[0])
    base = totals["before"][0] / totals["before"][1]
    rows = [{"setting": name, "chunks": int(chunks), "seconds": round(seconds, 1),
             "chunks_per_s": round(chunks / seconds, 2), "cpu_ms_per_chunk": round(1000 * cpu / max(1, chunks), 1),
             "speedup": round(chunks / seconds / base, 2),
             # what the bulk path measured last, per thread count (it keeps the faster)
             "ms_per_1000_pieces_by_threads": {} if name == "before" else
             {n: round(c * 1e6, 1) for n, c in sorted(chosen[name].embedder._cost.items())},
             **agreement(chosen["before"].vectors, chosen[name].vectors)}
            for name, (chunks, seconds, cpu) in totals.items()]
    return {"files": len(files), "rows": rows, "threads_after": index_threads(), "embed_batch_after": new_batch,
            "load_average_start_end": [round(x, 2) for x in load], "machine": machine()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.first_index", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stride", type=int, default=1, help="every n-th file of ctxgraph/ (default 1: all)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds, each indexing a fresh copy once per setting")
    parser.add_argument("--spin", action="store_true", help="also threads-in-op with spinning threads")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(max(1, args.stride), max(1, args.rounds), args.spin)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"first index of ctxgraph/ ({result['files']} files), at most {result['threads_after']} thread(s) after; "
          f"load average {result['load_average_start_end'][0]} -> {result['load_average_start_end'][1]} "
          f"on {result['machine']['cpus']} CPUs")
    for row in result["rows"]:
        print(f"  {row['setting']:<13} {row['chunks']:>6} chunks {row['seconds']:>7.1f} s {row['chunks_per_s']:>7.2f} "
              f"chunks/s {row['cpu_ms_per_chunk']:>6.1f} CPU ms/chunk  {row['speedup']:.2f}x  cosine min "
              f"{row['cosine_min']}, largest component difference {row['max_component_diff']}; "
              f"ms per 1,000 pieces by threads {row['ms_per_1000_pieces_by_threads']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
