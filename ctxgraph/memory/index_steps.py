"""The steps of one run of :func:`ctxgraph.memory.index.index_project`: the
new and changed files chunked as needed, and their chunks embedded in calls
sized to take about :data:`CALL_SECONDS` each (and to end by the run's
deadline)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import nullcontext
from typing import TYPE_CHECKING

from ctxgraph.core.models import FileStat, MemoryChunk
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.memory.chunk import Chunk, chunk_file
from ctxgraph.memory.scan import SourceFile
from ctxgraph.memory.text import search_text

if TYPE_CHECKING:
    from ctxgraph.memory.embed import Vectors  # (numpy: imported when a run embeds)

#: Lines of a file the lightweight index keeps.
FIRST_LINES = 30
#: Chunks per call of the embedder: at most, and on the first call (before
#: the run knows how fast the model goes on this machine). A call sorts its
#: chunks by length, so that a forward pass pads little.
EMBED_BATCH = 64
FIRST_EMBED_BATCH = 1
#: What one call of the embedder should take (seconds): the run checks its
#: time limit and reports progress between calls.
CALL_SECONDS = 1.0
#: A call expected to end more than this many seconds past the time limit is
#: not started (on a busy machine one chunk can take seconds).
GRACE_SECONDS = 1.0


def file_chunks(source: SourceFile, *, lightweight: bool) -> list[Chunk]:
    chunks = chunk_file(source.path, source.text)
    if not lightweight or not chunks:
        return chunks
    lines = source.text.splitlines()
    head = lines[:FIRST_LINES]
    text = "\n".join(head).strip("\n")
    first = next(i for i, line in enumerate(head, start=1) if line.strip())
    return [Chunk(first, min(len(lines), FIRST_LINES), text, estimate_tokens(text))]


class IndexFile:
    """A file being indexed: its chunks, and their vectors as they come (a
    chunk whose text the file's stored chunks already had keeps that vector:
    the embedder is given ``path + text``, the same input, so the same vector)."""

    def __init__(self, source: SourceFile, stat: FileStat | None, *, lightweight: bool,
                 known: dict[str, tuple[float, ...]] | None = None) -> None:
        self.source = source
        self.rows = [
            MemoryChunk(path=source.path, start_line=c.start_line, end_line=c.end_line, text=c.text,
                        text_hash=c.text_hash, token_estimate=c.token_estimate, file_sha256=source.sha256,
                        file_mtime_ns=stat.mtime_ns if stat else 0, file_size=stat.size if stat else -1,
                        search_text=search_text(source.path, c.text))
            for c in file_chunks(source, lightweight=lightweight)
        ]
        self.needs_vectors = not lightweight
        self.vectors: list[tuple[float, ...] | None] = [(known or {}).get(r.text_hash) for r in self.rows]
        self.reused = sum(v is not None for v in self.vectors) if self.needs_vectors else 0

    @property
    def left(self) -> int:
        """Chunks still to embed."""
        return sum(v is None for v in self.vectors) if self.needs_vectors else 0

    def texts(self, n: int) -> list[tuple[int, str]]:
        """The next ``n`` (at most) chunks to embed: (position, text)."""
        return [(i, f"{r.path}\n{r.text}") for i, r in enumerate(self.rows) if self.vectors[i] is None][:n]

    def finished(self) -> list[MemoryChunk]:
        if not self.needs_vectors:
            return self.rows
        return [r.model_copy(update={"embedding": v}) for r, v in zip(self.rows, self.vectors, strict=True)]


class IndexRun:
    """The files of one run, chunked as needed and embedded in calls sized to
    take about :data:`CALL_SECONDS` (and to end by the deadline)."""

    def __init__(self, changed: list[SourceFile], stats: dict[str, FileStat], *, embeddings: bool,
                 embedder: Vectors | None, deadline: float | None, cancel: threading.Event | None = None,
                 known_vectors: dict[str, dict[str, tuple[float, ...]]] | None = None) -> None:
        self._cancel = cancel
        self._known_vectors = known_vectors or {}
        self.reused = 0
        self._files = iter(changed)
        self._stats = stats
        self._embeddings = embeddings
        self._embedder = embedder
        self._deadline = deadline
        self._seconds_per_chunk: float | None = None
        self.files_done = 0
        self.chunks = 0
        self.stopped = False

    def _batch(self) -> int:
        """Chunks for the next embedder call."""
        if self._seconds_per_chunk is None:
            return FIRST_EMBED_BATCH
        seconds = CALL_SECONDS
        if self._deadline is not None:
            seconds = min(seconds, self._deadline - time.monotonic())
        return max(1, min(EMBED_BATCH, int(seconds / self._seconds_per_chunk)))

    def _over(self, want: int) -> bool:
        """Cancelled, past the deadline, or a call of ``want`` chunks would end well past it."""
        if self._cancel is not None and self._cancel.is_set():
            return True
        if self._deadline is None:
            return False
        expected = (self._seconds_per_chunk or 0.0) * want if self._embeddings else 0.0
        now = time.monotonic()
        return now >= self._deadline or now + expected > self._deadline + GRACE_SECONDS

    def steps(self) -> Iterator[list[IndexFile]]:
        """After each step (one embedder call, or one file without embeddings),
        the files it finished; stops at the deadline (``stopped``) or the end."""
        queue: list[IndexFile] = []
        done_any = False
        exhausted = False
        while True:
            want = self._batch() if self._embeddings else 1
            while not exhausted and (not queue or (self._embeddings and sum(f.left for f in queue) < want)):
                source = next(self._files, None)
                if source is None:
                    exhausted = True
                else:
                    queue.append(IndexFile(source, self._stats.get(source.path), lightweight=not self._embeddings,
                                       known=self._known_vectors.get(source.path)))
                    self.reused += queue[-1].reused
            if not queue:
                return
            # Every run finishes a file at least, so that runs under a short limit still advance.
            if (done_any or (self._cancel is not None and self._cancel.is_set())) and self._over(want):
                self.stopped = True
                return
            if self._embeddings:
                self._embed(queue, want)
            finished: list[IndexFile] = []
            while queue and queue[0].left == 0:
                finished.append(queue.pop(0))
            self.files_done += len(finished)
            self.chunks += sum(len(f.rows) for f in finished)
            done_any = done_any or bool(finished)
            yield finished

    def _embed(self, queue: list[IndexFile], want: int) -> None:
        texts: list[str] = []
        takers: list[tuple[IndexFile, list[int]]] = []
        for f in queue:
            if len(texts) >= want:
                break
            part = f.texts(want - len(texts))
            if part:
                texts += [text for _, text in part]
                takers.append((f, [i for i, _ in part]))
        if not texts:
            return
        assert self._embedder is not None
        from ctxgraph.signals import _blas

        # numpy's OpenBLAS on one thread while the model runs: on a busy machine its
        # default threads wait for a CPU (one chunk took 4.2 s against 0.46 s on one
        # thread here, load 9 on 2 cores); nestable, so a runtime that bounds its
        # own threads is unaffected.
        blas = _blas.find()
        began = time.monotonic()
        # An embedder's bulk path (onnx: a session on index_threads() threads) when it has one.
        embed = getattr(self._embedder, "embed_bulk", self._embedder.embed)
        with blas.single() if blas is not None else nullcontext():
            vectors = embed(texts)
        per_chunk = (time.monotonic() - began) / len(texts)
        self._seconds_per_chunk = per_chunk if self._seconds_per_chunk is None \
            else 0.5 * self._seconds_per_chunk + 0.5 * per_chunk
        at = 0
        for f, positions in takers:
            for i in positions:
                f.vectors[i] = tuple(float(x) for x in vectors[at])
                at += 1
