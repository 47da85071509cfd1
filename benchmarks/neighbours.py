"""The cost of the history's neighbours by embedding, per context and per task.

A context with task vectors pays two things more than one without: embedding
its own text (all-MiniLM-L6-v2, up to 128 word pieces) and the store's
nearest-neighbour search over the finished tasks' vectors (exact cosine on
the embedded store, the ``task_embedding`` vector index on Neo4j). Both are
timed here, apart:

- ``embed_p50_ms`` / ``embed_p95_ms``: one task text embedded (5 to 120
  words of this repository's README, seeded);
- per store and size: the history a context reads (``gather_with_history``
  with a gather that asks for nothing) with the query's vector against the
  same call without it (``plain``), p50 and p95 over ``--queries``
  queries, on a synthetic history of ``--sizes`` finished tasks (seeded:
  random unit vectors, each task touching one of 2,000 files, terms from a
  Zipf-like vocabulary), the vectors written ``TASK_WRITE_BATCH`` at a time as
  ``ContextService.embed_tasks`` writes them;
- ``embed_tasks_per_s``: task texts embedded per second in batches (the
  model's throughput on this machine, what ``ctxgraph embed-tasks`` runs at).

Neo4j runs when ``NEO4J_URI`` is set; its database is EMPTIED.

    python -m benchmarks.neighbours [--sizes 1000,10000] [--queries N] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.recall import neo4j_store, pct
from ctxgraph.core.models import GatherQuery, Task, TaskStatus
from ctxgraph.core.vectors import DIMENSIONS
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.records import text_hash
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.embed import QUERY_PIECES, shared_embedder
from ctxgraph.service import TASK_WRITE_BATCH
from ctxgraph.signals import TaskSignals

VOCABULARY = [f"word{n}" for n in range(3000)]
WEIGHTS = [1.0 / (n + 1) for n in range(len(VOCABULARY))]
#: English words for the texts embedded (word pieces as a task text has them):
#: this repository's README, read at run time.
PROSE = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").split()


def texts(rng: random.Random, n: int) -> list[str]:
    """``n`` task-like texts of 5 to 120 words."""
    return [" ".join(rng.choices(PROSE, k=rng.randint(5, 120))) for _ in range(n)]


def fill(store: KnowledgeStore, size: int, seed: int) -> None:
    """``size`` finished tasks with random unit vectors (no handoffs: the search is what is timed)."""
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed).normal(size=(size, DIMENSIONS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for start in range(0, size, TASK_WRITE_BATCH):
        batch = []
        for i in range(start, min(size, start + TASK_WRITE_BATCH)):
            words = " ".join(rng.choices(VOCABULARY, WEIGHTS, k=12))
            batch.append(Task(id=f"t{i:07d}", name=words, objective="", status=TaskStatus.COMPLETED,
                              completed_at=f"2026-01-01T00:00:{i % 60:02d}Z", signals=TaskSignals()))
        store.upsert_tasks(batch)
        store.write_task_vectors([(t.id, text_hash(t.text), vectors[int(t.id[1:])].tolist()) for t in batch])


#: A gather that asks for nothing: the history alone is timed.
NOTHING = GatherQuery(keywords=(), domains=(), files=(), dep_ids=(), exclude=(), keyword_limit=0,
                      domain_limit=0, related_limit=0, recent_limit=0, working_memory=False, context_map=False)


def time_search(store: KnowledgeStore, queries: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed + 1)
    vecs = np.random.default_rng(seed + 1).normal(size=(queries + 1, DIMENSIONS)).astype(np.float32)
    plain: list[float] = []
    dense: list[float] = []
    for n in range(queries + 1):
        words = tuple(dict.fromkeys(rng.choices(VOCABULARY, WEIGHTS, k=8)))
        t = time.perf_counter()
        store.gather_with_history(NOTHING, words, 10)
        t1 = time.perf_counter()
        _, found = store.gather_with_history(NOTHING, words, 10, vecs[n].tolist())
        t2 = time.perf_counter()
        assert found.neighbours, "the benchmark's tasks must have vectors"
        if n:  # the first call of each kind builds caches
            plain.append((t1 - t) * 1000)
            dense.append((t2 - t1) * 1000)
    return {"plain_p50_ms": round(pct(plain, 50), 2), "plain_p95_ms": round(pct(plain, 95), 2),
            "vector_p50_ms": round(pct(dense, 50), 2), "vector_p95_ms": round(pct(dense, 95), 2)}


def embedding(seed: int, samples: int) -> dict[str, float]:
    embedder = shared_embedder()
    embedder.embed(["warm up"])
    rng = random.Random(seed + 2)
    one = []
    for text in texts(rng, samples):
        t = time.perf_counter()
        embedder.embed([text], max_pieces=QUERY_PIECES)
        one.append((time.perf_counter() - t) * 1000)
    batch = texts(rng, 4 * samples)
    t = time.perf_counter()
    embedder.embed(batch)  # task texts: up to 256 word pieces
    seconds = time.perf_counter() - t
    return {"embed_p50_ms": round(pct(one, 50), 2), "embed_p95_ms": round(pct(one, 95), 2),
            "embed_tasks_per_s": round(len(batch) / seconds, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.neighbours", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="finished tasks per run, comma-separated")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--texts", type=int, default=64, help="texts embedded one by one (and 4x as many in batches)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    out: dict[str, Any] = {"embedding": embedding(args.seed, args.texts), "runs": []}
    for size in sizes:
        print(f"embedded store, {size:,} tasks ...", file=sys.stderr)
        with tempfile.TemporaryDirectory() as tmp:
            store = LocalStore.open(Path(tmp) / "graph.db")
            try:
                fill(store, size, args.seed)
                out["runs"].append({"store": "local", "tasks": size, **time_search(store, args.queries, args.seed)})
            finally:
                store.close()
        with neo4j_store() as neo:
            if neo is not None:
                print(f"neo4j, {size:,} tasks ...", file=sys.stderr)
                fill(neo, size, args.seed)
                out["runs"].append({"store": "neo4j", "tasks": size, **time_search(neo, args.queries, args.seed)})
    if args.json:
        print(json.dumps(out, indent=2))
        return
    e = out["embedding"]
    print(f"embedding one task text: p50 {e['embed_p50_ms']} ms, p95 {e['embed_p95_ms']} ms; "
          f"{e['embed_tasks_per_s']} task texts/s in batches")
    print("| store | tasks | plain p50 ms | plain p95 ms | with vector p50 ms | with vector p95 ms |")
    print("|---|---|---|---|---|---|")
    for r in out["runs"]:
        print(f"| {r['store']} | {r['tasks']:,} | {r['plain_p50_ms']} | {r['plain_p95_ms']} | "
              f"{r['vector_p50_ms']} | {r['vector_p95_ms']} |")


if __name__ == "__main__":
    main()
