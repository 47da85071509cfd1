"""Keeping a project's associative memory current in the background
(``ctxgraph mcp``; issue 31): index the root on start, then again whenever a
file under it changes, without a context ever waiting.

A :class:`MemoryKeeper` owns three threads: an
:class:`~ctxgraph.memory.worker.IndexWorker` (one run at a time, on a store
connection of its own, kept open between runs), a
:class:`~ctxgraph.memory.watch.RootWatcher` that queues a run when files
change, and a timer that queues one every ``interval`` seconds (so that the
index's ``indexed_at`` stays within ``memory_stale_hours`` while nothing
changes). Contexts read whatever the store holds meanwhile: a first index
not finished yet is used as it is, and the context says so
(:func:`ctxgraph.memory.recall.recall`: ``partial (412/1,203 files)``).

:meth:`MemoryKeeper.status` is what the MCP ``graph_stats`` tool and stats
resource show under ``memory``; ``say`` gets a line at each tenth of a run's
files crossed (10 %, 20 %, ...; :class:`~ctxgraph.memory.worker.Tenths`) when the run has more than 20 files
to index, and one when a run ends with something (re)indexed or removed.
:meth:`MemoryKeeper.stop` cancels a run in progress between two embedder
calls (the files finished are written) and joins the threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxgraph.graph.store import KnowledgeStore

if TYPE_CHECKING:
    from ctxgraph.memory.index import IndexProgress, IndexReport
    from ctxgraph.memory.secrets import SecretFilter
    from ctxgraph.memory.worker import IndexRequest
    from ctxgraph.service.core import ContextService

log = logging.getLogger(__name__)

#: Seconds between two runs when nothing changes (keeps the index from going stale).
INTERVAL = 3600.0
#: How much lower the indexing thread's CPU priority is than the server's (nice).
NICE = 10
#: A run's time limit (a cut run keeps what it wrote and is queued again at once).
RUN_SECONDS = 300.0
#: How long one run of the past's keeper embeds finished tasks before it lets
#: a moved HEAD be seen (it goes on at the next look, :data:`HEAD_SECONDS` on).
EMBED_SECONDS = 60.0
#: Seconds between two looks at the root's checked-out commit (a commit changes
#: only ``.git``, which the watcher leaves out): when it moved, the project's
#: past is brought up to date (new commits imported, rewritten ones retired).
HEAD_SECONDS = 10.0


def embeddings_available() -> bool:
    """Whether the embedding model is installed (else the lightweight index is kept)."""
    from ctxgraph.memory.model import EmbeddingUnavailableError, model_dir

    try:
        model_dir()
    except EmbeddingUnavailableError:
        return False
    return True


def keep_memory(svc: ContextService, open_service: Callable[[], ContextService], *,
                say: Callable[[str], None] | None = None, watch_mode: str = "auto",
                label: str = "") -> MemoryKeeper | str:
    """A started keeper of ``svc``'s root, indexing on stores ``open_service``
    opens (one at a time, kept open); or why there is none (the memory off,
    no root known)."""
    if not (svc.memory and svc.config.memory):
        return "memory = false in the settings"
    if svc.root is None:
        return "no root known (give --root FOLDER or --project NAME=FOLDER, or keep the store inside a git work tree)"

    def open_store() -> KnowledgeStore:
        return open_service().store

    return MemoryKeeper(open_store, svc.root.path, svc.root.project, say=say, watch_mode=watch_mode,
                        label=label, source=svc.root.source, secrets=svc.secrets,
                        on_past=PastKeeper(open_service, svc.root.path, say or log.info, label)).start()


class PastKeeper:
    """Brings the project's past up to date (:meth:`ContextService.import_past`,
    ``kept_only``: what ``init`` or an import brought in) on a service of its
    own, opened on first use and kept; says what a run imported."""

    def __init__(self, open_service: Callable[[], ContextService], root: Path, say: Callable[[str], None],
                 label: str) -> None:
        self._open = open_service
        self._svc: ContextService | None = None
        self.root, self.say, self.label = root, say, label
        #: Finished tasks still without a vector after the last run: the next tick goes on.
        self.pending = False
        self.stopping = threading.Event()
        #: Runs done, commits imported by them, and whether the latest stopped early (for metrics).
        self.runs = self.imported = 0
        self.partial = False

    def __call__(self) -> None:
        from ctxgraph.errors import CtxgraphError
        from ctxgraph.service.past import history_line, knowledge_line, tasks_line

        try:
            if self._svc is None:
                self._svc = self._open()
            done = self._svc.import_past(self.root, kept_only=True, time_limit=RUN_SECONDS,
                                         embed_seconds=EMBED_SECONDS, stop=self.stopping.is_set)
        except CtxgraphError as exc:
            self.say(f"warning: project {self.label}: the history and notes of {self.root} not brought up to "
                     f"date: {exc}")
            return
        self.runs += 1
        if done.history is not None:
            self.imported += done.history.imported
            self.partial = bool(done.history.partial)
        if done.history is not None and (done.history.imported or done.history.retired or done.history.revived):
            self.say(f"project {self.label}: {history_line(done.history)}")
        if done.knowledge is not None and (done.knowledge.written or done.knowledge.removed):
            self.say(f"project {self.label}: {knowledge_line(done.knowledge)}")
        tasks = done.tasks
        self.pending = tasks is not None and tasks.partial and not tasks.skipped
        said = tasks_line(tasks) if tasks is not None and tasks.embedded else None
        if said:
            self.say(f"project {self.label}: {said}")

    def close(self) -> None:
        self.stopping.set()
        if self._svc is not None:
            self._svc.close()


class MemoryKeeper:
    """Indexes ``root`` as memory project ``project`` on :meth:`start` and keeps it current (see the module)."""

    def __init__(self, open_store: Callable[[], KnowledgeStore], root: Path, project: str, *,
                 embeddings: bool | None = None, say: Callable[[str], None] | None = None,
                 watch_mode: str = "auto", interval: float = INTERVAL, label: str = "", source: str = "",
                 secrets: SecretFilter | None = None, on_past: PastKeeper | None = None) -> None:
        from ctxgraph.memory.watch import RootWatcher
        from ctxgraph.memory.worker import IndexQueue, IndexWorker, Tenths

        self.root = root.resolve()
        self.project = project
        self.embeddings = embeddings_available() if embeddings is None else embeddings
        self.label = label or project
        self.source = source
        self.say = say or (lambda line: log.info("%s", line))
        self.interval = interval
        self._tenths = Tenths(self.say, self.label)
        self.queue = IndexQueue()
        self.worker = IndexWorker(open_store, self.queue, time_limit=RUN_SECONDS, on_report=self._reported,
                                  on_error=self._failed, progress=self._progress, keep_store=True, nice=NICE)
        if secrets is not None:
            self.worker.secrets = secrets
        self.watcher = RootWatcher(self.root, self.request, mode=watch_mode, name=f"ctxgraph-watch-{project}")
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer = threading.Thread(target=self._tick, name=f"ctxgraph-index-timer-{project}", daemon=True)
        self.on_past = on_past
        self._head: str | None = None
        self._heads = threading.Thread(target=self._watch_head, name=f"ctxgraph-head-{project}", daemon=True)
        self._state = "starting"
        self._latest: IndexProgress | None = None
        self._last: dict[str, Any] | None = None
        self._error = ""
        self.runs = 0

    def describe(self) -> str:
        kind = "embeddings" if self.embeddings else "lightweight: no embedding model installed"
        found = f" ({self.source})" if self.source else ""
        how = "file events" if self.watcher.mode == "events" else f"polling every {self.watcher.poll_seconds:g} s"
        return (f"indexing {self.root}{found} in the background as memory project {self.project} ({kind}), "
                f"then watching it ({how})")

    # -- life ------------------------------------------------------------------------------

    def start(self) -> MemoryKeeper:
        self.request()
        self.worker.start()
        self.watcher.start()
        self._timer.start()
        if self.on_past is not None:
            self._heads.start()
        return self

    def request(self) -> None:
        """Queue a run (coalesced with one already waiting)."""
        self.queue.request(self.root, project=self.project, embeddings=self.embeddings)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop watching, cancel a run in progress (its finished files are kept), join the threads."""
        self._stop.set()
        self.watcher.stop()
        self.worker.stop()
        for thread in (self.worker, self.watcher, self._timer, self._heads):
            if thread.is_alive():
                thread.join(timeout)
        if self.on_past is not None and not self._heads.is_alive():
            self.on_past.close()
        with self._lock:
            self._state = "stopped"

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self.request()

    def _watch_head(self) -> None:
        """The past brought up to date on start, then whenever the checked-out commit moves."""
        from ctxgraph.service.anchors import git_head

        assert self.on_past is not None
        while True:
            head = git_head(self.root)
            if head != self._head or self.on_past.pending:  # (pending: tasks left to embed)
                self._head = head
                self.on_past()
            if self._stop.wait(HEAD_SECONDS):
                return

    # -- what the runs tell ------------------------------------------------------------------

    def _progress(self, p: IndexProgress) -> None:
        with self._lock:
            self._latest = p
            self._state = "indexing" if p.phase == "full text" or (p.phase == "indexing" and p.files_total) \
                else "scanning"
        self._tenths(p)

    def _reported(self, report: IndexReport) -> None:
        with self._lock:
            self.runs += 1
            self._last = {"seconds": round(report.seconds, 3), "indexed": report.indexed, "removed": report.removed,
                          "complete": report.complete, "ended_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            self._state = "watching" if report.complete else "indexing"
            self._error = ""
        if report.indexed or report.removed:
            self.say(f"project {self.label}: memory index of {self.root}: {report.indexed} file(s) (re)indexed, "
                     f"{report.removed} removed in {report.seconds:.1f} s"
                     + ("" if report.complete else " (to be continued)"))

    def _failed(self, req: IndexRequest, exc: BaseException, delay: float) -> None:
        with self._lock:
            self._error = str(exc)
            self._state = "retrying"
        self.say(f"warning: project {self.label}: indexing {self.root} failed: {exc}; retrying in {delay:.0f} s")

    def status(self) -> dict[str, Any]:
        """The keeper's state for a stats view: ``state`` (starting, scanning,
        indexing, watching, retrying, stopped), the root, the project, files
        indexed of files found in the latest run, its percentage, runs, the
        last run and the last error."""
        with self._lock:
            p = self._latest
            found = p.files_found if p is not None else 0
            done = p.files_indexed if p is not None else 0
            return {
                "state": self._state, "root": str(self.root), "project": self.project,
                "embeddings": self.embeddings, "watch": self.watcher.mode,
                "files_indexed": done, "files": found,
                "percent": round(100.0 * done / found, 1) if found else (100.0 if self.runs else 0.0),
                "runs": self.runs, "last_run": self._last, "error": self._error,
            }
