"""The associative memory's cost: retrieval per context on 10,000 chunks, and
indexing throughput.

Retrieval is what a context pays when memory is on: embedding the task's text
(all-MiniLM-L6-v2, 128 word pieces), the store's vector and full-text searches
(top 5 each), the file gates on the hits, and the fusion. It is timed on a
synthetic project of ``--chunks`` chunks (seeded: random unit vectors and
Zipf-distributed words over 2,000 files that exist on disk), on the embedded
store and, when ``NEO4J_URI`` is set, on Neo4j (whose database is EMPTIED).
The first query of each store (loading the model, reading the chunks into
the in-process index) is timed apart as ``first_ms``; the next ``--warmup``
queries (20) are not timed: a server answering contexts all day has its code
compiled and its freshly written index segments merged, and the figures are
for that steady state.

Indexing throughput is ``ctxgraph index`` on a real tree (this repository's
``ctxgraph/`` package by default, ``--index-tree``) into a fresh embedded
store: chunks embedded and written per second.

    python -m benchmarks.recall [--chunks N] [--queries N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ctxgraph.compute.code_memory import fuse
from ctxgraph.compute.config import ContextConfig
from ctxgraph.core.models import MemoryChunk, MemoryProject
from ctxgraph.core.vectors import DIMENSIONS
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.embed import shared_embedder
from ctxgraph.memory.index import index_project, now
from ctxgraph.memory.recall import recall
from ctxgraph.memory.text import search_text
from ctxgraph.signals import terms

FILES = 2000
WORDS = [f"w{n}" for n in range(5000)]
QUERY_WORDS = ["login", "password", "cache", "invoice", "retry", "timeout", "parser", "session", "token",
               "render", "schema", "migration", "queue", "upload", "header", "cookie", "redirect", "route"]


def synthetic(root: Path, chunks: int, seed: int) -> tuple[MemoryProject, list[MemoryChunk]]:
    rng = random.Random(seed)
    weights = [1 / (i + 1) for i in range(len(WORDS))]
    vocab = QUERY_WORDS + WORDS
    vocab_weights = [0.5] * len(QUERY_WORDS) + weights
    vectors = np.random.default_rng(seed).standard_normal((chunks, DIMENSIONS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    per_file = max(1, chunks // FILES)
    out: list[MemoryChunk] = []
    for n in range(chunks):
        path = f"src/pkg{n // per_file % 40}/mod{n // per_file}.py"
        start = (n % per_file) * 40 + 1
        text = " ".join(rng.choices(vocab, vocab_weights, k=120))
        out.append(MemoryChunk(path=path, start_line=start, end_line=start + 39, text=text, text_hash=f"{n}",
                               token_estimate=300, file_sha256=f"sha-{n // per_file}",
                               embedding=tuple(float(x) for x in vectors[n]),
                               search_text=search_text(path, text)))
    for path in {c.path for c in out}:
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text("def f():\n    return 1\n", encoding="utf-8")
    project = MemoryProject(id="bench", root=str(root), indexed_at=now(), embeddings=True,
                            model="all-MiniLM-L6-v2", files=len({c.path for c in out}), chunks=chunks)
    return project, out


def load(store: KnowledgeStore, project: MemoryProject, chunks: list[MemoryChunk]) -> float:
    started = time.perf_counter()
    for i in range(0, len(chunks), 1000):
        store.write_memory(project, chunks[i:i + 1000], [])
    return time.perf_counter() - started


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def time_retrieval(store: KnowledgeStore, queries: list[str], warmup: int) -> dict[str, float]:
    projects = tuple(store.memory_projects())
    config = ContextConfig()
    embedder = shared_embedder()
    parts: dict[str, list[float]] = {"embed": [], "search": [], "total": []}

    class Timed:
        def embed(self, texts: Any, max_pieces: int = 256) -> Any:
            t = time.perf_counter()
            out = embedder.embed(texts, max_pieces)
            parts["embed"].append((time.perf_counter() - t) * 1000)
            return out

    first = 0.0
    for n, text in enumerate(queries):
        t = time.perf_counter()
        found, _ = recall(store, projects, text, terms(text), project="bench", stale_hours=24, embedder=Timed())
        assert found is not None and found.by_vector, "the benchmark's project must be searchable"
        fuse([], found, config)
        ms = (time.perf_counter() - t) * 1000
        if n <= warmup:
            first = ms if n == 0 else first
            parts["embed"].clear()
            continue
        parts["total"].append(ms)
        parts["search"].append(ms - parts["embed"][-1])
    return {"first_ms": round(first, 1), "queries": len(queries) - 1 - warmup,
            **{f"{k}_p50_ms": round(pct(v, 50), 2) for k, v in parts.items()},
            **{f"{k}_p95_ms": round(pct(v, 95), 2) for k, v in parts.items()}}


@contextmanager
def neo4j_store() -> Iterator[KnowledgeStore | None]:
    if not os.environ.get("NEO4J_URI"):
        yield None
        return
    from ctxgraph.graph.neo4j_store import Neo4jSettings, Neo4jStore

    store = Neo4jStore.connect(Neo4jSettings.from_env())
    try:
        store.clear()
        store.init_schema()
        yield store
    finally:
        store.clear()
        store.close()


def indexing_throughput(tree: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore.open(Path(tmp) / "graph.db")
        try:
            shared_embedder()  # loading the model is not indexing
            report = index_project(store, tree, project="throughput")
        finally:
            store.close()
    return {"files": report.files, "chunks": report.chunks, "seconds": round(report.seconds, 1),
            "chunks_per_s": round(report.chunks_per_s, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recall", description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20, help="queries answered untimed after the first")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--index-tree", type=Path, default=Path(__file__).resolve().parents[1] / "ctxgraph")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    queries = [" ".join(rng.choices(QUERY_WORDS, k=rng.randint(6, 14))) for _ in range(args.queries + 1 + args.warmup)]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        project, chunks = synthetic(Path(tmp) / "project", args.chunks, args.seed)
        print(f"{len(chunks):,} synthetic chunks over {project.files:,} files", file=sys.stderr)
        local = LocalStore.open(Path(tmp) / "graph.db")
        try:
            write_s = load(local, project, chunks)
            rows.append({"store": "local", "chunks": len(chunks), "write_chunks_per_s": round(len(chunks) / write_s),
                         **time_retrieval(local, queries, args.warmup)})
        finally:
            local.close()
        with neo4j_store() as neo:
            if neo is not None:
                write_s = load(neo, project, chunks)
                rows.append({"store": "neo4j", "chunks": len(chunks),
                             "write_chunks_per_s": round(len(chunks) / write_s),
                             **time_retrieval(neo, queries, args.warmup)})
    throughput = indexing_throughput(args.index_tree)
    result = {"rows": rows, "indexing": throughput, "cpus": os.cpu_count()}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    cols = ["store", "chunks", "first_ms", "embed_p50_ms", "embed_p95_ms", "search_p50_ms", "search_p95_ms",
            "total_p50_ms", "total_p95_ms", "write_chunks_per_s"]
    print(" | ".join(cols))
    for row in rows:
        print(" | ".join(str(row[c]) for c in cols))
    print(f"indexing {args.index_tree}: {throughput['files']} files, {throughput['chunks']} chunks in "
          f"{throughput['seconds']} s = {throughput['chunks_per_s']} chunks/s (embedded store, numpy model)")


if __name__ == "__main__":
    main()
