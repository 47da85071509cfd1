"""What a run of :func:`ctxgraph.memory.index.index_project` reports: its
progress while it runs (:class:`IndexProgress`) and its result
(:class:`IndexReport`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ctxgraph.memory.scan import Skipped


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
