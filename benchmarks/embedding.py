"""The embedding runtimes side by side, and ingestion with embeddings on.

    python -m benchmarks --embedding [--quick] [--json]     # or: python -m benchmarks.embedding

Runtime rows (one process, measured in interleaved rounds so that a busy
machine slows every runtime alike; read the ratios):

- ``numpy, BLAS default`` — the numpy forward pass as before this benchmark
  existed: BLAS on as many threads as it starts (the machine's cores);
- ``numpy, 1 thread`` — the same pass with BLAS bounded as ``embed`` now does;
- ``onnx`` (the default runtime) and ``onnx-int8`` — onnxruntime on one thread.

Per runtime: an unsaved task's text embedded as a context embeds it
(``QUERY_PIECES`` word pieces) — a 60-word text and a 256-token one — p50 and
p95 ms, and the speed-up of the p50 against ``numpy, BLAS default``; texts/s
embedding 64 chunk-sized texts of 256 pieces (what ``index`` and
``embed-tasks`` do); the time to load the model (built file cached); and the
agreement of its vectors with numpy's (cosine per text, min and mean, over the
reference texts, the tiny evaluation set's queries and these texts).

Index rows (what ``ctxgraph index`` does, on this project's own source): a
fixed share of the files of ``ctxgraph/`` (every 7th, by path; every 14th with
``--quick``), split into three groups; each round indexes one group into a
fresh embedded store once per runtime, taking turns (``index_project``:
scanning, chunking, embedding, writing). Per runtime: chunks, seconds and
chunks/s over the rounds, and the speed-up against ``numpy, BLAS default``
(today's path; BLAS given back its default threads inside the index's
one-thread bound). ``onnx, 16 a batch`` is the onnx runtime with the fixed
batches of 16 texts it used before (the vectors of both agree to float
rounding: ``index_max_diff``, the largest difference of a vector component
against ``numpy, 1 thread`` over the chunks of the first group).

Ingestion rows (embedded store, a synthetic project): handoffs ingested
through the API alone (as the suite's ingest columns), then with their tasks
embedded after each batch (what ``ingest handoff`` does), then by four
concurrent ingests of disjoint quarters, each embedding its own tasks — with
the count of texts embedded (each task once: the number of tasks).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.suite import log, machine, percentile

ROOT = Path(__file__).resolve().parent.parent
RUNTIMES = ("numpy, BLAS default", "numpy, 1 thread", "onnx", "onnx-int8")
SENTENCE = ("parse the multipart form data stream and validate the content length header before reading so a "
            "client cannot exhaust memory with a huge body while the request object buffers it into a temporary "
            "file then hands the parts to the handler which checks the boundary and the charset of every field")
WORDS = SENTENCE.split(" ")

Embed = Callable[[Sequence[str], int], npt.NDArray[np.float32]]


def index_embedders() -> dict[str, Any]:
    """The embedders the index rows run, by row name (models loaded here)."""
    import os

    from threadpoolctl import threadpool_limits

    from ctxgraph.memory.embed import BATCH, Embedder, run_batches
    from ctxgraph.memory.embed_onnx import OnnxEmbedder

    numpy_embedder = Embedder()
    onnx = OnnxEmbedder("onnx")
    int8 = OnnxEmbedder("onnx-int8")

    class Today:
        def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
            # The index bounds numpy's BLAS to one thread; today's path ran it on its default threads.
            with threadpool_limits(limits=os.cpu_count() or 1, user_api="blas"):
                return run_batches(numpy_embedder.tokenizer, texts, max_pieces, numpy_embedder._forward)

    class Sixteen:
        def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
            return run_batches(onnx.tokenizer, texts, max_pieces, onnx._forward, batch=BATCH)

    return {"numpy, BLAS default": Today(), "numpy, 1 thread": numpy_embedder, "onnx": onnx,
            "onnx, 16 a batch": Sixteen(), "onnx-int8": int8}


def index_rows(stride: int, rounds: int = 3) -> list[dict[str, Any]]:
    """``index_project`` over a share of this project's own source, per runtime, in rounds."""
    import shutil

    from ctxgraph.graph.local import LocalStore
    from ctxgraph.memory.index import index_project
    from ctxgraph.memory.scan import SourceFile, walk

    source = ROOT / "ctxgraph"
    files = sorted((f for f in walk(source) if isinstance(f, SourceFile)), key=lambda f: f.path)[::stride]
    embedders = index_embedders()
    totals = {name: [0, 0, 0.0] for name in embedders}  # files, chunks, seconds
    vectors: dict[str, dict[str, npt.NDArray[np.float32]]] = {name: {} for name in embedders}

    class Recording:
        """``embedder``, keeping the vectors it made by text (the first round's)."""

        def __init__(self, name: str, keep: bool) -> None:
            self.name, self.keep = name, keep

        def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
            out: npt.NDArray[np.float32] = embedders[self.name].embed(texts, max_pieces)
            if self.keep:
                vectors[self.name].update(zip(texts, out, strict=True))
            return out

    with tempfile.TemporaryDirectory(prefix="ctxgraph-embed-index-") as tmp:
        for r in range(rounds):
            group = Path(tmp) / f"group{r}" / "ctxgraph"
            for f in files[r::rounds]:
                (group / f.path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source / f.path, group / f.path)
            for k, name in enumerate(embedders):
                store = LocalStore.open(Path(tmp) / f"{r}-{k}.db")
                try:
                    report = index_project(store, group, embedder=Recording(name, r == 0))
                finally:
                    store.close()
                totals[name][0] += report.files
                totals[name][1] += report.chunks
                totals[name][2] += report.seconds
            log(f"[embedding] index round {r + 1}/{rounds}")
    base = totals["numpy, BLAS default"]
    reference = vectors["numpy, 1 thread"]
    rows = []
    for name, (n_files, chunks, seconds) in totals.items():
        diff = max(float(np.abs(v - reference[text]).max()) for text, v in vectors[name].items())
        rows.append({"index": name, "files": n_files, "chunks": chunks, "seconds": round(seconds, 2),
                     "chunks_per_s": round(chunks / seconds, 2),
                     "speedup": round((chunks / seconds) / (base[1] / base[2]), 1),
                     "index_max_diff": float(f"{diff:.2g}")})
    return rows


def texts_of(tokenizer: Any) -> dict[str, str]:
    """The two texts a context embeds in the rows: 60 words, and 256 word pieces."""
    long = " ".join(WORDS)
    while len(tokenizer.encode(long).ids) < 256:
        long += " " + " ".join(WORDS)
    ids = tokenizer.encode(long).ids[1:255]
    return {"60 words": " ".join((WORDS * 2)[:60]), "256 tokens": tokenizer.decode(ids)}


def runtimes() -> dict[str, tuple[Embed, float]]:
    """Each runtime's embed function and its load time in ms (the ONNX files built first, untimed)."""
    from ctxgraph.memory.embed import Embedder, run_batches
    from ctxgraph.memory.embed_onnx import OnnxEmbedder, model_file

    out: dict[str, tuple[Embed, float]] = {}
    t0 = time.perf_counter()
    numpy_embedder = Embedder()
    numpy_ms = (time.perf_counter() - t0) * 1000

    def unbounded(texts: Sequence[str], pieces: int) -> npt.NDArray[np.float32]:
        return run_batches(numpy_embedder.tokenizer, texts, pieces, numpy_embedder._forward)

    out["numpy, BLAS default"] = (unbounded, numpy_ms)
    out["numpy, 1 thread"] = (numpy_embedder.embed, numpy_ms)
    for variant in ("onnx", "onnx-int8"):
        model_file(variant)
        t0 = time.perf_counter()
        embedder = OnnxEmbedder(variant)
        out[variant] = (embedder.embed, (time.perf_counter() - t0) * 1000)
    return out


def agreement_texts() -> list[str]:
    texts = [c["text"] for c in json.loads((ROOT / "tests/data/minilm_reference.json").read_text())["cases"]]
    queries = ROOT / "tests/data/eval_tiny/queries.jsonl"
    if queries.exists():
        for line in queries.read_text().splitlines():
            q = json.loads(line)
            texts.append("\n".join(p for p in (q.get("name", ""), q.get("objective", "")) if p))
    return texts


def runtime_rows(rounds: int) -> list[dict[str, Any]]:
    from ctxgraph.memory.embed import QUERY_PIECES, Embedder

    tokenizer = Embedder().tokenizer
    texts = texts_of(tokenizer)
    found = runtimes()
    times: dict[tuple[str, str], list[float]] = {(r, t): [] for r in found for t in texts}
    for n in range(rounds):
        for label, text in texts.items():
            for name, (embed, _) in found.items():
                t0 = time.perf_counter()
                embed([text], QUERY_PIECES)
                times[(name, label)].append((time.perf_counter() - t0) * 1000)
        if n % 10 == 9:
            log(f"[embedding] round {n + 1}/{rounds}")
    chunks = [" ".join((WORDS * 4)[i:i + 240]) for i in range(64)]
    throughput: dict[str, float] = {}
    for name, (embed, _) in found.items():
        t0 = time.perf_counter()
        embed(chunks, 256)
        throughput[name] = len(chunks) / (time.perf_counter() - t0)
    sample = agreement_texts() + list(texts.values())
    reference = found["numpy, 1 thread"][0](sample, QUERY_PIECES)
    rows = []
    base = {label: percentile(times[("numpy, BLAS default", label)], 50) for label in texts}
    for name, (embed, load_ms) in found.items():
        cosines = (embed(sample, QUERY_PIECES) * reference).sum(axis=1)
        row: dict[str, Any] = {"runtime": name, "load_ms": round(load_ms, 1)}
        for label in texts:
            key = label.replace(" ", "_")
            p50 = percentile(times[(name, label)], 50)
            row[f"{key}_p50_ms"] = round(p50, 2)
            row[f"{key}_p95_ms"] = round(percentile(times[(name, label)], 95), 2)
            row[f"{key}_speedup"] = round(base[label] / p50, 1)
        row["chunks_per_s"] = round(throughput[name], 1)
        row["cosine_min"] = round(float(cosines.min()), 5)
        row["cosine_mean"] = round(float(cosines.mean()), 5)
        row["agreement_texts"] = len(sample)
        rows.append(row)
    return rows


class Counting:
    """The default runtime, counting the texts it embeds (thread-safe)."""

    def __init__(self) -> None:
        from ctxgraph.memory.embed import shared_embedder

        self.base = shared_embedder()
        self.texts: Counter[str] = Counter()
        self.lock = threading.Lock()

    def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        with self.lock:
            self.texts.update(texts)
        return self.base.embed(texts, max_pieces)


def ingestion_rows(nodes: int) -> list[dict[str, Any]]:
    from benchmarks.generator import generate
    from ctxgraph.graph.local import LocalStore
    from ctxgraph.service import ContextService
    from ctxgraph.signals import SignalExtractor

    ds = generate(nodes, 42)
    handoffs = [(h["task_id"], h) for h in ds.handoffs]
    extractor = SignalExtractor()
    extractor.extract_many([h["summary"] for h in ds.handoffs])  # spaCy loaded before any timing
    rows = []
    for mode in ("no embeddings", "embeddings", "4 concurrent, embeddings"):
        with tempfile.TemporaryDirectory(prefix="ctxgraph-embed-bench-") as tmp:
            path = Path(tmp) / "bench.db"
            stores = [LocalStore.open(path) for _ in range(4 if mode.startswith("4") else 1)]
            first = ContextService(stores[0], extractor)
            first.add_tasks(ds.tasks)
            counting = Counting()
            groups = [handoffs[i::len(stores)] for i in range(len(stores))]

            def run(store: LocalStore, group: list[tuple[str, Any]], embed: bool, counting: Counting) -> None:
                svc = ContextService(store, extractor)
                svc.embedder = counting
                for start in range(0, len(group), 25):  # as `ingest handoff` on a folder of 25 files
                    results = svc.ingest_handoffs(group[start:start + 25])
                    if embed:
                        svc.embed_tasks(tasks=[r.task_id for r in results])

            t0 = time.perf_counter()
            workers = [threading.Thread(target=run, args=(s, g, mode != "no embeddings", counting))
                       for s, g in zip(stores, groups, strict=True)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            seconds = time.perf_counter() - t0
            rows.append({"ingest": mode, "handoffs": len(handoffs), "seconds": round(seconds, 2),
                         "handoffs_per_s": round(len(handoffs) / seconds, 1),
                         "texts_embedded": sum(counting.texts.values()),
                         "tasks_embedded_twice": sum(1 for n in counting.texts.values() if n > 1),
                         "task_vectors": stores[0].task_vector_count()})
            for s in stores:
                s.close()
        log(f"[embedding] ingest, {mode}: {rows[-1]['seconds']} s")
    return rows


RUNTIME_COLUMNS = (("runtime", "runtime", "{}"), ("60_words_p50_ms", "60w p50", "{:.1f}"),
                   ("60_words_p95_ms", "60w p95", "{:.1f}"), ("60_words_speedup", "60w x", "{:.1f}"),
                   ("256_tokens_p50_ms", "256t p50", "{:.1f}"), ("256_tokens_p95_ms", "256t p95", "{:.1f}"),
                   ("256_tokens_speedup", "256t x", "{:.1f}"), ("chunks_per_s", "chunks/s", "{:.1f}"),
                   ("load_ms", "load ms", "{:.0f}"), ("cosine_min", "cos min", "{:.5f}"),
                   ("cosine_mean", "cos mean", "{:.5f}"))
INDEX_COLUMNS = (("index", "index", "{}"), ("files", "files", "{:,}"), ("chunks", "chunks", "{:,}"),
                 ("seconds", "s", "{:.1f}"), ("chunks_per_s", "chunks/s", "{:.2f}"), ("speedup", "x today", "{:.1f}"),
                 ("index_max_diff", "max diff", "{:.1g}"))
INGEST_COLUMNS = (("ingest", "ingest", "{}"), ("handoffs", "handoffs", "{:,}"), ("seconds", "s", "{:.2f}"),
                  ("handoffs_per_s", "handoffs/s", "{:.1f}"), ("texts_embedded", "embedded", "{:,}"),
                  ("tasks_embedded_twice", "twice", "{:,}"), ("task_vectors", "vectors", "{:,}"))


def table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, str]]) -> str:
    cells = [[title for _, title, _ in columns]]
    cells += [[fmt.format(row[key]) if row.get(key) is not None else "-" for key, _, fmt in columns] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths,
                                                                                                    strict=True)))
                     for r in cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks --embedding", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="15 rounds and a 1,000-node project (default 40, 2,000)")
    parser.add_argument("--rounds", type=int, help="timed rounds per runtime and text")
    parser.add_argument("--nodes", type=int, help="the ingestion rows' synthetic project size")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    parser.add_argument("--index-only", action="store_true", help="the index rows alone")
    args = parser.parse_args(argv)
    rounds = args.rounds or (15 if args.quick else 40)
    nodes = args.nodes or (1_000 if args.quick else 2_000)
    started = time.perf_counter()
    result: dict[str, Any] = {"index": index_rows(14 if args.quick else 7), "rounds": rounds, "machine": machine()}
    if not args.index_only:
        result |= {"runtimes": runtime_rows(rounds), "ingestion": ingestion_rows(nodes)}
    log(f"[embedding] done in {time.perf_counter() - started:.0f}s")
    if args.json:
        print(json.dumps(result))
    else:
        if not args.index_only:
            print(table(result["runtimes"], RUNTIME_COLUMNS))
            print()
            print(table(result["ingestion"], INGEST_COLUMNS))
            print()
        print(table(result["index"], INDEX_COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
