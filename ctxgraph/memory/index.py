"""Indexing a project's files into the associative memory (``ctxgraph index``).

A run scans the project (:mod:`ctxgraph.memory.scan`), compares each file's
sha256 with the one its stored chunks were made from, and re-chunks, embeds
and writes only the new and changed files; chunks of files that disappeared
(or are now skipped) are removed. Files are written in batches, one
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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ctxgraph.core.models import MemoryChunk, MemoryProject
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.errors import ConfigurationError
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.chunk import Chunk, chunk_file
from ctxgraph.memory.scan import Skipped, SourceFile, walk
from ctxgraph.memory.text import search_text

if TYPE_CHECKING:
    from ctxgraph.memory.embed import Vectors  # (numpy: imported when a run embeds)

#: Lines of a file the lightweight index keeps.
FIRST_LINES = 30
#: Files per write transaction.
BATCH_FILES = 25
#: What a project id may be made of (it prefixes chunk ids).
PROJECT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: The model name recorded with an embedding index.
MODEL = "all-MiniLM-L6-v2"

Progress = Callable[[int, int], None]


@dataclass
class IndexReport:
    project: str
    root: str
    embeddings: bool
    files: int = 0  # text files found
    indexed: int = 0  # new or changed files (re)written
    unchanged: int = 0
    removed: int = 0  # files whose chunks were dropped
    chunks: int = 0  # chunks written by this run
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0
    complete: bool = True  # False when the time limit stopped the run
    indexed_at: str = ""

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "project": self.project, "root": self.root, "embeddings": self.embeddings, "files": self.files,
            "indexed": self.indexed, "unchanged": self.unchanged, "removed": self.removed,
            "chunks": self.chunks, "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "seconds": round(self.seconds, 3), "chunks_per_s": round(self.chunks_per_s, 1),
            "complete": self.complete, "indexed_at": self.indexed_at,
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
) -> IndexReport:
    """Index (incrementally) the files under ``root`` as project ``project``."""
    started = time.monotonic()
    base = Path(root)
    if not base.is_dir():
        raise ConfigurationError(f"{root}: not a folder")
    base = base.resolve()
    pid = project_id_for(base, project)
    state = store.memory_state(pid)
    previous = state.project
    report = IndexReport(project=pid, root=str(base), embeddings=embeddings)
    # A different kind of index, or another root, is rebuilt from scratch.
    known = state.file_hashes if previous is not None and previous.embeddings == embeddings \
        and previous.root == str(base) else {}
    if embeddings and embedder is None:
        from ctxgraph.memory.embed import shared_embedder

        embedder = shared_embedder()

    found: list[SourceFile] = []
    for item in walk(base):
        if isinstance(item, Skipped):
            report.skipped.append(item)
        else:
            found.append(item)
    report.files = len(found)
    present = {f.path for f in found}
    changed = [f for f in found if known.get(f.path) != f.sha256]
    report.unchanged = len(found) - len(changed)
    gone = sorted(p for p in state.file_hashes if p not in present)

    def record(indexed_at: str) -> MemoryProject:
        return MemoryProject(id=pid, root=str(base), indexed_at=indexed_at, embeddings=embeddings,
                             model=MODEL if embeddings else "", files=len(present), chunks=0)

    pending_at = previous.indexed_at if previous is not None and known else ""
    done = 0
    if progress:
        progress(0, len(changed))
    for start in range(0, len(changed), BATCH_FILES):
        # Checked after a batch at least, so that every run makes progress.
        if start and time_limit is not None and time.monotonic() - started > time_limit:
            report.complete = False
            break
        batch = changed[start:start + BATCH_FILES]
        rows: list[MemoryChunk] = []
        for source in batch:
            for c in file_chunks(source, lightweight=not embeddings):
                rows.append(MemoryChunk(
                    path=source.path, start_line=c.start_line, end_line=c.end_line, text=c.text,
                    text_hash=c.text_hash, token_estimate=c.token_estimate, file_sha256=source.sha256,
                    search_text=search_text(source.path, c.text),
                ))
        if embeddings and rows:
            assert embedder is not None
            vectors = embedder.embed([f"{r.path}\n{r.text}" for r in rows])
            rows = [r.model_copy(update={"embedding": tuple(float(x) for x in v)})
                    for r, v in zip(rows, vectors, strict=True)]
        replaced = [s.path for s in batch if s.path in state.file_hashes or s.path in known]
        store.write_memory(record(pending_at), rows, replaced)
        report.indexed += len(batch)
        report.chunks += len(rows)
        done += len(batch)
        if progress:
            progress(done, len(changed))
    if report.complete:
        report.indexed_at = now()
        store.write_memory(record(report.indexed_at), [], gone)
        report.removed = len(gone)
    report.seconds = time.monotonic() - started
    return report
