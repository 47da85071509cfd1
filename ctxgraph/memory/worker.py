"""Indexing in the background: a queue of requests coalesced per project and a
worker that runs them, so that indexing never blocks a context.

- :class:`IndexQueue` holds at most one pending request per project: a new
  request for a project already waiting replaces its settings and keeps its
  place (and its earliest request time), so a burst of "files changed"
  messages costs one run.
- :class:`IndexWorker` (a daemon thread) takes requests in order, runs
  :func:`~ctxgraph.memory.index.index_project` with a per-run time limit, and
  on a failure puts the request back after a backoff that doubles per
  consecutive failure of that project (``base`` .. ``cap`` seconds, with
  jitter). A run stopped by its time limit has kept what it wrote and is
  queued again to go on. After a complete run, ``follow_up`` (if given) does
  more work on the same store (``ctxgraph index --watch`` embeds the finished
  tasks that have no vector yet); its failure is logged, not retried.

Contexts never wait for any of this: they read whatever index the store
holds, and skip one that is stale (:mod:`ctxgraph.memory.recall`).
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.index import IndexProgress, IndexReport, Progress, index_project, project_id_for
from ctxgraph.memory.secrets import DEFAULT, SecretFilter

log = logging.getLogger(__name__)


#: A run with at most this many files to index reports no tenths.
QUIET_FILES = 20


class Tenths:
    """Progress as a line at each tenth of a run's files crossed (10 %, 20 %,
    ... 100 %), for runs with more than :data:`QUIET_FILES` files to index:
    what ``ctxgraph mcp`` logs and ``index --watch`` prints on stderr."""

    def __init__(self, say: Callable[[str], None], label: str = "") -> None:
        self.say = say
        self.label = label
        self._said = 0
        self._lock = threading.Lock()

    def __call__(self, p: IndexProgress) -> None:
        with self._lock:
            if p.phase == "scanning":  # a new run
                self._said = 0
            if p.phase != "indexing" or p.files_total <= QUIET_FILES or not p.files_found:
                return
            tenth = min(10, (p.files_unchanged + p.files_done) * 10 // p.files_found)
            if tenth <= self._said:
                return
            self._said = tenth
        done = p.files_unchanged + p.files_done
        self.say(f"project {self.label or p.project}: memory index {tenth * 10} % ({done:,}/{p.files_found:,} files, "
                 f"{p.chunks:,} chunks, {p.chunks_per_s:.1f} chunks/s; {p.files_indexed:,} written)")


@dataclass
class IndexRequest:
    project: str
    root: Path
    embeddings: bool = True
    requested_at: float = field(default_factory=time.monotonic)
    not_before: float = 0.0
    failures: int = 0


class IndexQueue:
    """Pending index requests, at most one per project, oldest first."""

    def __init__(self) -> None:
        self._pending: dict[str, IndexRequest] = {}
        self._cond = threading.Condition()

    def request(self, root: str | Path, *, project: str | None = None, embeddings: bool = True) -> str:
        """Ask for ``root`` to be indexed; returns the project id."""
        base = Path(root).resolve()
        pid = project_id_for(base, project)
        with self._cond:
            waiting = self._pending.get(pid)
            if waiting is None:
                self._pending[pid] = IndexRequest(pid, base, embeddings)
            else:  # coalesce: newest settings, earliest place in the queue
                waiting.root, waiting.embeddings = base, embeddings
            self._cond.notify_all()
        return pid

    def retry(self, req: IndexRequest, delay: float) -> None:
        with self._cond:
            if req.project not in self._pending:
                req.not_before = time.monotonic() + delay
                self._pending[req.project] = req
            self._cond.notify_all()

    def take(self, timeout: float | None = None) -> IndexRequest | None:
        """The oldest request that is due, waiting up to ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                now = time.monotonic()
                due = [r for r in self._pending.values() if r.not_before <= now]
                if due:
                    req = min(due, key=lambda r: r.requested_at)
                    del self._pending[req.project]
                    return req
                waits = [r.not_before - now for r in self._pending.values()]
                if deadline is not None:
                    waits.append(deadline - now)
                    if deadline <= now:
                        return None
                self._cond.wait(min(waits) if waits else None)

    def __len__(self) -> int:
        with self._cond:
            return len(self._pending)


class IndexWorker(threading.Thread):
    """Runs the queue's requests one at a time on a store of its own."""

    def __init__(
        self,
        open_store: Callable[[], KnowledgeStore],
        queue: IndexQueue,
        *,
        time_limit: float = 300.0,
        backoff_base: float = 5.0,
        backoff_cap: float = 300.0,
        on_report: Callable[[IndexReport], None] | None = None,
        on_error: Callable[[IndexRequest, BaseException, float], None] | None = None,
        max_runs: int | None = None,
        follow_up: Callable[[KnowledgeStore, IndexReport], None] | None = None,
        progress: Progress | None = None,
        keep_store: bool = False,
        nice: int = 0,
        secrets: SecretFilter = DEFAULT,
    ) -> None:
        super().__init__(name="ctxgraph-index-worker", daemon=True)
        #: What is never indexed (:mod:`ctxgraph.memory.secrets`): the settings' rules.
        self.secrets = secrets
        #: Stop after this many runs (None: until stopped); checked by the worker
        #: itself, so a request queued meanwhile cannot start one run too many.
        self.max_runs = max_runs
        self.open_store = open_store
        self.queue = queue
        self.time_limit = time_limit
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.on_report = on_report
        self.on_error = on_error
        self.follow_up = follow_up
        self.progress = progress
        #: Keep the store open from one run to the next (closed after a failure and at the end).
        self.keep_store = keep_store
        #: Raise this thread's nice value by this much (Linux: a thread's own priority),
        #: so that a server's requests get the CPU before its background indexing.
        self.nice = nice
        self._store: KnowledgeStore | None = None
        self._stop_event = threading.Event()
        self.runs = 0
        self.failures = 0

    def backoff(self, failures: int) -> float:
        delay: float = min(self.backoff_cap, self.backoff_base * 2.0 ** max(0, failures - 1))
        return delay * random.uniform(0.8, 1.2)  # jitter, not security

    def stop(self) -> None:
        self._stop_event.set()

    def run_one(self, req: IndexRequest) -> IndexReport | None:
        """One request: index, or schedule the retry after a failure."""
        self.runs += 1
        try:
            store = self._store or self.open_store()
            self._store = store if self.keep_store else None
            try:
                report = index_project(store, req.root, project=req.project, embeddings=req.embeddings,
                                       time_limit=self.time_limit, cancel=self._stop_event, progress=self.progress,
                                       secrets=self.secrets)
                if report.complete and self.follow_up:
                    try:
                        self.follow_up(store, report)
                    except Exception as exc:  # the index is written; the extra work waits for the next run
                        log.warning("after indexing %s: %s", req.project, exc)
            except BaseException:
                self._close_store(store)
                raise
            if not self.keep_store:
                store.close()
        except Exception as exc:  # a failed run is retried, never fatal to the worker
            self.failures += 1
            req.failures += 1
            delay = self.backoff(req.failures)
            log.warning("indexing %s failed (%s); retrying in %.0f s", req.project, exc, delay)
            if self.on_error:
                self.on_error(req, exc, delay)
            self.queue.retry(req, delay)
            return None
        if not report.complete and not self._stop_event.is_set():  # stopped by the time limit: go on next run
            self.queue.retry(IndexRequest(req.project, req.root, req.embeddings, req.requested_at), 0.0)
        if self.on_report:
            self.on_report(report)
        return report

    def _close_store(self, store: KnowledgeStore) -> None:
        self._store = None
        try:
            store.close()
        except Exception as exc:  # closing must not hide why the run failed
            log.warning("closing the index store: %s", exc)

    def _lower_priority(self) -> None:
        if self.nice <= 0 or not hasattr(os, "setpriority"):
            return
        try:  # on Linux a thread is a task of its own: PRIO_PROCESS with its id renices it alone
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + self.nice))
        except OSError as exc:
            log.debug("the index worker keeps its priority: %s", exc)

    def run(self) -> None:
        self._lower_priority()
        try:
            while not self._stop_event.is_set() and (self.max_runs is None or self.runs < self.max_runs):
                req = self.queue.take(timeout=0.5)
                if req is not None:
                    self.run_one(req)
        finally:
            if self._store is not None:
                self._close_store(self._store)
