"""A row's graph given the vectors ``ctxgraph ingest handoff`` leaves with the
model installed: every finished task's vector (``embed_tasks``) and the
stored query vectors of the tasks whose contexts are measured
(``store_query_vectors``), made after the load.

Embedding the generator's task texts is most of a large row's load (~60 texts/s
with onnx on a busy 2-core machine: ~5 minutes for the ~17,000 finished tasks of
100,000 nodes), so the vectors are kept by text in ``vectors.npz`` in the
benchmark's cache folder (``CachedEmbedder``: keyed by the text's hash, the
runtime and the word pieces kept): a re-run, the other store's row or another
size of the same seed embeds only texts it has not met. The cache is saved
every :data:`SAVE_EVERY` texts, so an interrupted first run keeps what it made.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ctxgraph import ContextService

CACHE_FILE = "vectors.npz"
SAVE_EVERY = 2_048


def embed_graph(svc: ContextService, queries: Sequence[str], cache: Path,
                say: Callable[[str], None]) -> dict[str, Any]:
    """Embed the graph's finished tasks and store the query tasks' query vectors
    (texts from ``cache/vectors.npz`` when made before); the figures of it.
    Raises ``EmbeddingUnavailableError`` when the model cannot load."""
    from ctxgraph.memory.embed import CachedEmbedder, shared_embedder

    t0 = time.perf_counter()
    cached = CachedEmbedder(cache / CACHE_FILE, shared_embedder())
    svc.embedder = cached
    svc.task_vectors = True
    try:
        pending = svc.tasks_to_embed()
        say(f"embedding {len(pending):,} finished tasks (cached by text in {cache / CACHE_FILE})")
        done = [0, 0]

        def progress(n: int) -> None:
            done[0] += n
            if done[0] - done[1] >= SAVE_EVERY or done[0] == len(pending):
                cached.save()
                say(f"task vectors {done[0]:,}/{len(pending):,} ({time.perf_counter() - t0:.0f}s)")
                done[1] = done[0]

        embedded = svc.embed_tasks(pending, progress=progress)
        stored = svc.store_query_vectors([svc.get_task(q) for q in queries])
        cached.save()
    finally:
        svc.embedder = None  # contexts embed with the process's runtime, uncached
    seconds = time.perf_counter() - t0
    say(f"{embedded:,} task vectors and {stored} query vectors stored in {seconds:.1f}s")
    return {"embed_s": seconds, "task_vectors": svc.task_vector_count(), "query_vectors": stored}


__all__ = ["CACHE_FILE", "embed_graph"]
