"""Task vectors: the finished tasks' vectors the history's neighbours are
found by (``embed_tasks``), and each task's query vector, what its contexts
search by — the history's neighbours and the associative memory alike.

A stored task's query vector is made once, from its text cut to
``QUERY_PIECES`` word pieces, when the task is added or its text changes (or
at its first context, when the model was not loaded then), and stored with the
hash of that text: every later context of the task reads it instead of
embedding, in any process. An unsaved task's text is embedded once per
context. Every embedding happens after the write it belongs to, in batches,
and only for tasks whose stored vector is not of their current text — checked
right before embedding, so a task another process embedded meanwhile is not
embedded again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from ctxgraph.core.models import Task
from ctxgraph.core.vectors import QUERY_PIECES
from ctxgraph.errors import CtxgraphError
from ctxgraph.graph.records import text_hash
from ctxgraph.service.base import ServiceBase

log = logging.getLogger(__name__)

#: Task texts embedded per batch (``embed_tasks``) and the word pieces kept of each.
TASK_EMBED_BATCH = 64
TASK_PIECES = 256
#: Task vectors stored per write (``embed_tasks``). On Neo4j each write
#: transaction adds a segment to the vector index, which the server merges in
#: the background (docs/embedding.md, "Neo4j's vector indexes"): fewer, larger
#: writes leave it less to merge and a search less to walk meanwhile.
TASK_WRITE_BATCH = 4096
#: How often a service asks the store again whether any task has a vector.
VECTORS_RECHECK_SECONDS = 60.0


class VectorsMixin(ServiceBase):
    """Finished tasks' vectors and tasks' query vectors."""

    def _embedder(self) -> Any:
        if self.embedder is None:
            from ctxgraph.memory.embed import shared_embedder

            self.embedder = shared_embedder()
        return self.embedder

    # -- finished tasks' vectors (what the neighbours are found among) ------------------

    def embed_tasks(self, pending: Sequence[tuple[str, str]] | None = None, *, tasks: Sequence[str] | None = None,
                    batch: int = TASK_EMBED_BATCH, progress: Callable[[int], None] | None = None,
                    stop: Callable[[], bool] | None = None) -> int:
        """Embed the finished tasks that have no vector of their current text
        (all-MiniLM-L6-v2, local), ``batch`` texts at a time, stored every
        :data:`TASK_WRITE_BATCH` vectors and at the end: an interrupted run keeps
        what it wrote. ``pending``: the store's
        ``tasks_to_embed`` when the caller has read them already; ``tasks``:
        only among these ids (an ingest's own tasks). Before each batch the store
        is asked again which of its tasks still need a vector, so that what
        another process embedded meanwhile is skipped; a task whose stored
        query vector was made of all of its current text takes that one (the
        same vector) instead of being embedded. Returns how many got a vector;
        ``progress(n)`` after each batch of ``n`` (skipped ones included);
        ``stop()``, asked before each batch, ends the run early when true
        (what was embedded is written).
        Raises :class:`~ctxgraph.memory.embed.EmbeddingUnavailableError`
        when the model cannot load."""
        if pending is None:
            pending = self.store.tasks_to_embed(10**9, tasks)
        if not pending:
            return 0
        done = 0
        unwritten: list[tuple[str, str, Sequence[float]]] = []  # float32 rows until written
        for start in range(0, len(pending), batch):
            if stop is not None and stop():
                break
            chunk = pending[start:start + batch]
            still = set(dict(self.store.tasks_to_embed(len(chunk), [tid for tid, _ in chunk])))
            todo = [(tid, text) for tid, text in chunk if tid in still]
            whole = self._whole_query_vectors(todo)
            unwritten += [(tid, text_hash(text), whole[tid]) for tid, text in todo if tid in whole]
            done += len(whole)
            todo = [(tid, text) for tid, text in todo if tid not in whole]
            if todo:
                vectors = self._embedder().embed([text for _, text in todo], max_pieces=TASK_PIECES)
                unwritten += [(tid, text_hash(text), vec) for (tid, text), vec in zip(todo, vectors, strict=True)]
                done += len(todo)
            last = start + batch >= len(pending)
            if unwritten and (len(unwritten) >= TASK_WRITE_BATCH or last):
                self.store.write_task_vectors(unwritten)
                unwritten = []
            if progress:
                progress(len(chunk))
        if unwritten:  # stopped early
            self.store.write_task_vectors(unwritten)
        self._vectors_seen = None
        return done

    def _whole_query_vectors(self, tasks: Sequence[tuple[str, str]]) -> dict[str, list[float]]:
        """The stored query vectors of ``tasks`` (id, text) that are of their
        current text and were made of all of it (at most ``QUERY_PIECES`` word
        pieces): the vectors ``TASK_PIECES`` would give, without embedding."""
        if not tasks:
            return {}
        have = self.store.task_query_vectors([tid for tid, _ in tasks])
        same = [(tid, text) for tid, text in tasks if tid in have and have[tid][0] == text_hash(text)]
        if not same:
            return {}
        from ctxgraph.memory.model import shared_tokenizer

        counts = [len(e.ids) for e in shared_tokenizer().encode_batch([text for _, text in same])]
        return {tid: have[tid][1] for (tid, _), n in zip(same, counts, strict=True) if n <= QUERY_PIECES}

    def tasks_to_embed(self) -> list[tuple[str, str]]:
        """The finished tasks (id, text) that have no vector of their current text."""
        return self.store.tasks_to_embed(10**9)

    def task_vector_count(self) -> int:
        """How many tasks have a vector."""
        return self.store.task_vector_count()

    # -- query vectors (what a context searches by) ------------------------------------

    def _vectors_in_store(self) -> bool:
        """Whether finished tasks have vectors (asked again once a minute)."""
        now = time.monotonic()
        if self._vectors_seen is None or now - self._vectors_seen[0] > VECTORS_RECHECK_SECONDS:
            self._vectors_seen = (now, self.store.has_task_vectors())
        return self._vectors_seen[1]

    def store_query_vectors(self, tasks: Sequence[Task]) -> int:
        """Embed and store the query vectors of ``tasks`` whose stored one is
        not of their current text, in one batch; how many were embedded. Only
        when contexts would use them (finished tasks have vectors and
        ``task_vectors`` is on); a model that cannot load or a failed write
        leaves them to the tasks' first contexts."""
        if not self.task_vectors or not tasks or not self._vectors_in_store():
            return 0
        wanted = {t.id: (t.text, text_hash(t.text)) for t in tasks if t.text.strip()}
        try:
            have = self.store.task_query_vectors(sorted(wanted))
            todo = [(tid, text, digest) for tid, (text, digest) in wanted.items()
                    if have.get(tid, ("",))[0] != digest]
            if not todo:
                return 0
            vectors = self._embedder().embed([text for _, text, _ in todo], max_pieces=QUERY_PIECES)
            self.store.write_task_query_vectors([(tid, digest, [float(x) for x in vec])
                                                 for (tid, _, digest), vec in zip(todo, vectors, strict=True)])
        except Exception as exc:  # the tasks are written; their contexts embed them instead
            log.info("query vectors not stored: %s", exc)
            return 0
        return len(todo)

    def _query_vector(self, task: Task, notes: list[str], *, stored: bool,
                      known: tuple[str, list[float]] | None = None, needed: bool = False) -> list[float] | None:
        """The query vector of ``task`` when finished tasks have vectors or
        ``needed`` (the memory searches by vector), else None: ``known`` (the
        one stored with it: text hash, vector) when of its current text, else
        its text embedded — and, for a ``stored`` task, stored for its next
        contexts. An embedding failure is a note, not an error."""
        if not self.task_vectors or not task.text.strip():
            return None
        if not needed and not self._vectors_in_store():
            return None
        digest = text_hash(task.text)
        if known is not None and known[0] == digest:
            return known[1]
        try:
            vector = [float(x) for x in self._embedder().embed([task.text], max_pieces=QUERY_PIECES)[0]]
        except Exception as exc:  # any embedding failure only costs the neighbours by embedding
            log.warning("embedding the task failed: %s", exc)
            notes.append(f"history: embedding the task failed ({exc}); neighbours by full text only")
            return None
        if stored:
            try:
                self.store.write_task_query_vectors([(task.id, digest, vector)])
            except CtxgraphError as exc:  # a read-only store: embedded again next time
                log.info("query vector of %s not stored: %s", task.id, exc)
        return vector


__all__ = ["TASK_PIECES", "TASK_WRITE_BATCH", "VectorsMixin"]
