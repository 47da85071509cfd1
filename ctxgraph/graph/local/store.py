"""LocalStore: the embedded default store — one SQLite file, no server.

The graph is kept as a property graph (``nodes`` and ``edges`` tables with
JSON properties, the same properties the Neo4j store keeps), so both stores
hold the same graph and answer the same questions the same way; dependency-
graph traversal is networkx's (``ctxgraph.graph.dependencies``), the same
for both stores.

``LocalStore`` composes the parts of this package by concern, as
``Neo4jStore`` does its own, each a class whose methods share one
:class:`Connection` (``db``): ``writes``, ``reads`` (with the tag cache),
``history`` (the corpus cache — the finished tasks' documents and tags,
whence the related tasks — and the task vectors), ``memory`` (the
associative memory's chunks, searched through their in-memory index),
``outcomes`` (the deliveries log) and ``backup``; ``replay`` reads the
corpus ``tune`` replays. The SQL of all of them is in ``sql``. On a large
history a context's gather reads on a second, read-only connection in a
worker thread (a plain ``Reads`` on it), beside the history
(``gather_with_history``).

Every write method is one transaction: a process killed in the middle of one
leaves the store as it was before it. ``LocalStore.open(path,
read_only=True)`` opens an existing file with SQLite's ``mode=ro`` and
creates nothing: no file, no schema.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from ctxgraph.core import rarity
from ctxgraph.core.models import (
    Candidates,
    GatherQuery,
    HistoryEvidence,
    ReplayFile,
    ReplayTask,
    Task,
    TaskHit,
)
from ctxgraph.graph.local import memory, replay, sql
from ctxgraph.graph.local.anchors import Anchors
from ctxgraph.graph.local.backup import Backup
from ctxgraph.graph.local.connection import Connection
from ctxgraph.graph.local.history import History
from ctxgraph.graph.local.history_import import HistoryImport
from ctxgraph.graph.local.imports import Imports
from ctxgraph.graph.local.memory import Memory
from ctxgraph.graph.local.outcomes import Outcomes
from ctxgraph.graph.local.reads import Reads
from ctxgraph.graph.local.writes import Writes

DEFAULT_PATH = Path(".ctxgraph") / "graph.db"
#: From this many finished tasks in the history on, a context's gather runs
#: beside its history (``gather_with_history``). Below, the two threads' turns
#: at the GIL cost more than the overlap saves: measured sequential against
#: side by side, p50 13.6 against 16.9-22.9 ms at 1k nodes (~160 finished
#: tasks), about even at 100k nodes (~17k), 32 against 22 ms at 1M (~166k)
#: (benchmarks/README.md, issue 18 step 6).
SIDE_BY_SIDE_TASKS = 50_000


def default_path(start: Path | None = None) -> Path:
    """The project's embedded store: the nearest ``.ctxgraph/graph.db`` from
    ``start`` (default: the current folder) upwards, as the settings file is
    found; else ``.ctxgraph/graph.db`` in ``start`` (created on first write).
    The file, not the folder, is looked for: a ``.ctxgraph/`` holding only a
    demo or a cache does not capture the folders below it."""
    here = (start or Path.cwd()).resolve()
    found = next((f / DEFAULT_PATH for f in (here, *here.parents) if (f / DEFAULT_PATH).is_file()),
                 here / DEFAULT_PATH)
    # The current folder's own store keeps its short relative name in messages.
    return DEFAULT_PATH if start is None and found == here / DEFAULT_PATH else found


def discard_if_empty(path: Path) -> bool:
    """Delete the store file at ``path`` (with its WAL files) when it holds no
    node and no other connection has it open; True when it was deleted.

    For a command that created the store and then failed. Leaving WAL mode
    needs the only connection to the file (SQLite answers "locked" while
    another process has it open, even idle), so a store another process just
    created and is about to write is kept."""
    try:
        with LocalStore.open(path, read_only=True) as store:
            if any(store.stats().labels.values()):
                return False
        conn = sqlite3.connect(path, timeout=0, isolation_level=None)
    except Exception:  # not a store we can read: not ours to delete
        return False
    try:
        if str(conn.execute(sql.JOURNAL_DELETE).fetchone()[0]).lower() != "delete":
            return False
        conn.execute(sql.BEGIN_EXCLUSIVE)  # held while the file goes: nobody starts on it meanwhile
        for name in (path.name + "-wal", path.name + "-shm", path.name + "-journal", path.name):
            path.with_name(name).unlink(missing_ok=True)
        return True
    except sqlite3.Error:
        return False
    finally:
        conn.close()


class LocalStore(Writes, Reads, History, Memory, Outcomes, Anchors, Imports, HistoryImport, Backup):
    """The embedded store. ``LocalStore.open(path)`` creates the file if needed;
    ``LocalStore.open(path, read_only=True)`` only reads an existing one."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.location = str(path)
        self.read_only = read_only
        self.db = Connection(path, read_only=read_only)
        Reads.__init__(self, self.db)
        History.__init__(self, self.db)
        self._memory = memory.MemorySearch(self.db)
        # A second, read-only connection and a thread for the gather that runs
        # beside the history (``gather_with_history``), both made on first use.
        self._side_lock = threading.Lock()
        self._side: tuple[Connection, Reads, ThreadPoolExecutor] | None = None

    # -- lifecycle ------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, *, read_only: bool = False) -> LocalStore:
        store = cls(Path(path) if path else default_path(), read_only=read_only)
        if read_only:
            store.db.connect_read_only()
            check = store.db.check_schema
        else:
            store.db.connect()
            check = store.init_schema
        try:
            check()
        except BaseException:
            store.close()
            raise
        return store

    def init_schema(self) -> None:
        self.db.init_schema()

    def close(self) -> None:
        with self._side_lock:
            side, self._side = self._side, None
        if side is not None:
            side[2].shutdown(wait=True)
            side[0].close()
        self.db.close()

    def _side_reader(self) -> tuple[Connection, Reads, ThreadPoolExecutor]:
        with self._side_lock:
            if self._side is None:
                db = Connection(self.path, read_only=True)
                db.connect_read_only()
                self._side = (db, Reads(db), ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxgraph-local"))
            return self._side

    def __enter__(self) -> LocalStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the context's reads (ctxgraph.graph.local.reads, with the history's related tasks) --

    def _related(self, weighted: Sequence[tuple[str, float]], limit: int,
                 exclude: Sequence[str]) -> list[TaskHit]:
        return self._task_hits(self._related_ids(weighted, limit, exclude))

    def _with_related(self, found: Candidates, query: GatherQuery) -> Candidates:
        """The gather's candidates with the related tasks, weighted by the tag degrees it read."""
        tags = [*query.keywords, *query.domains]
        if not tags or query.related_limit <= 0:
            return found
        weighted = rarity.weighted(tags, dict(found.tag_df), found.tagged_total, query.max_tag_df)
        return found.model_copy(update={"related": tuple(self._related(weighted, query.related_limit,
                                                                        query.exclude))})

    def gather(self, query: GatherQuery) -> Candidates:
        return self._with_related(Reads.gather(self, query), query)

    def gather_with_history(
        self, query: GatherQuery, terms: Sequence[str], top_files: int = 10,
        vector: Sequence[float] | None = None,
    ) -> tuple[Candidates, HistoryEvidence]:
        # On a large history, the gather's knowledge tag queries on a second
        # read-only connection in the worker thread, beside the history on this
        # one (SQLite and most of numpy run without the GIL): a context waits for
        # the longer of the two, as on Neo4j (benchmarks/README.md, issue 18 step
        # 6). Each is its own read transaction; the related tasks come from the
        # history's cached tags once the gather has read the tags' degrees.
        # The context map's candidates are only wanted when the history has no files.
        if self._finished_seen() < SIDE_BY_SIDE_TASKS:
            history = self._history_evidence(terms, top_files, vector)
            wanted = query.context_map and not history.files
            return self.gather(query.model_copy(update={"context_map": wanted})), history
        _, reads, worker = self._side_reader()
        pending = worker.submit(reads.gather, query.model_copy(update={"context_map": False}))
        try:
            history = self._history_evidence(terms, top_files, vector)
        except BaseException:
            wait([pending])  # not left running on the store; the history's error is the one raised
            raise
        if query.context_map and not history.files:
            wait([pending])
            return self.gather(query), history
        return self._with_related(pending.result(), query), history

    # -- history (ctxgraph.graph.local.history): reads on both of its parts ----------------

    def replay_corpus(self) -> tuple[list[ReplayTask], list[ReplayFile]]:
        with self.db.read() as cur:
            return replay.replay_corpus(cur, vectors=self._vector_table(cur))

    def task_with_query_vector(self, task_id: str) -> tuple[Task | None, tuple[str, list[float]] | None]:
        with self.db.read() as cur:
            task = self._get_task_in(cur, task_id)
            if task is None:
                return None, None
            return task, self.task_query_vectors([task_id], cur).get(task_id)
