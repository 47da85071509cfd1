"""LocalStore: the embedded default store — one SQLite file, no server.

The graph is kept as a property graph (``nodes`` and ``edges`` tables with
JSON properties, the same properties the Neo4j store keeps), so both stores
hold the same graph and answer the same questions the same way. SQLite gives
durability and safe use by several processes (WAL journal, ``BEGIN
IMMEDIATE`` for writes, a busy timeout, and a retry with backoff when SQLite
still answers "database is locked"); dependency-graph traversal is
networkx's (``ctxgraph.graph.dependencies``), the same for both stores.

Every write method is one transaction: a process killed in the middle of one
leaves the store as it was before it (SQLite rolls the WAL tail back on the
next open). ``LocalStore.open(path, read_only=True)`` opens an existing file
with SQLite's ``mode=ro`` and creates nothing: no file, no schema.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ctxgraph.core import evidence
from ctxgraph.core.evidence import MatchedTask, bound, max_term_df
from ctxgraph.core.rarity import tag_weights
from ctxgraph.errors import InvalidDocumentError, StoreUnavailableError, UnknownTaskError
from ctxgraph.graph import local_memory, local_outcomes, local_replay
from ctxgraph.graph.backup import batches as backup_batches
from ctxgraph.graph.backup import node_row, rel_row, sorted_rows
from ctxgraph.graph.handoff_batch import FileFill, link_props, plan_handoffs
from ctxgraph.graph.memory_records import COSINE_DECIMALS
from ctxgraph.graph.models import (
    KIND_LABELS,
    Blocker,
    Candidates,
    DependencyHandoff,
    FileEntry,
    FileEvidence,
    GatherQuery,
    HistoryEvidence,
    KnowledgeHit,
    KnowledgeItem,
    MemoryChunk,
    MemoryHit,
    MemoryProject,
    MemoryState,
    NeighbourEvidence,
    ReadNext,
    RecentTask,
    Stats,
    Task,
    TaskEvidence,
    TaskHit,
    TaskStatus,
)
from ctxgraph.graph.outcome_records import Delivery, DeliveryScore, StoredDelivery
from ctxgraph.graph.records import (
    HandoffRecord,
    file_from_props,
    file_props,
    knowledge_from_props,
    knowledge_props,
    merge_tags,
    task_from_props,
    task_props,
    task_tags,
    task_text,
    text_hash,
)
from ctxgraph.graph.replay_records import ReplayFile, ReplayTask

log = logging.getLogger(__name__)

DEFAULT_PATH = Path(".ctxgraph") / "graph.db"


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
SCHEMA_VERSION = 1
_BUSY_TIMEOUT_MS = 60_000
#: How long to keep retrying when SQLite says "locked" or "busy" despite the busy
#: timeout (it does so without waiting in a few cases, e.g. while a WAL is recovered).
_LOCK_RETRY_SECONDS = 60.0

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
    label TEXT NOT NULL,
    id    TEXT NOT NULL,
    props TEXT NOT NULL,
    PRIMARY KEY (label, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS edges (
    src_label TEXT NOT NULL,
    src_id    TEXT NOT NULL,
    type      TEXT NOT NULL,
    dst_label TEXT NOT NULL,
    dst_id    TEXT NOT NULL,
    props     TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (src_label, src_id, type, dst_label, dst_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS task_vectors (
    id        TEXT PRIMARY KEY,
    text_hash TEXT NOT NULL,
    vec       BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deliveries (
    id      TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    at      TEXT NOT NULL,
    record  TEXT,
    score   TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS deliveries_by_task ON deliveries (task_id);
CREATE INDEX IF NOT EXISTS deliveries_by_at ON deliveries (at, id);
CREATE INDEX IF NOT EXISTS edges_by_dst ON edges (dst_label, dst_id, type);
CREATE INDEX IF NOT EXISTS edges_by_type ON edges (type, src_label);
CREATE INDEX IF NOT EXISTS tasks_finished ON nodes (coalesce(json_extract(props, '$.completed_at'), '') DESC, id DESC)
    WHERE label = 'Task' AND json_extract(props, '$.status') IN ('completed', 'failed');
CREATE INDEX IF NOT EXISTS tasks_blocked ON nodes (coalesce(json_extract(props, '$.blocked_at'), ''), id)
    WHERE label = 'Task' AND json_extract(props, '$.status') = 'blocked';
"""
# The working memory's reads name their partial index (``INDEXED BY``: SQLite
# picks it on its own only after ANALYZE) when the store has it; a store
# written by an older ctxgraph gets the indexes on its next writing open and is
# read without them until then.
_RECENT = """
SELECT props FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') IN ('completed', 'failed')
ORDER BY coalesce(json_extract(props, '$.completed_at'), '') DESC, id DESC LIMIT ?
"""
_RECENT_INDEXED = """
SELECT props FROM nodes INDEXED BY tasks_finished
WHERE label = 'Task' AND json_extract(props, '$.status') IN ('completed', 'failed')
ORDER BY coalesce(json_extract(props, '$.completed_at'), '') DESC, id DESC LIMIT ?
"""
_BLOCKED = """
SELECT props FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') = 'blocked'
ORDER BY coalesce(json_extract(props, '$.blocked_at'), ''), id
"""
_BLOCKED_INDEXED = """
SELECT props FROM nodes INDEXED BY tasks_blocked
WHERE label = 'Task' AND json_extract(props, '$.status') = 'blocked'
ORDER BY coalesce(json_extract(props, '$.blocked_at'), ''), id
"""

_KNOWLEDGE_LABELS = tuple(KIND_LABELS.values())
_TAGGABLE_LABELS = json.dumps(["Task", *_KNOWLEDGE_LABELS])

# Tag queries (finding 3 of benchmarks/README.md): the degree of each query tag
# is counted on the ``edges_by_dst`` index; the candidate queries read the
# items of the tags under the degree cap only, driven from the tag list, and
# order them by the sum of their matched tags' rarity weights (given as JSON
# [[tag, weight], ...], computed by ``ctxgraph.core.rarity``).
_TAGGED_TOTAL = "SELECT count(*) FROM nodes WHERE label IN (SELECT value FROM json_each(?))"
_TAG_DEGREES = """
SELECT t.value, (SELECT count(*) FROM edges e INDEXED BY edges_by_dst
                 WHERE e.dst_label = 'Tag' AND e.dst_id = t.value AND e.type = 'TAGGED') AS df
FROM json_each(?) t
WHERE EXISTS (SELECT 1 FROM nodes n WHERE n.label = 'Tag' AND n.id = t.value)
"""
_KNOWLEDGE_BY_TAGS = """
WITH w AS (SELECT json_extract(value, '$[0]') AS tag, json_extract(value, '$[1]') AS weight FROM json_each(?1)),
g AS (
  SELECT e.src_label AS label, e.src_id AS id, group_concat(e.dst_id, char(31)) AS matched,
         round(sum(w.weight), 9) AS score
  FROM w JOIN edges e INDEXED BY edges_by_dst
    ON e.dst_label = 'Tag' AND e.dst_id = w.tag AND e.type = 'TAGGED'
  WHERE e.src_label IN (SELECT value FROM json_each(?2))
  GROUP BY e.src_label, e.src_id
)
SELECT n.props, g.matched, g.score FROM g JOIN nodes n ON n.label = g.label AND n.id = g.id
WHERE g.score >= coalesce((SELECT score FROM g ORDER BY score DESC LIMIT 1 OFFSET ?3 - 1), 0)
ORDER BY g.score DESC, coalesce(json_extract(n.props, '$.updated_at'), '') DESC, g.id ASC
LIMIT ?3
"""
_TASKS_BY_TAGS = """
WITH w AS (SELECT json_extract(value, '$[0]') AS tag, json_extract(value, '$[1]') AS weight FROM json_each(?)),
g AS (
  SELECT e.src_id AS id, group_concat(e.dst_id, char(31)) AS matched, round(sum(w.weight), 9) AS score
  FROM w JOIN edges e INDEXED BY edges_by_dst
    ON e.dst_label = 'Tag' AND e.dst_id = w.tag AND e.type = 'TAGGED'
  WHERE e.src_label = 'Task' AND e.src_id NOT IN (SELECT value FROM json_each(?))
  GROUP BY e.src_id
)
SELECT n.props, g.matched, g.score FROM g JOIN nodes n ON n.label = 'Task' AND n.id = g.id
WHERE json_extract(n.props, '$.status') = 'completed'
ORDER BY g.score DESC, coalesce(json_extract(n.props, '$.completed_at'), '') DESC, g.id ASC
LIMIT ?
"""


def _loads(text: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(text)
    return value


def _lower(value: str | None) -> str | None:
    return None if value is None else value.lower()


def _dumps(props: dict[str, Any]) -> str:
    return json.dumps(props, sort_keys=True, ensure_ascii=False)


def _finished(task: dict[str, Any], record: HandoffRecord) -> dict[str, Any]:
    """The task's properties once ``record`` (its handoff) is written."""
    done = {k: v for k, v in task.items() if k not in ("blocked_reason", "blocked_at")}
    done.update(
        status=(TaskStatus.COMPLETED if record.success else TaskStatus.FAILED).value,
        success=record.success, outcome_summary=record.summary,
        completed_at=record.completed_at, updated_at=record.completed_at,
    )
    return done


def _probe(conn: sqlite3.Connection) -> None:
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()


def _reason(exc: BaseException) -> str:
    return (str(exc).strip() or type(exc).__name__).splitlines()[0]


def _is_locked(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _open_failure(path: Path, exc: BaseException) -> str:
    reason = _reason(exc)
    if "readonly" in reason.replace(" ", "").lower() or "read-only" in reason.lower():
        return (f"cannot write to the embedded store at {path}: the file or its folder is read-only "
                f"({reason}); commands that only read still work")
    return f"cannot write to the embedded store at {path}: {reason}"


def _retry_locked(fn: Callable[[], T], what: str) -> T:
    """Run ``fn``, retrying with jittered exponential backoff while SQLite says
    the database is locked or busy; after ``_LOCK_RETRY_SECONDS`` give up with
    a ``StoreUnavailableError`` (never a bare "database is locked")."""
    deadline = time.monotonic() + _LOCK_RETRY_SECONDS
    delay = 0.01
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc):
                raise
            if time.monotonic() >= deadline:
                raise StoreUnavailableError(
                    f"cannot {what}: still locked by another process after {_LOCK_RETRY_SECONDS:.0f} s"
                ) from None
            log.info("%s: %s; retrying in %.2f s", what, _reason(exc), delay)
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 1.0)


@dataclass
class _Corpus:
    version: tuple[int, int]
    completed: dict[str, tuple[int, str]]  # task id -> (term count, completed_at)
    # Immutable values (tuples of strings and ints): once built, the garbage
    # collector stops tracking them, so a full collection does not walk the
    # cache (at 100,000 nodes it made one context in twenty ~250 ms slower).
    touched_by: dict[str, tuple[str, ...]]  # task id -> files its handoff created or modified (sorted)
    touches: dict[str, tuple[int, int]]  # file -> (finished tasks touching it, their total terms)
    files: list[tuple[FileEntry, tuple[str, ...], bool]]  # entry, its terms, in_map
    # The rankable files (the map's when one is loaded, else all): indexes into
    # files by path, most touched first, by own term; their total document length.
    mapped: bool = False
    rankable: dict[str, int] = field(default_factory=dict)
    by_touches: tuple[int, ...] = ()
    by_term: dict[str, tuple[int, ...]] = field(default_factory=dict)
    sorted_paths: list[str] = field(default_factory=list)
    lengths: dict[str, int] = field(default_factory=dict)  # rankable file -> its document's length
    unfinished: int = 0  # tasks not finished (their mentions are not counted)
    total_task_len: int = 0  # the finished tasks' total length in terms
    total_file_len: int = 0
    # The finished tasks' vectors (unit rows) and their ids; built on first use.
    vector_ids: tuple[str, ...] | None = None
    vectors: Any = None


class LocalStore:
    """The embedded store. ``LocalStore.open(path)`` creates the file if needed;
    ``LocalStore.open(path, read_only=True)`` only reads an existing one."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.location = str(path)
        self.read_only = read_only
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._writes = 0  # own commits (PRAGMA data_version only counts other connections')
        self._indexes: set[str] | None = None  # index names, read once per open
        self._corpus_cache: _Corpus | None = None
        self._tagged_cache: tuple[tuple[int, int], int] | None = None  # (data version, count)
        self._has_vector_table: bool | None = None  # a store written before task vectors has none

    # -- lifecycle ------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, *, read_only: bool = False) -> LocalStore:
        store = cls(Path(path) if path else default_path(), read_only=read_only)
        if read_only:
            store._connect_read_only()
            try:
                store._check_schema()
            except BaseException:
                store.close()
                raise
            return store
        _retry_locked(store._connect, f"open {store.path}")
        try:
            store.init_schema()
        except BaseException:
            store.close()
            raise
        return store

    def _connect(self) -> None:
        self.close()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                check_same_thread=False,
            )
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailableError(f"cannot open the embedded store at {self.path}: {_reason(exc)}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = OFF")
        except sqlite3.Error as exc:
            conn.close()
            if _is_locked(exc):
                raise
            raise StoreUnavailableError(_open_failure(self.path, exc)) from None
        self._setup(conn)

    def _connect_read_only(self) -> None:
        """``mode=ro``: SQLite never writes the file. A read-only folder cannot
        hold the WAL index SQLite needs even for reading, so there the file is
        read as ``immutable`` — only when no WAL with unmerged commits exists."""
        if not self.path.exists():
            raise StoreUnavailableError(
                f"no embedded store at {self.path} (nothing was written there yet: "
                "check --store / CTXGRAPH_STORE, or create it with `ctxgraph init`)"
            )
        if not self.path.is_file():
            raise StoreUnavailableError(f"cannot open the embedded store at {self.path}: not a file")
        uri = self.path.resolve().as_uri() + "?mode=ro"
        wal = self.path.with_name(self.path.name + "-wal")
        last: sqlite3.Error | None = None
        for candidate in (uri, uri + "&immutable=1"):
            if candidate.endswith("immutable=1") and wal.exists() and wal.stat().st_size > 0:
                break
            try:
                conn = sqlite3.connect(candidate, uri=True, timeout=_BUSY_TIMEOUT_MS / 1000,
                                       isolation_level=None, check_same_thread=False)
            except sqlite3.Error as exc:
                last = exc
                continue
            try:
                conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
                _retry_locked(functools.partial(_probe, conn), f"read {self.path}")
            except sqlite3.Error as exc:
                conn.close()
                last = exc
                if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
                    break  # not a database: no point in another mode
                continue
            self.close()
            self._setup(conn)
            return
        reason = _reason(last) if last is not None else "unknown error"
        raise StoreUnavailableError(f"cannot open the embedded store at {self.path} for reading: {reason}")

    def _setup(self, conn: sqlite3.Connection) -> None:
        # Unicode lower-casing as Cypher's toLower does it (SQLite's is ASCII only).
        conn.create_function("pylower", 1, _lower, deterministic=True)
        self._conn = conn

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreUnavailableError(f"the embedded store at {self.path} is closed")
        return self._conn

    def init_schema(self) -> None:
        with self._write() as cur:
            for statement in filter(None, (s.strip() for s in _SCHEMA.split(";"))):
                cur.execute(statement)
            row = cur.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                cur.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreUnavailableError(
                    f"{self.path} was written by a newer ctxgraph (schema {row[0]})"
                )

    def _check_schema(self) -> None:
        """Read-only open: the file must already be a ctxgraph store."""
        with self._read() as cur:
            tables = {r[0] for r in cur.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"meta", "nodes", "edges"} <= tables:
                raise StoreUnavailableError(
                    f"{self.path} is not a ctxgraph store (no ctxgraph tables; `ctxgraph init` creates them)"
                )
            row = cur.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is not None and int(row[0]) > SCHEMA_VERSION:
            raise StoreUnavailableError(f"{self.path} was written by a newer ctxgraph (schema {row[0]})")

    def clear(self) -> None:
        """Delete everything (tests, ``init --reset``)."""
        with self._write() as cur:
            cur.execute("DELETE FROM edges")
            cur.execute("DELETE FROM nodes")
            cur.execute("DELETE FROM task_vectors")
            local_outcomes.clear(cur)
            local_memory.bump_generation(cur)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> LocalStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions -----------------------------------------------------------

    @contextmanager
    def _write(self, *, counted: bool = True) -> Iterator[sqlite3.Cursor]:
        """One write transaction: committed on clean exit, rolled back on error
        (and by SQLite on the next open if the process dies inside it).
        ``counted=False``: a write that changes nothing the caches hold (the
        deliveries log), so they stay valid."""
        if self.read_only:
            raise StoreUnavailableError(f"the embedded store at {self.path} was opened read-only")
        with self._lock:
            cur = self.conn.cursor()
            try:
                _retry_locked(lambda: cur.execute("BEGIN IMMEDIATE"), f"write to {self.path}")
            except sqlite3.Error as exc:
                cur.close()
                raise StoreUnavailableError(_open_failure(self.path, exc)) from None
            try:
                yield cur
            except sqlite3.Error as exc:
                if self.conn.in_transaction:
                    cur.execute("ROLLBACK")
                if type(exc) in (sqlite3.OperationalError, sqlite3.DatabaseError):
                    # read-only file, disk full, I/O error: one clear line, nothing written
                    raise StoreUnavailableError(_open_failure(self.path, exc)) from None
                raise
            except BaseException:
                if self.conn.in_transaction:
                    cur.execute("ROLLBACK")
                raise
            else:
                try:
                    _retry_locked(lambda: cur.execute("COMMIT"), f"commit to {self.path}")
                except sqlite3.Error as exc:
                    if self.conn.in_transaction:
                        cur.execute("ROLLBACK")
                    raise StoreUnavailableError(_open_failure(self.path, exc)) from None
                self._writes += counted
            finally:
                cur.close()

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Cursor]:
        """One read transaction (a consistent snapshot under WAL)."""
        with self._lock:
            cur = self.conn.cursor()
            cur.execute("BEGIN")
            try:
                yield cur
            except sqlite3.OperationalError as exc:
                if not _is_locked(exc):
                    raise
                raise StoreUnavailableError(f"cannot read {self.path}: {_reason(exc)}") from None
            finally:
                if self.conn.in_transaction:
                    cur.execute("COMMIT")
                cur.close()

    # -- low-level helpers (all parameterized) ------------------------------------

    @staticmethod
    def _node(cur: sqlite3.Cursor, label: str, node_id: str) -> dict[str, Any] | None:
        row = cur.execute("SELECT props FROM nodes WHERE label = ? AND id = ?", (label, node_id)).fetchone()
        return _loads(row[0]) if row else None

    @staticmethod
    def _nodes(cur: sqlite3.Cursor, label: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The properties of the ``label`` nodes among ``ids``, by id (one query)."""
        rows = cur.execute(
            "SELECT id, props FROM nodes WHERE label = ? AND id IN (SELECT value FROM json_each(?))",
            (label, json.dumps(sorted(set(ids)))),
        ).fetchall()
        return {str(i): _loads(p) for i, p in rows}

    @staticmethod
    def _put_node(cur: sqlite3.Cursor, label: str, props: dict[str, Any]) -> None:
        LocalStore._put_nodes(cur, [(label, props)])

    @staticmethod
    def _put_nodes(cur: sqlite3.Cursor, nodes: Iterable[tuple[str, dict[str, Any]]]) -> None:
        """Create or overwrite (label, props) nodes in one ``executemany``."""
        cur.executemany(
            "INSERT INTO nodes (label, id, props) VALUES (?, ?, ?) "
            "ON CONFLICT (label, id) DO UPDATE SET props = excluded.props",
            [(label, props["id"], _dumps(props)) for label, props in nodes],
        )

    @staticmethod
    def _put_edge(
        cur: sqlite3.Cursor, src: tuple[str, str], rel: str, dst: tuple[str, str],
        props: dict[str, Any] | None = None,
    ) -> None:
        LocalStore._put_edges(cur, [(src, rel, dst, props or {})])

    @staticmethod
    def _put_edges(
        cur: sqlite3.Cursor, edges: Iterable[tuple[tuple[str, str], str, tuple[str, str], dict[str, Any]]]
    ) -> None:
        """Create or overwrite (src, type, dst, props) edges in one ``executemany``."""
        cur.executemany(
            "INSERT INTO edges (src_label, src_id, type, dst_label, dst_id, props) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET props = excluded.props",
            [(*src, rel, *dst, _dumps(props) if props else "{}") for src, rel, dst, props in edges],
        )

    @staticmethod
    def _named(cur: sqlite3.Cursor, label: str, names: Iterable[str]) -> None:
        """Create the missing ``Tag``/``Term`` nodes among ``names``."""
        cur.executemany(
            "INSERT INTO nodes (label, id, props) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [(label, name, _dumps({"id": name, "name": name})) for name in names],
        )

    def _mention(self, cur: sqlite3.Cursor, src: tuple[str, str], names: Sequence[str]) -> None:
        """Link ``src`` to its full-text terms (replacing earlier links)."""
        cur.execute("DELETE FROM edges WHERE src_label = ? AND src_id = ? AND type = 'MENTIONS'", src)
        self._named(cur, "Term", names)
        self._put_edges(cur, [(src, "MENTIONS", ("Term", name), {}) for name in names])

    def _tag(self, cur: sqlite3.Cursor, src: tuple[str, str], names: Sequence[str]) -> None:
        self._named(cur, "Tag", names)
        self._put_edges(cur, [(src, "TAGGED", ("Tag", name), {}) for name in names])

    # -- writes -------------------------------------------------------------------

    def upsert_tasks(self, tasks: Sequence[Task]) -> None:
        with self._write() as cur:
            known = {t.id for t in tasks}
            for task in tasks:
                for dep in task.depends_on:
                    if dep not in known and self._node(cur, "Task", dep) is None:
                        raise UnknownTaskError(dep)
            for task in tasks:
                old = self._node(cur, "Task", task.id)
                props = task_props(task)
                if old is not None:
                    props["created_at"] = old.get("created_at", props.get("created_at"))
                self._put_node(cur, "Task", props)
                cur.execute(
                    "DELETE FROM edges WHERE src_label = 'Task' AND src_id = ? AND type = 'TAGGED'",
                    (task.id,),
                )
                self._tag(cur, ("Task", task.id), task_tags(task))
                self._mention(cur, ("Task", task.id), props.get("terms", []))
                for dep in task.depends_on:
                    self._put_edge(cur, ("Task", task.id), "DEPENDS_ON", ("Task", dep))

    def set_status(self, task_id: str, status: TaskStatus, *, reason: str | None, at: str) -> None:
        with self._write() as cur:
            props = self._node(cur, "Task", task_id)
            if props is None:
                raise UnknownTaskError(task_id)
            props["status"] = status.value
            if status is TaskStatus.BLOCKED:
                props["blocked_reason"] = reason or ""
                props["blocked_at"] = at
            else:
                props.pop("blocked_reason", None)
                props.pop("blocked_at", None)
            props["updated_at"] = at
            self._put_node(cur, "Task", props)

    def upsert_files(self, files: Sequence[FileEntry]) -> None:
        with self._write() as cur:
            for entry in files:
                props = file_props(entry)
                self._put_node(cur, "File", props)
                self._mention(cur, ("File", entry.path), props["terms"])

    def apply_handoff(self, record: HandoffRecord) -> bool:
        return self.apply_handoffs([record])[0]

    def apply_handoffs(self, records: Sequence[HandoffRecord]) -> list[bool]:
        """One transaction for the batch; every row kind in one ``executemany``
        (the batch is folded by :func:`plan_handoffs`, so each node is written once)."""
        if not records:
            return []
        with self._write() as cur:
            tasks = self._nodes(cur, "Task", (r.task_id for r in records))
            for record in records:
                if record.task_id not in tasks:
                    raise UnknownTaskError(record.task_id)
            stored = self._nodes(cur, "Handoff", (r.id for r in records))
            batch = plan_handoffs(records, {h: p.get("content_hash") for h, p in stored.items()})
            cur.executemany(
                "DELETE FROM edges WHERE src_label = 'Handoff' AND src_id = ?", [(h,) for h in batch.replaced]
            )
            self._put_nodes(cur, [("Handoff", h.props()) for h in batch.handoffs])
            self._put_nodes(cur, [("Task", _finished(tasks[h.task_id], h)) for h in batch.handoffs])
            self._put_edges(cur, [(("Task", h.task_id), "HANDED_OFF", ("Handoff", h.id), {})
                                  for h in batch.handoffs])
            self._put_knowledge_items(cur, batch.knowledge)
            self._put_edges(cur, [(("Handoff", h), "DISCOVERED", (k.label, k.id), {})
                                  for h, k in batch.discovered()])
            self._fill_files(cur, batch.files)
            self._put_edges(cur, [(("Handoff", h), link.rel, ("File", link.path), link_props(link))
                                  for h, link in batch.links()])
            return list(batch.written)

    def _fill_files(self, cur: sqlite3.Cursor, fills: Sequence[FileFill]) -> None:
        """Create the missing files (with their terms); fill empty notes."""
        existing = self._nodes(cur, "File", (f.entry.path for f in fills))
        created: list[dict[str, Any]] = []
        changed: list[dict[str, Any]] = []
        for fill in fills:
            props = existing.get(fill.entry.path)
            if props is None:
                created.append(fill.props())
            elif fill.notes and not props.get("notes"):
                changed.append({**props, "notes": fill.notes})
        changed += created
        self._put_nodes(cur, [("File", p) for p in changed])
        self._named(cur, "Term", {t for p in created for t in p["terms"]})
        self._put_edges(cur, [(("File", p["id"]), "MENTIONS", ("Term", t), {}) for p in created for t in p["terms"]])

    def _put_knowledge(self, cur: sqlite3.Cursor, item: KnowledgeItem) -> None:
        self._put_knowledge_items(cur, [item])

    def _put_knowledge_items(self, cur: sqlite3.Cursor, items: Sequence[KnowledgeItem]) -> None:
        """Merge knowledge nodes (one per id): existing tags first, existing
        ``created_at`` kept; link each to its tags."""
        existing: dict[tuple[str, str], dict[str, Any]] = {}
        for label in {k.label for k in items}:
            found = self._nodes(cur, label, (k.id for k in items if k.label == label))
            existing.update({(label, i): p for i, p in found.items()})
        nodes = []
        for item in items:
            props = knowledge_props(item)
            old = existing.get((item.label, item.id))
            if old is not None:
                props["tags"] = merge_tags(old.get("tags"), props.get("tags", []))
                props["created_at"] = old.get("created_at", props.get("created_at"))
            nodes.append((item.label, props))
        self._put_nodes(cur, nodes)
        self._named(cur, "Tag", {t for k in items for t in k.tags})
        self._put_edges(cur, [((k.label, k.id), "TAGGED", ("Tag", t), {}) for k in items for t in k.tags])

    def _knowledge_label(self, cur: sqlite3.Cursor, item_id: str) -> str | None:
        row = cur.execute(
            "SELECT label FROM nodes WHERE id = ? AND label IN (SELECT value FROM json_each(?))",
            (item_id, json.dumps(_KNOWLEDGE_LABELS)),
        ).fetchone()
        return None if row is None else str(row[0])

    def upsert_knowledge(
        self, items: Sequence[KnowledgeItem], supersedes: Sequence[tuple[str, str, str]] = ()
    ) -> None:
        with self._write() as cur:
            for item in items:
                self._put_knowledge(cur, item)
            for new_id, old_id, at in supersedes:
                new_label, old_label = self._knowledge_label(cur, new_id), self._knowledge_label(cur, old_id)
                if new_label is None or old_label is None:
                    continue
                self._put_edge(cur, (new_label, new_id), "SUPERSEDES", (old_label, old_id))
                old = self._node(cur, old_label, old_id) or {}
                if old_label == "Decision":
                    old["status"] = "superseded"
                old["updated_at"] = at
                self._put_node(cur, old_label, old)

    def get_knowledge(self, ids: Sequence[str]) -> list[KnowledgeItem]:
        with self._read() as cur:
            rows = cur.execute(
                "SELECT props FROM nodes WHERE id IN (SELECT value FROM json_each(?)) "
                "AND label IN (SELECT value FROM json_each(?)) ORDER BY id",
                (json.dumps(sorted(set(ids))), json.dumps(_KNOWLEDGE_LABELS)),
            ).fetchall()
        return [knowledge_from_props(_loads(r[0])) for r in rows]

    # -- reads --------------------------------------------------------------------

    def _deps(self, cur: sqlite3.Cursor, task_id: str) -> list[str]:
        rows = cur.execute(
            "SELECT dst_id FROM edges WHERE src_label = 'Task' AND src_id = ? AND type = 'DEPENDS_ON'",
            (task_id,),
        ).fetchall()
        return sorted(r[0] for r in rows)

    def _task(self, cur: sqlite3.Cursor, task_id: str) -> Task | None:
        props = self._node(cur, "Task", task_id)
        return None if props is None else task_from_props(props, self._deps(cur, task_id))

    def get_task(self, task_id: str) -> Task | None:
        with self._read() as cur:
            return self._task(cur, task_id)

    def get_tasks(self, task_ids: Sequence[str]) -> list[Task]:
        with self._read() as cur:
            found = (self._task(cur, tid) for tid in sorted(set(task_ids)))
            return [t for t in found if t is not None]

    def list_tasks(self, status: TaskStatus | None = None) -> list[Task]:
        with self._read() as cur:
            rows = cur.execute(
                "SELECT props FROM nodes WHERE label = 'Task' "
                "AND (? IS NULL OR json_extract(props, '$.status') = ?) ORDER BY id",
                (status, status),
            ).fetchall()
            deps: dict[str, list[str]] = {}
            for src, dst in cur.execute(
                "SELECT src_id, dst_id FROM edges WHERE type = 'DEPENDS_ON' AND src_label = 'Task'"
            ):
                deps.setdefault(src, []).append(dst)
            out = []
            for (text,) in rows:
                props = _loads(text)
                out.append(task_from_props(props, deps.get(props["id"], [])))
            return out

    def dependency_edges(self) -> list[tuple[str, str]]:
        with self._read() as cur:
            rows = cur.execute(
                "SELECT src_id, dst_id FROM edges WHERE type = 'DEPENDS_ON' AND src_label = 'Task' "
                "ORDER BY src_id, dst_id"
            ).fetchall()
            return [(a, b) for a, b in rows]

    def dependency_closure(self, task_ids: Sequence[str]) -> list[tuple[str, str]]:
        with self._read() as cur:
            rows = cur.execute(
                "WITH RECURSIVE reach(id) AS ("
                " SELECT value FROM json_each(?)"
                " UNION SELECT e.dst_id FROM reach r JOIN edges e"
                " ON e.src_label = 'Task' AND e.src_id = r.id AND e.type = 'DEPENDS_ON')"
                " SELECT e.src_id, e.dst_id FROM reach r JOIN edges e"
                " ON e.src_label = 'Task' AND e.src_id = r.id AND e.type = 'DEPENDS_ON'"
                " ORDER BY e.src_id, e.dst_id",
                (json.dumps(sorted(set(task_ids))),),
            ).fetchall()
            return [(a, b) for a, b in rows]

    def _tagged_total(self, cur: sqlite3.Cursor) -> int:
        """Tasks and knowledge items: the ``n`` of the tag rarity (cached until the database changes)."""
        version = (int(cur.execute("PRAGMA data_version").fetchone()[0]), self._writes)
        if self._tagged_cache is None or self._tagged_cache[0] != version:
            (total,) = cur.execute(_TAGGED_TOTAL, (_TAGGABLE_LABELS,)).fetchone()
            self._tagged_cache = (version, int(total))
        return self._tagged_cache[1]

    def _tag_stats(self, cur: sqlite3.Cursor, tags: Sequence[str]) -> tuple[dict[str, int], int]:
        """Degree of each tag of ``tags`` in the graph (absent tags left out), and the taggable items."""
        if not tags:
            return {}, 0
        rows = cur.execute(_TAG_DEGREES, (json.dumps(list(dict.fromkeys(tags))),)).fetchall()
        return {name: int(df) for name, df in rows}, self._tagged_total(cur)

    @staticmethod
    def _weighted(dfs: dict[str, int], total: int, tags: Sequence[str], max_df: int) -> str:
        """JSON [[tag, weight], ...] of the tags a candidate query reads (``max_df``: 0 for no cap)."""
        weights = tag_weights(dfs.items(), total)
        wanted = [t for t in dict.fromkeys(tags) if t in dfs and (max_df <= 0 or dfs[t] <= max_df)]
        return json.dumps([[t, weights[t]] for t in wanted])

    def knowledge_by_tags(self, tags: Sequence[str], limit: int, *, max_df: int = 0) -> list[KnowledgeHit]:
        if not tags or limit <= 0:
            return []
        with self._read() as cur:
            dfs, total = self._tag_stats(cur, tags)
            return self._knowledge_hits(cur, self._weighted(dfs, total, tags, max_df), limit)

    @staticmethod
    def _knowledge_hits(cur: sqlite3.Cursor, weighted: str, limit: int) -> list[KnowledgeHit]:
        rows = cur.execute(_KNOWLEDGE_BY_TAGS, (weighted, json.dumps(_KNOWLEDGE_LABELS), limit)).fetchall()
        return [
            KnowledgeHit(
                item=knowledge_from_props(_loads(props)),
                matched_tags=tuple(sorted(matched.split("\x1f"))),
            )
            for props, matched, _ in rows
        ]

    def tasks_by_tags(
        self, tags: Sequence[str], limit: int, *, exclude: Sequence[str] = (), max_df: int = 0
    ) -> list[TaskHit]:
        if not tags or limit <= 0:
            return []
        with self._read() as cur:
            dfs, total = self._tag_stats(cur, tags)
            return self._task_hits(cur, self._weighted(dfs, total, tags, max_df), limit, exclude)

    def _task_hits(
        self, cur: sqlite3.Cursor, weighted: str, limit: int, exclude: Sequence[str]
    ) -> list[TaskHit]:
        rows = cur.execute(_TASKS_BY_TAGS, (weighted, json.dumps(list(exclude)), limit)).fetchall()
        return [
            TaskHit(
                task=task_from_props(_loads(props), self._deps(cur, _loads(props)["id"])),
                matched_tags=tuple(sorted(matched.split("\x1f"))),
            )
            for props, matched, _ in rows
        ]

    def dependency_handoffs(self, task_ids: Sequence[str]) -> list[DependencyHandoff]:
        with self._read() as cur:
            out = []
            for dep_id in sorted(set(task_ids)):
                dep = self._task(cur, dep_id)
                if dep is None:
                    continue
                row = cur.execute(
                    "SELECT dst_id FROM edges WHERE src_label = 'Task' AND src_id = ? "
                    "AND type = 'HANDED_OFF' ORDER BY dst_id DESC LIMIT 1",
                    (dep_id,),
                ).fetchone()
                if row is None:
                    out.append(DependencyHandoff(task=dep))
                    continue
                handoff = self._node(cur, "Handoff", row[0]) or {}
                links = cur.execute(
                    "SELECT type, dst_label, dst_id, props FROM edges "
                    "WHERE src_label = 'Handoff' AND src_id = ? ORDER BY type, dst_id",
                    (row[0],),
                ).fetchall()
                to_read, created, knowledge = [], [], []
                for rel, dst_label, dst_id, props_text in links:
                    props = _loads(props_text)
                    if rel == "READ_NEXT":
                        to_read.append(ReadNext(file=dst_id, reason=props.get("reason", "")))
                    elif rel == "CREATED":
                        created.append(ReadNext(file=dst_id, reason=props.get("purpose", "")))
                    elif rel == "DISCOVERED":
                        node = self._node(cur, dst_label, dst_id)
                        if node is not None:
                            knowledge.append(knowledge_from_props(node))
                out.append(
                    DependencyHandoff(
                        task=dep,
                        summary=handoff.get("summary"),
                        files_to_read=tuple(to_read),
                        files_created=tuple(created),
                        knowledge=tuple(sorted(knowledge, key=lambda k: (k.kind, k.id))),
                    )
                )
            return out

    def context_map(
        self, keywords: Sequence[str], domains: Sequence[str], files: Sequence[str]
    ) -> list[FileEntry]:
        with self._read() as cur:
            rows = cur.execute(
                """
                SELECT props FROM nodes WHERE label = 'File' AND (
                  EXISTS (SELECT 1 FROM json_each(?) k WHERE
                          instr(pylower(json_extract(props, '$.component')), k.value) > 0
                       OR instr(pylower(json_extract(props, '$.path')), k.value) > 0)
                  OR EXISTS (SELECT 1 FROM json_each(?) d WHERE
                          instr(pylower(json_extract(props, '$.notes')), d.value) > 0)
                  OR EXISTS (SELECT 1 FROM json_each(?) f WHERE
                          instr(json_extract(props, '$.path'), f.value) > 0)
                ) ORDER BY id
                """,
                (json.dumps(list(keywords)), json.dumps(list(domains)), json.dumps(list(files))),
            ).fetchall()
        return [file_from_props(_loads(r[0])) for r in rows]

    def all_files(self) -> list[FileEntry]:
        with self._read() as cur:
            rows = cur.execute("SELECT props FROM nodes WHERE label = 'File' ORDER BY id").fetchall()
        return [file_from_props(_loads(r[0])) for r in rows]

    def _has_index(self, cur: sqlite3.Cursor, name: str) -> bool:
        if self._indexes is None:
            self._indexes = {r[0] for r in cur.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        return name in self._indexes

    def recent_tasks(self, n: int) -> list[RecentTask]:
        with self._read() as cur:
            if self._has_index(cur, "tasks_finished"):
                rows = cur.execute(_RECENT_INDEXED, (n,)).fetchall()
            else:
                rows = cur.execute(_RECENT, (n,)).fetchall()
        out = []
        for (text,) in rows:
            task = task_from_props(_loads(text))
            out.append(
                RecentTask(id=task.id, intent=task.intent, success=task.success,
                           completed_at=task.completed_at)
            )
        return out

    def active_blockers(self) -> list[Blocker]:
        with self._read() as cur:
            if self._has_index(cur, "tasks_blocked"):
                rows = cur.execute(_BLOCKED_INDEXED).fetchall()
            else:
                rows = cur.execute(_BLOCKED).fetchall()
        out = []
        for (text,) in rows:
            props = _loads(text)
            out.append(
                Blocker(id=props["id"], reason=props.get("blocked_reason") or "",
                        since=props.get("blocked_at"))
            )
        return out

    def gather(self, query: GatherQuery) -> Candidates:
        # In-process: the per-part queries cost no round trips. The tag degrees
        # are counted once for the three tag queries and returned for the ranking.
        wm = query.working_memory
        tags = [*query.keywords, *query.domains]
        with self._read() as cur:
            dfs, total = self._tag_stats(cur, tags)
            knowledge_limits = ((query.keywords, query.keyword_limit), (query.domains, query.domain_limit))
            keyword_hits, domain_hits = (
                self._knowledge_hits(cur, self._weighted(dfs, total, part, query.max_tag_df), limit)
                if part and limit > 0 else []
                for part, limit in knowledge_limits
            )
            related = (self._task_hits(cur, self._weighted(dfs, total, tags, query.max_tag_df),
                                       query.related_limit, query.exclude)
                       if tags and query.related_limit > 0 else [])
        return Candidates(
            keyword_hits=tuple(keyword_hits),
            domain_hits=tuple(domain_hits),
            dependencies=tuple(self.dependency_handoffs(query.dep_ids)) if query.dep_ids else (),
            context_map=tuple(self.context_map(query.keywords, query.domains, query.files))
            if query.context_map else (),
            context_map_total=self._count("File"),
            related=tuple(related),
            recent_tasks=tuple(self.recent_tasks(query.recent_limit)) if wm else (),
            active_blockers=tuple(self.active_blockers()) if wm else (),
            memory_projects=tuple(self.memory_projects()),
            tag_df=tuple(sorted(dfs.items())),
            tagged_total=total,
        )

    def gather_with_history(
        self, query: GatherQuery, terms: Sequence[str], max_df_share: float, top_files: int = 10,
        vector: Sequence[float] | None = None,
    ) -> tuple[Candidates, HistoryEvidence]:
        # In-process: two reads cost no round trips (see KnowledgeStore).
        history = self.history_evidence(terms, max_df_share, top_files, vector)
        return self.gather(query.model_copy(update={"context_map": not history.files})), history

    def _corpus(self, cur: sqlite3.Cursor) -> _Corpus:
        """Corpus-wide facts of the history (cached until the database changes)."""
        version = (int(cur.execute("PRAGMA data_version").fetchone()[0]), self._writes)
        if self._corpus_cache is not None and self._corpus_cache.version == version:
            return self._corpus_cache
        completed: dict[str, tuple[int, str]] = {
            tid: (int(count or 0), done or "")
            for tid, count, done in cur.execute(
                "SELECT id, json_extract(props, '$.term_count'), json_extract(props, '$.completed_at') "
                "FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') = 'completed'"
            )
        }
        touching: dict[str, set[str]] = {}
        for tid, path in cur.execute(
            "SELECT h.src_id, f.dst_id FROM edges h JOIN edges f ON f.src_label = 'Handoff' "
            "AND f.src_id = h.dst_id AND f.type IN ('MODIFIED', 'CREATED') AND f.dst_label = 'File' "
            "WHERE h.src_label = 'Task' AND h.type = 'HANDED_OFF'"
        ):
            if tid in completed:
                touching.setdefault(tid, set()).add(path)
        touched_by = {tid: tuple(sorted(paths)) for tid, paths in touching.items()}
        counts: dict[str, list[int]] = {}
        for tid, paths in touched_by.items():
            for path in paths:
                entry = counts.setdefault(path, [0, 0])
                entry[0] += 1
                entry[1] += completed[tid][0]
        touches = {path: (n, length) for path, (n, length) in counts.items()}
        files = []
        for (text,) in cur.execute("SELECT props FROM nodes WHERE label = 'File' ORDER BY id"):
            props = _loads(text)
            files.append((file_from_props(props), tuple(props.get("terms") or ()), bool(props.get("in_map", True))))
        corpus = _Corpus(version=version, completed=completed, touched_by=touched_by, touches=touches, files=files)
        all_tasks = int(cur.execute("SELECT count(*) FROM nodes WHERE label = 'Task'").fetchone()[0])
        corpus.unfinished = all_tasks - len(completed)
        corpus.total_task_len = sum(count for count, _ in completed.values())
        corpus.mapped = any(in_map for _, _, in_map in files)
        corpus.rankable = {entry.path: i for i, (entry, _, in_map) in enumerate(files)
                           if in_map or not corpus.mapped}
        corpus.sorted_paths = sorted(corpus.rankable)
        corpus.by_touches = tuple(sorted(corpus.rankable.values(),
                                         key=lambda i: (-touches.get(files[i][0].path, (0, 0))[0], files[i][0].path)))
        by_term: dict[str, list[int]] = {}
        for i in corpus.rankable.values():
            file_entry, own, _ = files[i]
            corpus.lengths[file_entry.path] = len(own) + touches.get(file_entry.path, (0, 0))[1]
            corpus.total_file_len += corpus.lengths[file_entry.path]
            for term in set(own):
                by_term.setdefault(term, []).append(i)
        corpus.by_term = {term: tuple(found) for term, found in by_term.items()}
        self._corpus_cache = corpus
        return corpus

    def history_evidence(self, terms: Sequence[str], max_df_share: float, top_files: int = 10,
                         vector: Sequence[float] | None = None) -> HistoryEvidence:
        with self._read() as cur:
            corpus = self._corpus(cur)
            near = self._neighbours(cur, corpus, vector, terms) if vector is not None else ()
            n = len(corpus.completed)
            max_df = max_term_df(n, max_df_share)
            # Count each term's mentions first (the index answers) and read the
            # mentions only of terms that can be in at most max_df finished tasks:
            # a common term's thousands of rows would be read to be thrown away.
            wanted_json = json.dumps(list(terms))
            rare = [name for name, count in cur.execute(
                "SELECT dst_id, count(*) FROM edges WHERE dst_label = 'Term' AND dst_id IN "
                "(SELECT value FROM json_each(?)) AND type = 'MENTIONS' AND src_label = 'Task' GROUP BY dst_id",
                (wanted_json,),
            ) if count - corpus.unfinished <= max_df]
            mentions: dict[str, list[str]] = {}
            for name, tid in cur.execute(
                "SELECT dst_id, src_id FROM edges WHERE dst_label = 'Term' AND type = 'MENTIONS' "
                "AND src_label = 'Task' AND dst_id IN (SELECT value FROM json_each(?))",
                (json.dumps(rare),),
            ):
                if tid in corpus.completed:
                    mentions.setdefault(name, []).append(tid)
        matched: dict[str, list[tuple[str, int]]] = {}
        for name, tids in mentions.items():
            if len(tids) <= max_df:
                for tid in tids:
                    matched.setdefault(tid, []).append((name, len(tids)))
        hits = [
            MatchedTask(tid, corpus.completed[tid][0], corpus.completed[tid][1], tuple(sorted(matched[tid])),
                    corpus.touched_by.get(tid, ()))
            for tid in sorted(matched)
        ]
        # The files' own query terms, but not terms of more rankable files than the cap.
        wanted = {t for t in terms if len(corpus.by_term.get(t, ())) <= evidence.TERM_DF_CAP}
        own: dict[str, tuple[str, ...]] = {}
        for term in wanted:
            for i in corpus.by_term.get(term, ()):
                entry, own_terms, _ = corpus.files[i]
                if entry.path not in own:
                    own[entry.path] = tuple(t for t in own_terms if t in wanted)
        total = corpus.total_task_len
        kept = bound(
            hits, n_tasks=n, total_task_len=total, own=own, lengths=corpus.lengths, rankable=corpus.rankable,
            mapped_paths=corpus.sorted_paths if corpus.mapped else None, n_files=len(corpus.rankable),
            total_file_len=corpus.total_file_len,
            most_touched=(corpus.files[i][0].path for i in corpus.by_touches[:top_files]),
            also=(p for n in near for p in n.files),
        )
        # model_construct: every field is built here from typed values; validating
        # the models on every context cost more than the rest of the read.
        tasks = tuple(
            TaskEvidence.model_construct(id=h.id, term_count=h.term_count, completed_at=h.completed_at,
                                         matched=h.matched, files=h.files)
            for h in kept.tasks
        )
        files = []
        for i in sorted(corpus.rankable[p] for p in kept.files):
            entry, own_terms, in_map = corpus.files[i]
            touches, task_len = corpus.touches.get(entry.path, (0, 0))
            files.append(FileEvidence.model_construct(
                entry=entry, touches=touches, task_len=task_len, own_len=len(own_terms),
                own_terms=own.get(entry.path, ()), in_map=in_map,
                term_tf=tuple(sorted(kept.term_tf.get(entry.path, {}).items()))))
        return HistoryEvidence(n_tasks=n, total_task_len=total, tasks=tasks, files=tuple(files),
                               n_files=len(corpus.rankable), total_file_len=corpus.total_file_len,
                               mapped=corpus.mapped, file_df=tuple(sorted(kept.file_df.items())),
                               neighbours=near)

    def replay_corpus(self) -> tuple[list[ReplayTask], list[ReplayFile]]:
        with self._read() as cur:
            return local_replay.replay_corpus(cur, vectors=self._vector_table(cur))

    def _vector_table(self, cur: sqlite3.Cursor) -> bool:
        """Whether the task_vectors table exists (a store written by an older
        ctxgraph and opened read-only has none: it then has no vectors)."""
        if self._has_vector_table is None:
            self._has_vector_table = cur.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'task_vectors'").fetchone() is not None
        return self._has_vector_table

    def _neighbours(self, cur: sqlite3.Cursor, corpus: _Corpus, vector: Sequence[float],
                    terms: Sequence[str]) -> tuple[NeighbourEvidence, ...]:
        """The finished tasks nearest to ``vector`` by cosine (exact, over every
        vector), best first: ties go to the newer task, then to the smaller id."""
        import numpy as np

        if not self._vector_table(cur):
            return ()
        if corpus.vector_ids is None:
            ids, rows = [], []
            for tid, blob in cur.execute("SELECT id, vec FROM task_vectors ORDER BY id"):
                if tid in corpus.completed:
                    ids.append(tid)
                    rows.append(np.frombuffer(blob, dtype=np.float32))
            matrix = np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)
            if rows:
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
            corpus.vector_ids, corpus.vectors = tuple(ids), matrix
        if not corpus.vector_ids:
            return ()
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (corpus.vectors.shape[1],) or not np.linalg.norm(query):
            return ()
        sims = corpus.vectors @ (query / np.linalg.norm(query))
        fetch = min(len(sims), 4 * evidence.DENSE_VOTERS)
        candidates = np.argpartition(-sims, fetch - 1)[:fetch] if fetch < len(sims) else range(len(sims))
        scored = [(round(float(sims[i]), COSINE_DECIMALS), corpus.vector_ids[i]) for i in candidates]
        scored.sort(key=lambda r: r[1])
        scored.sort(key=lambda r: corpus.completed[r[1]][1], reverse=True)
        scored.sort(key=lambda r: r[0], reverse=True)
        best = scored[:evidence.DENSE_VOTERS]
        wanted = set(terms)
        mentioned: dict[str, list[str]] = {}
        for tid, name in cur.execute(
            "SELECT src_id, dst_id FROM edges WHERE src_label = 'Task' AND type = 'MENTIONS' AND dst_label = 'Term' "
            "AND src_id IN (SELECT value FROM json_each(?))", (json.dumps([tid for _, tid in best]),),
        ):
            if name in wanted:
                mentioned.setdefault(tid, []).append(name)
        return tuple(
            NeighbourEvidence.model_construct(id=tid, score=score, completed_at=corpus.completed[tid][1],
                                              matched=tuple(sorted(mentioned.get(tid, ()))),
                                              files=corpus.touched_by.get(tid, ()))
            for score, tid in best
        )

    # -- task vectors (what the neighbours by embedding are found with) --------------

    def tasks_to_embed(self, limit: int) -> list[tuple[str, str]]:
        with self._read() as cur:
            have = dict(cur.execute("SELECT id, text_hash FROM task_vectors")) if self._vector_table(cur) else {}
            out: list[tuple[str, str]] = []
            for tid, props in cur.execute(
                "SELECT id, props FROM nodes WHERE label = 'Task' AND json_extract(props, '$.status') = 'completed' "
                "ORDER BY id"
            ):
                text = task_text(_loads(props))
                if text and have.get(tid) != text_hash(text):
                    out.append((tid, text))
                    if len(out) >= limit:
                        break
        return out

    def write_task_vectors(self, rows: Sequence[tuple[str, str, Sequence[float]]]) -> None:
        import numpy as np

        with self._write() as cur:
            known = {tid for (tid,) in cur.execute(
                "SELECT id FROM nodes WHERE label = 'Task' AND id IN (SELECT value FROM json_each(?))",
                (json.dumps([r[0] for r in rows]),))}
            cur.executemany(
                "INSERT OR REPLACE INTO task_vectors (id, text_hash, vec) VALUES (?, ?, ?)",
                [(tid, digest, np.asarray(vec, dtype=np.float32).tobytes()) for tid, digest, vec in rows
                 if tid in known],
            )

    def has_task_vectors(self) -> bool:
        with self._read() as cur:  # stops at the first row
            return self._vector_table(cur) and cur.execute("SELECT 1 FROM task_vectors LIMIT 1").fetchone() is not None

    def task_vector_count(self) -> int:
        with self._read() as cur:
            if not self._vector_table(cur):
                return 0
            return int(cur.execute("SELECT count(*) FROM task_vectors").fetchone()[0])

    def _count(self, label: str) -> int:
        with self._read() as cur:
            row = cur.execute("SELECT count(*) FROM nodes WHERE label = ?", (label,)).fetchone()
        return int(row[0])

    def stats(self) -> Stats:
        with self._read() as cur:
            labels = dict(cur.execute("SELECT label, count(*) FROM nodes GROUP BY label ORDER BY label"))
            rels = dict(cur.execute("SELECT type, count(*) FROM edges GROUP BY type ORDER BY type"))
        return Stats(labels=labels, relationships=rels)

    # -- export / import (the file format: ctxgraph.graph.backup) -------------------

    def export_rows(self) -> Iterator[dict[str, Any]]:
        """The whole graph as export rows (see ``KnowledgeStore.export_rows``),
        read in one transaction and yielded after it ends."""
        with self._read() as cur:
            nodes = cur.execute("SELECT label, id, props FROM nodes").fetchall()
            edges = cur.execute(
                "SELECT type, src_label, src_id, dst_label, dst_id, props FROM edges"
            ).fetchall()
        yield from sorted_rows(
            (node_row(label, node_id, _loads(props)) for label, node_id, props in nodes),
            (rel_row(rel, (sl, si), (dl, di), _loads(props)) for rel, sl, si, dl, di, props in edges),
        )

    def import_rows(self, rows: Iterable[dict[str, Any]]) -> None:
        """Write export rows with MERGE semantics, one transaction per batch
        (see ``KnowledgeStore.import_rows``)."""
        for kind, batch in backup_batches(rows):
            with self._write() as cur:
                if kind == "node":
                    local_memory.bump_generation(cur)
                    for row in batch:
                        self._put_node(cur, row["label"], row["props"])
                    continue
                for row in batch:
                    src, dst = (row["src"][0], row["src"][1]), (row["dst"][0], row["dst"][1])
                    for end in (src, dst):
                        found = cur.execute(
                            "SELECT 1 FROM nodes WHERE label = ? AND id = ?", end
                        ).fetchone()
                        if found is None:
                            raise InvalidDocumentError(
                                "<import>", [("", f"{row['type']} relationship: no {end[0]} node {end[1]!r}")]
                            )
                    self._put_edge(cur, src, row["type"], dst, row["props"])

    # -- context outcomes (ctxgraph.graph.local_outcomes) ----------------------------

    def record_deliveries(self, deliveries: Sequence[Delivery], keep: int) -> None:
        local_outcomes.record(self, deliveries, keep)

    def deliveries(self, *, task_ids: Sequence[str] | None = None, since: str | None = None,
                   last: int | None = None) -> list[StoredDelivery]:
        return local_outcomes.read(self, task_ids=task_ids, since=since, last=last)

    def score_deliveries(self, scores: Sequence[tuple[str, DeliveryScore]]) -> None:
        local_outcomes.save_scores(self, scores)

    def handoff_files(self, task_ids: Sequence[str]) -> dict[str, list[str]]:
        return local_outcomes.handoff_files(self, task_ids)

    # -- associative memory (ctxgraph.graph.local_memory) ----------------------------

    def memory_projects(self) -> list[MemoryProject]:
        return local_memory.projects(self)

    def memory_state(self, project: str) -> MemoryState:
        return local_memory.state(self, project)

    def write_memory(self, project: MemoryProject, chunks: Sequence[MemoryChunk], replaced: Sequence[str]) -> None:
        local_memory.write(self, project, chunks, replaced)

    def search_memory(
        self, project: str, vector: Sequence[float] | None, terms: Sequence[str], k: int,
    ) -> tuple[list[MemoryHit], list[MemoryHit]]:
        return local_memory.search(self, project, vector, terms, k)
