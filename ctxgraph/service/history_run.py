"""The state and the machinery of one history import
(:mod:`ctxgraph.service.history`): the run's state and counters, the writer
that writes batches in threads while the next is read, the collector paused
while it runs, the import's folders, and the frozen file entries and links a
commit's handoff record is made of."""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgraph.core.models import FileEntry, TaskStatus, infer_component
from ctxgraph.graph.records import FileLink
from ctxgraph.service.history_types import HistoryOptions, HistoryReport
from ctxgraph.sources.git_log import Commit
from ctxgraph.sources.history import HistoryEntry


@dataclass
class Run:
    """One import's state."""

    repo: Path
    options: HistoryOptions
    report: HistoryReport
    progress: Callable[[HistoryReport], None] | None
    started: float
    #: Stored imported tasks: id -> (status, handoff content hash, has signals); None: not read (new commits only).
    stored: dict[str, tuple[str, str | None, bool]] | None = None
    unsigned: list[str] = field(default_factory=list)
    #: Stored tasks whose commit the rules now skip: retired after the walk.
    now_skipped: list[str] = field(default_factory=list)
    #: The tasks ``_reachability`` finished again.
    revived: set[str] = field(default_factory=set)
    #: The reverts read: (commit, its files at the tip, the commit it reverts), for their gotchas.
    reverts: list[tuple[Commit, tuple[tuple[str, str], ...], str]] = field(default_factory=list)
    #: Held while a batch's writer adds to the report (two batches are written at once) and while progress is told.
    lock: threading.Lock = field(default_factory=threading.Lock)

    def out_of_time(self) -> bool:
        limit = self.options.time_limit
        return limit is not None and time.monotonic() - self.started >= limit

    def add(self, **counts: int) -> None:
        """Add ``counts`` to the report's counters of the same names (a writer's part)."""
        with self.lock:
            for name, n in counts.items():
                setattr(self.report, name, getattr(self.report, name) + n)

    def tick(self) -> None:
        with self.lock:
            self.report.seconds = round(time.monotonic() - self.started, 3)
            if self.progress is not None:
                self.progress(self.report)


class Writer:
    """Writes batches in threads of their own, ``DEPTH`` at once: ``submit``
    waits while that many are being written (so at most ``DEPTH`` wait or are
    written while the next is read) and re-raises what a write raised; leaving
    the ``with`` waits for every write. Two at once: while one batch's
    transaction commits (Neo4j), or waits for the file (the embedded store:
    SQLite writes one transaction at a time), the next one's rows are made and
    its statements run."""

    DEPTH = 2

    def __init__(self, write: Callable[[list[HistoryEntry]], None], written: Callable[[], None]) -> None:
        self._write = write
        self._written = written
        self._pool = ThreadPoolExecutor(max_workers=self.DEPTH, thread_name_prefix="ctxgraph-history")
        self._pending: deque[Future[None]] = deque()

    def _run(self, batch: list[HistoryEntry]) -> None:
        self._write(batch)
        self._written()

    def submit(self, batch: list[HistoryEntry]) -> None:
        """Write ``batch`` once fewer than ``DEPTH`` are being written; a batch
        with commits that may join a task (a ``Task:`` trailer) once every
        batch before it is written: a task joined by commits of two batches
        takes the outcome of the one written last, as when one batch is
        written after the other."""
        depth = 1 if any(e.join for e in batch) else self.DEPTH
        while len(self._pending) >= depth:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(self._run, batch))

    def _wait(self) -> None:
        while self._pending:
            self._pending.popleft().result()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._wait()
        finally:
            self._pool.shutdown(wait=True)


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """Python's cyclic garbage collector paused (when it runs): an import makes
    millions of short-lived lists, dicts and tuples, none in a cycle, and each
    of the collections they set off walks every object of the process (22,150
    commits: 0.7 s of 7.6). Memory is freed as usual, by reference counts."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


COMPLETED = TaskStatus.COMPLETED.value


def settings_paths(repo: Path, state: dict[str, Any]) -> tuple[str, ...]:
    """The import's folders when none are given: the settings' ``[history]
    paths`` when they say, else those of the last import (none at first)."""
    from ctxgraph.settings import load_settings

    given = load_settings(start=repo).history.paths
    return stored_paths(state) if given is None else given


def stored_paths(state: dict[str, Any]) -> tuple[str, ...]:
    """The folders of the last import (its record keeps them one a line)."""
    return tuple(p for p in str(state.get("paths") or "").split("\n") if p)


@functools.lru_cache(maxsize=65_536)
def file_entry(path: str) -> FileEntry:
    """A file a commit's handoff names (frozen: one value per path)."""
    return FileEntry.model_construct(path=path, component=infer_component(path), notes="", lines=None)


@functools.lru_cache(maxsize=131_072)
def file_link(rel: str, path: str) -> FileLink:
    return FileLink.model_construct(rel=rel, path=path, note="", lines=None)


__all__ = ["COMPLETED", "Run", "Writer", "file_entry", "file_link", "no_collection", "settings_paths",
           "stored_paths"]
