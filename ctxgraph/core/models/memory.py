"""The associative memory: chunks of project files, indexed projects, search hits."""

from __future__ import annotations

from pydantic import BaseModel

from ctxgraph.core.models.base import VALUE


class MemoryChunk(BaseModel):
    """A chunk of a project file as the associative memory stores it."""

    model_config = VALUE

    path: str
    start_line: int
    end_line: int
    text: str
    text_hash: str
    token_estimate: int
    #: sha256 of the whole file when it was indexed (what incremental runs compare).
    file_sha256: str
    #: The file's modification time (ns) and size when it was indexed: a run
    #: that finds both unchanged does not read the file (0 / -1: unknown).
    file_mtime_ns: int = 0
    file_size: int = -1
    #: all-MiniLM-L6-v2 vector (384 floats), None in the lightweight (no-ML) index.
    embedding: tuple[float, ...] | None = None
    #: The chunk's full-text terms, space-separated (path and text).
    search_text: str = ""


class FileStat(BaseModel):
    """What a scan remembers of a file: its stat (modification time in ns, size)
    and the sha256 of the content it had then (:func:`ctxgraph.memory.scan.changes`)."""

    model_config = VALUE

    mtime_ns: int
    size: int
    sha256: str


class MemoryProject(BaseModel):
    """One indexed project: where its files are and when it was indexed."""

    model_config = VALUE

    id: str
    root: str
    indexed_at: str
    embeddings: bool
    model: str = ""
    files: int = 0
    chunks: int = 0
    #: Files whose chunks are written so far (of ``files``): below it while a
    #: first run (or a rebuild) has not finished.
    files_indexed: int = 0


class MemoryState(BaseModel):
    """What the store holds for a project: the project and each indexed file's
    hash, and its stat when it was indexed (``file_stats``)."""

    model_config = VALUE

    project: MemoryProject | None
    file_hashes: dict[str, str]
    file_stats: dict[str, FileStat] = {}


class MemoryHit(BaseModel):
    """A chunk found by vector or full-text search, with its raw score and rank (1-based)."""

    model_config = VALUE

    chunk: MemoryChunk
    score: float
    rank: int
    #: Its file changed since it was indexed and its text is no longer in it:
    #: ``chunk`` holds the lines in its place now (the memory's recall).
    changed: bool = False


class MemoryRecall(BaseModel):
    """What the associative memory found for a task (after the file gates)."""

    model_config = VALUE

    project: str
    by_vector: tuple[MemoryHit, ...] = ()
    by_text: tuple[MemoryHit, ...] = ()
