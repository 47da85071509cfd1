"""Indexing a project's files into the associative memory (``ctxgraph index``).

A run scans the project with the stat-then-hash scan
(:func:`ctxgraph.memory.scan.changes`): a file whose modification time and
size are those stored with its chunks is not read; any other is read and its
sha256 compared with the one its chunks were made from. Only the new and
changed files are re-chunked, embedded and written (a file whose content is
the same gets its new stat recorded); chunks of files that disappeared (or
are now skipped) are removed. When many files are new (a first index), their
chunks are written first without vectors, for full-text search at once, and
then again with their vectors. Files are written in batches, one
transaction each, so an interrupted run keeps what it finished and the next
run resumes where it stopped. The project's ``indexed_at`` is set only when a
run has covered every file: a project that never finished a run has none.

Two kinds of index:

- **embeddings** (default): every chunk of every file (:mod:`.chunk`), with its
  all-MiniLM-L6-v2 vector (:mod:`.embed`) and its full-text terms;
- **lightweight** (``embeddings=False``, no ML): one chunk per file, its first
  :data:`FIRST_LINES` lines, found by full-text search over the file's path
  and those lines.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ctxgraph.core.models import FileStat, MemoryChunk, MemoryProject
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.errors import ConfigurationError
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.chunk import Chunk, chunk_file
from ctxgraph.memory.scan import Skipped, SourceFile, changes, shown
from ctxgraph.memory.secrets import DEFAULT, SecretFilter
from ctxgraph.memory.text import search_text

if TYPE_CHECKING:
    from ctxgraph.memory.embed import Vectors  # (numpy: imported when a run embeds)

#: Lines of a file the lightweight index keeps.
FIRST_LINES = 30
#: Files per write transaction (at most).
BATCH_FILES = 25
#: Finished files are written at least this often (seconds), so that a run
#: stopped by its time limit, or killed, keeps nearly all it did.
WRITE_SECONDS = 5.0
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
#: What a project id may be made of (it prefixes chunk ids).
PROJECT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: The model name recorded with an embedding index.
MODEL = "all-MiniLM-L6-v2"



@dataclass(frozen=True)
class IndexProgress:
    """Where a run is: ``phase`` is ``model`` (loading the embedder),
    ``scanning`` (reading the files), ``full text`` (writing many new files'
    chunks before their vectors) or ``indexing``; ``files_done`` of
    ``files_total`` new or changed files are chunked (and embedded), holding
    ``chunks`` chunks, in ``indexing_seconds`` of indexing; of the
    ``files_found`` files, ``files_unchanged`` needed nothing."""

    project: str
    phase: str
    files_done: int = 0
    files_total: int = 0
    chunks: int = 0
    files_written: int = 0
    indexing_seconds: float = 0.0
    files_found: int = 0
    files_unchanged: int = 0

    @property
    def files_indexed(self) -> int:
        """Files whose chunks are in the store now (unchanged, or written by this run)."""
        return self.files_unchanged + self.files_written

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / self.indexing_seconds if self.indexing_seconds > 0 else 0.0


Progress = Callable[[IndexProgress], None]


@dataclass
class IndexReport:
    project: str
    root: str
    embeddings: bool
    files: int = 0  # text files found
    read: int = 0  # files opened by the scan (the others' stat was unchanged)
    indexed: int = 0  # new or changed files (re)written
    unchanged: int = 0
    removed: int = 0  # files whose chunks were dropped
    chunks: int = 0  # chunks written by this run
    vectors_reused: int = 0  # of which kept their stored vector (their text had not changed)
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0
    complete: bool = True  # False when the time limit (or a cancel) stopped the run
    #: the files found added, changed and deleted by the scan
    paths: dict[str, list[str]] = field(default_factory=dict)
    indexed_at: str = ""
    #: values redacted per file read by this run (every file with ``explain``), never the values
    redacted: dict[str, int] = field(default_factory=dict)
    #: every file was read (``explain``): ``redacted`` covers them all
    explained: bool = False

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "project": self.project, "root": self.root, "embeddings": self.embeddings, "files": self.files,
            "read": self.read, "indexed": self.indexed, "unchanged": self.unchanged, "removed": self.removed,
            "chunks": self.chunks, "vectors_reused": self.vectors_reused,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "seconds": round(self.seconds, 3), "chunks_per_s": round(self.chunks_per_s, 1),
            "complete": self.complete, "files_left": self.files - self.unchanged - self.indexed,
            "indexed_at": self.indexed_at, **{k: self.paths.get(k, []) for k in ("added", "changed", "deleted")},
            "redacted": dict(sorted(self.redacted.items())), "explained": self.explained,
        }


def project_id_for(root: Path, project: str | None) -> str:
    """The project id: ``project`` if given, else the root folder's name."""
    name = project if project is not None else root.resolve().name
    if not PROJECT_ID.fullmatch(name or ""):
        raise ConfigurationError(
            f"project id {name!r}: use 1-100 letters, digits, '.', '_' or '-' (starting with a letter or "
            "digit); pass --project NAME"
        )
    return name


def now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def file_chunks(source: SourceFile, *, lightweight: bool) -> list[Chunk]:
    chunks = chunk_file(source.path, source.text)
    if not lightweight or not chunks:
        return chunks
    lines = source.text.splitlines()
    head = lines[:FIRST_LINES]
    text = "\n".join(head).strip("\n")
    first = next(i for i, line in enumerate(head, start=1) if line.strip())
    return [Chunk(first, min(len(lines), FIRST_LINES), text, estimate_tokens(text))]


def index_project(
    store: KnowledgeStore,
    root: str | Path,
    *,
    project: str | None = None,
    embeddings: bool = True,
    embedder: Vectors | None = None,
    progress: Progress | None = None,
    time_limit: float | None = None,
    cancel: threading.Event | None = None,
    secrets: SecretFilter | None = None,
    explain: bool = False,
) -> IndexReport:
    """Index (incrementally) the files under ``root`` as project ``project``.

    ``secrets``: the rules of what is never indexed (:mod:`.secrets`; the
    defaults when None) — files left out by name are reported as skipped, and
    the values redacted per file read are in the report's ``redacted``.
    ``explain`` reads every file, as if none were known, so that ``redacted``
    counts every file's (nothing is written again that did not change).

    ``progress`` is called with an :class:`IndexProgress` at each phase and
    after every embedder call (about every :data:`CALL_SECONDS`). With
    ``time_limit`` (seconds) the run stops once it is over, between two
    embedder calls sized to end in time; the files finished by then are
    written, a file half embedded is left for the next run (which goes on
    where this one stopped). Every run finishes one file at least.
    ``cancel`` (set by another thread) stops the run as the time limit does,
    at once: a server or a watcher that stops.
    """
    started = time.monotonic()
    deadline = None if time_limit is None else started + time_limit
    base = Path(root)
    if not base.is_dir():
        raise ConfigurationError(f"{root}: not a folder")
    base = base.resolve()
    try:
        str(base).encode("utf-8")
    except UnicodeEncodeError:  # its files' names may be anything; the root's is stored as text
        raise ConfigurationError(f"{shown(str(base))}: the root's own path is not UTF-8: rename it to "
                                 "index it") from None
    pid = project_id_for(base, project)

    def tell(phase: str, files_done: int = 0, files_total: int = 0, chunks: int = 0, files_written: int = 0,
             indexing_seconds: float = 0.0) -> None:
        if progress is not None:
            progress(IndexProgress(pid, phase, files_done, files_total, chunks, files_written, indexing_seconds,
                                   report.files, report.unchanged))

    state = store.memory_state(pid)
    previous = state.project
    report = IndexReport(project=pid, root=str(base), embeddings=embeddings)
    # A different kind of index, or another root, is rebuilt from scratch.
    known = state.file_hashes if previous is not None and previous.embeddings == embeddings \
        and previous.root == str(base) else {}
    tell("scanning")
    before = {p: st for p, st in state.file_stats.items() if p in known}
    scan = changes(base, before, secrets=secrets or DEFAULT, read_all=explain)
    report.skipped = scan.skipped
    report.redacted = scan.redacted
    report.explained = explain
    report.read = scan.read
    report.files = len(scan.stats)
    present = set(scan.stats)
    changed = scan.added + scan.changed
    report.unchanged = scan.unchanged
    gone = sorted(p for p in state.file_hashes if p not in present)
    if scan.touched:
        store.touch_memory(pid, scan.touched)
    if embeddings and embedder is None and changed:  # the model only when there is something to embed
        tell("model")
        from ctxgraph.memory.embed import shared_embedder

        embedder = shared_embedder()

    def record(indexed_at: str) -> MemoryProject:
        return MemoryProject(id=pid, root=str(base), indexed_at=indexed_at, embeddings=embeddings,
                             model=MODEL if embeddings else "", files=len(present), chunks=0,
                             files_indexed=min(len(present), report.unchanged + report.indexed))

    pending_at = previous.indexed_at if previous is not None and known else ""
    report.paths = scan.paths()
    # The vectors of a changed file's chunks, by text: its unchanged chunks are not embedded again.
    known_vectors = store.memory_vectors(pid, [f.path for f in scan.changed]) if embeddings and scan.changed \
        else {}
    # Full text first: when many files are new, their chunks are written at once without
    # vectors (seconds for a whole project; chunking is cheap), so that a context meanwhile
    # finds them by their words; the vectors follow. Their sha256 is left empty, so that a
    # run cut before a file's vectors reads that file again.
    text_first: set[str] = set()
    if embeddings and len(scan.added) > BATCH_FILES:
        tell("full text")
        for start in range(0, len(scan.added), BATCH_FILES):
            batch = [_File(f, None, lightweight=False) for f in scan.added[start:start + BATCH_FILES]]
            store.write_memory(record(pending_at), [r.model_copy(update={"file_sha256": ""}) for f in batch
                                                    for r in f.rows],
                               [f.source.path for f in batch if f.source.path in state.file_hashes])
            text_first.update(f.source.path for f in batch)
    run = _Run(changed, scan.stats, embeddings=embeddings, embedder=embedder, deadline=deadline, cancel=cancel,
               known_vectors=known_vectors)
    indexing = time.monotonic()

    def write(files: list[_File]) -> None:
        rows = [row for f in files for row in f.finished()]
        # (a file written for full text first needs no removal: the same text makes the same chunks,
        # whose ids the write overwrites; finding a path's chunks to remove costs a scan of them)
        replaced = [f.source.path for f in files if f.source.path in state.file_hashes or f.source.path in known]
        report.indexed += len(files)
        report.chunks += len(rows)
        store.write_memory(record(pending_at), rows, replaced)

    tell("indexing", files_total=len(changed))
    ready: list[_File] = []
    last_write = time.monotonic()
    for finished in run.steps():
        ready += finished
        if len(ready) >= BATCH_FILES or (ready and time.monotonic() - last_write >= WRITE_SECONDS):
            write(ready[:BATCH_FILES])
            ready = ready[BATCH_FILES:]
            last_write = time.monotonic()
        tell("indexing", files_done=run.files_done, files_total=len(changed), chunks=run.chunks,
             files_written=report.indexed, indexing_seconds=time.monotonic() - indexing)
    while ready:
        write(ready[:BATCH_FILES])
        ready = ready[BATCH_FILES:]
    tell("indexing", files_done=run.files_done, files_total=len(changed), chunks=run.chunks,
         files_written=report.indexed, indexing_seconds=time.monotonic() - indexing)
    report.complete = not run.stopped
    report.vectors_reused = run.reused
    if report.complete:
        report.indexed_at = now()
        store.write_memory(record(report.indexed_at), [], gone)
        report.removed = len(gone)
    report.seconds = time.monotonic() - started
    return report


class _File:
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


class _Run:
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

    def steps(self) -> Iterator[list[_File]]:
        """After each step (one embedder call, or one file without embeddings),
        the files it finished; stops at the deadline (``stopped``) or the end."""
        queue: list[_File] = []
        done_any = False
        exhausted = False
        while True:
            want = self._batch() if self._embeddings else 1
            while not exhausted and (not queue or (self._embeddings and sum(f.left for f in queue) < want)):
                source = next(self._files, None)
                if source is None:
                    exhausted = True
                else:
                    queue.append(_File(source, self._stats.get(source.path), lightweight=not self._embeddings,
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
            finished: list[_File] = []
            while queue and queue[0].left == 0:
                finished.append(queue.pop(0))
            self.files_done += len(finished)
            self.chunks += sum(len(f.rows) for f in finished)
            done_any = done_any or bool(finished)
            yield finished

    def _embed(self, queue: list[_File], want: int) -> None:
        texts: list[str] = []
        takers: list[tuple[_File, list[int]]] = []
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
