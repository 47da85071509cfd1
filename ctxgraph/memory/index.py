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
  :data:`~ctxgraph.memory.index_steps.FIRST_LINES` lines, found by full-text search over the file's path
  and those lines.
"""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ctxgraph.core.models import MemoryProject
from ctxgraph.errors import ConfigurationError
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.index_report import IndexProgress, IndexReport, Progress
from ctxgraph.memory.index_steps import (
    CALL_SECONDS,
    EMBED_BATCH,
    FIRST_EMBED_BATCH,
    FIRST_LINES,
    GRACE_SECONDS,
    IndexFile,
    IndexRun,
    file_chunks,
)
from ctxgraph.memory.scan import Changes, SourceFile, changes, shown
from ctxgraph.memory.secrets import DEFAULT, SecretFilter

if TYPE_CHECKING:
    from ctxgraph.memory.embed import Vectors  # (numpy: imported when a run embeds)

__all__ = ["BATCH_FILES", "CALL_SECONDS", "EMBED_BATCH", "FIRST_EMBED_BATCH", "FIRST_LINES", "GRACE_SECONDS", "MODEL",
           "PROJECT_ID", "WRITE_SECONDS", "IndexProgress", "IndexReport", "Progress", "file_chunks", "index_project",
           "now", "project_id_for"]

#: Files per write transaction (at most).
BATCH_FILES = 25
#: Finished files are written at least this often (seconds), so that a run
#: stopped by its time limit, or killed, keeps nearly all it did.
WRITE_SECONDS = 5.0
#: What a project id may be made of (it prefixes chunk ids).
PROJECT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: The model name recorded with an embedding index.
MODEL = "all-MiniLM-L6-v2"


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
    after every embedder call (about every :data:`~ctxgraph.memory.index_steps.CALL_SECONDS`). With
    ``time_limit`` (seconds) the run stops once it is over, between two
    embedder calls sized to end in time; the files finished by then are
    written, a file half embedded is left for the next run (which goes on
    where this one stopped). Every run finishes one file at least.
    ``cancel`` (set by another thread) stops the run as the time limit does,
    at once: a server or a watcher that stops.
    """
    started = time.monotonic()
    deadline = None if time_limit is None else started + time_limit
    base = _checked_root(root)
    job = _Indexing(store, base, project_id_for(base, project), embeddings=embeddings, progress=progress)
    scan = job.scan(secrets or DEFAULT, explain)
    changed = scan.added + scan.changed
    if embeddings and embedder is None and changed:  # the model only when there is something to embed
        job.tell("model")
        from ctxgraph.memory.embed import shared_embedder

        embedder = shared_embedder()
    # The vectors of a changed file's chunks, by text: its unchanged chunks are not embedded again.
    known_vectors = store.memory_vectors(job.pid, [f.path for f in scan.changed]) if embeddings and scan.changed \
        else {}
    if embeddings and len(scan.added) > BATCH_FILES:
        job.write_full_text(scan.added)
    run = IndexRun(changed, scan.stats, embeddings=embeddings, embedder=embedder, deadline=deadline, cancel=cancel,
               known_vectors=known_vectors)
    job.index(run, len(changed))
    report = job.finish(run)
    report.seconds = time.monotonic() - started
    return report


def _checked_root(root: str | Path) -> Path:
    """``root`` resolved, refused unless it is a folder whose path is UTF-8."""
    base = Path(root)
    if not base.is_dir():
        raise ConfigurationError(f"{root}: not a folder")
    base = base.resolve()
    try:
        str(base).encode("utf-8")
    except UnicodeEncodeError:  # its files' names may be anything; the root's is stored as text
        raise ConfigurationError(f"{shown(str(base))}: the root's own path is not UTF-8: rename it to "
                                 "index it") from None
    return base


class _Indexing:
    """One run's writes to the store and its progress and report, around the
    scan and the :class:`~ctxgraph.memory.index_steps.IndexRun` that chunks and embeds the files."""

    def __init__(self, store: KnowledgeStore, base: Path, pid: str, *, embeddings: bool,
                 progress: Progress | None) -> None:
        self.store = store
        self.base = base
        self.pid = pid
        self.embeddings = embeddings
        self.progress = progress
        self.state = store.memory_state(pid)
        previous = self.state.project
        self.report = IndexReport(project=pid, root=str(base), embeddings=embeddings)
        # A different kind of index, or another root, is rebuilt from scratch.
        self.known = self.state.file_hashes if previous is not None and previous.embeddings == embeddings \
            and previous.root == str(base) else {}
        self.pending_at = previous.indexed_at if previous is not None and self.known else ""
        self.present: set[str] = set()
        self.gone: list[str] = []

    def tell(self, phase: str, files_done: int = 0, files_total: int = 0, chunks: int = 0, files_written: int = 0,
             indexing_seconds: float = 0.0) -> None:
        if self.progress is not None:
            self.progress(IndexProgress(self.pid, phase, files_done, files_total, chunks, files_written,
                                        indexing_seconds, self.report.files, self.report.unchanged))

    def record(self, indexed_at: str) -> MemoryProject:
        """The project's record as a write leaves it."""
        present, report = self.present, self.report
        return MemoryProject(id=self.pid, root=str(self.base), indexed_at=indexed_at, embeddings=self.embeddings,
                             model=MODEL if self.embeddings else "", files=len(present), chunks=0,
                             files_indexed=min(len(present), report.unchanged + report.indexed))

    def scan(self, secrets: SecretFilter, explain: bool) -> Changes:
        """The files' changes since the stored index (the unchanged ones' new stats recorded)."""
        self.tell("scanning")
        before = {p: st for p, st in self.state.file_stats.items() if p in self.known}
        scan = changes(self.base, before, secrets=secrets, read_all=explain)
        report = self.report
        report.skipped = scan.skipped
        report.redacted = scan.redacted
        report.explained = explain
        report.read = scan.read
        report.files = len(scan.stats)
        self.present = set(scan.stats)
        report.unchanged = scan.unchanged
        self.gone = sorted(p for p in self.state.file_hashes if p not in self.present)
        if scan.touched:
            self.store.touch_memory(self.pid, scan.touched)
        report.paths = scan.paths()
        return scan

    def write_full_text(self, added: list[SourceFile]) -> None:
        """Full text first: when many files are new, their chunks are written at once without
        vectors (seconds for a whole project; chunking is cheap), so that a context meanwhile
        finds them by their words; the vectors follow. Their sha256 is left empty, so that a
        run cut before a file's vectors reads that file again."""
        self.tell("full text")
        for start in range(0, len(added), BATCH_FILES):
            batch = [IndexFile(f, None, lightweight=False) for f in added[start:start + BATCH_FILES]]
            self.store.write_memory(self.record(self.pending_at),
                                    [r.model_copy(update={"file_sha256": ""}) for f in batch for r in f.rows],
                                    [f.source.path for f in batch if f.source.path in self.state.file_hashes])

    def write(self, files: list[IndexFile]) -> None:
        """Write finished files' chunks (with their vectors), one transaction."""
        rows = [row for f in files for row in f.finished()]
        # (a file written for full text first needs no removal: the same text makes the same chunks,
        # whose ids the write overwrites; finding a path's chunks to remove costs a scan of them)
        replaced = [f.source.path for f in files
                    if f.source.path in self.state.file_hashes or f.source.path in self.known]
        self.report.indexed += len(files)
        self.report.chunks += len(rows)
        self.store.write_memory(self.record(self.pending_at), rows, replaced)

    def index(self, run: IndexRun, total: int) -> None:
        """Run ``run`` to its end or its stop, writing the files it finishes in batches."""
        indexing = time.monotonic()
        self.tell("indexing", files_total=total)
        ready: list[IndexFile] = []
        last_write = time.monotonic()
        for finished in run.steps():
            ready += finished
            if len(ready) >= BATCH_FILES or (ready and time.monotonic() - last_write >= WRITE_SECONDS):
                self.write(ready[:BATCH_FILES])
                ready = ready[BATCH_FILES:]
                last_write = time.monotonic()
            self.tell("indexing", files_done=run.files_done, files_total=total, chunks=run.chunks,
                      files_written=self.report.indexed, indexing_seconds=time.monotonic() - indexing)
        while ready:
            self.write(ready[:BATCH_FILES])
            ready = ready[BATCH_FILES:]
        self.tell("indexing", files_done=run.files_done, files_total=total, chunks=run.chunks,
                  files_written=self.report.indexed, indexing_seconds=time.monotonic() - indexing)

    def finish(self, run: IndexRun) -> IndexReport:
        """The report; a run that covered every file drops the gone files' chunks and sets ``indexed_at``."""
        report = self.report
        report.complete = not run.stopped
        report.vectors_reused = run.reused
        if report.complete:
            report.indexed_at = now()
            self.store.write_memory(self.record(report.indexed_at), [], self.gone)
            report.removed = len(self.gone)
        return report
