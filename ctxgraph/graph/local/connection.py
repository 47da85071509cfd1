"""The embedded store's SQLite connection: opening (writable or ``mode=ro``),
the schema, and read and write transactions.

SQLite gives durability and safe use by several processes (WAL journal,
``BEGIN IMMEDIATE`` for writes, a busy timeout, and a retry with backoff when
SQLite still answers "database is locked"). Every write transaction commits
on clean exit and rolls back on error: a process killed in the middle of one
leaves the store as it was before it (SQLite rolls the WAL tail back on the
next open).

The store's folder and files are its owner's alone (``0700``, ``0600``) and
a ``.ctxgraph`` folder made for it is ignored by git: :mod:`ctxgraph.graph.local.folder`.
"""

from __future__ import annotations

import functools
import logging
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from ctxgraph.errors import StoreUnavailableError
from ctxgraph.graph.local import folder, sql

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
_BUSY_TIMEOUT_MS = 60_000
#: How long to keep retrying when SQLite says "locked" or "busy" despite the busy
#: timeout (it does so without waiting in a few cases, e.g. while a WAL is recovered).
_LOCK_RETRY_SECONDS = 60.0

T = TypeVar("T")


def _lower(value: str | None) -> str | None:
    return None if value is None else value.lower()


def _probe(conn: sqlite3.Connection) -> None:
    conn.execute(sql.PROBE).fetchone()


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


class Connection:
    """One SQLite connection to the store's file, shared by the store's parts.
    No IO until :meth:`connect` or :meth:`connect_read_only`."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._indexes: set[str] | None = None  # index names, read once per open
        self._aggregates: bool | None = None  # whether the kept counts exist, read once per open

    def connect(self) -> None:
        """Open the file for writing (created if missing), waiting while it is locked."""
        _retry_locked(self._connect, f"open {self.path}")

    def _connect(self) -> None:
        self.close()
        try:
            folder.prepare(self.path, create=True)  # 0700 folder, 0600 file (SQLite's WAL files follow it)
            conn = sqlite3.connect(
                self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                check_same_thread=False,
            )
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailableError(f"cannot open the embedded store at {self.path}: {_reason(exc)}") from None
        try:
            conn.execute(sql.busy_timeout(_BUSY_TIMEOUT_MS))
            conn.execute(sql.JOURNAL_WAL)
            conn.execute(sql.SYNCHRONOUS_NORMAL)
            conn.execute(sql.FOREIGN_KEYS_OFF)
        except sqlite3.Error as exc:
            conn.close()
            if _is_locked(exc):
                raise
            raise StoreUnavailableError(_open_failure(self.path, exc)) from None
        self._setup(conn)

    def connect_read_only(self) -> None:
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
        folder.prepare(self.path, create=False)
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
                conn.execute(sql.busy_timeout(_BUSY_TIMEOUT_MS))
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
        with self.write() as cur:
            for statement in filter(None, (s.strip() for s in sql.SCHEMA.split(";"))):
                cur.execute(statement)
            row = cur.execute(sql.SCHEMA_VERSION_GET).fetchone()
            if row is None:
                cur.execute(sql.SCHEMA_VERSION_SET, (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreUnavailableError(
                    f"{self.path} was written by a newer ctxgraph (schema {row[0]})"
                )
            for statement in sql.GRAPH_GENERATION_MAKE:
                cur.execute(statement)
            cur.execute(sql.DROP_MENTIONS)  # (the edges_by_type index: one probe when there is none)
            # the kept counts (sql.AGGREGATES): made and filled once, in this transaction
            kept = cur.execute(sql.AGGREGATES_VERSION_GET).fetchone()
            if kept is None or kept[0] != sql.AGGREGATES_VERSION:
                for statement in (*sql.AGGREGATES_DROP, *sql.AGGREGATES):
                    cur.execute(statement)
                cur.execute(sql.AGGREGATES_VERSION_SET, (sql.AGGREGATES_VERSION,))

    def check_schema(self) -> None:
        """Read-only open: the file must already be a ctxgraph store."""
        with self.read() as cur:
            tables = {r[0] for r in cur.execute(sql.TABLES)}
            if not {"meta", "nodes", "edges"} <= tables:
                raise StoreUnavailableError(
                    f"{self.path} is not a ctxgraph store (no ctxgraph tables; `ctxgraph init` creates them)"
                )
            row = cur.execute(sql.SCHEMA_VERSION_GET).fetchone()
        if row is not None and int(row[0]) > SCHEMA_VERSION:
            raise StoreUnavailableError(f"{self.path} was written by a newer ctxgraph (schema {row[0]})")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def write(self) -> Iterator[sqlite3.Cursor]:
        """One write transaction: committed on clean exit, rolled back on error
        (and by SQLite on the next open if the process dies inside it)."""
        if self.read_only:
            raise StoreUnavailableError(f"the embedded store at {self.path} was opened read-only")
        with self._lock:
            cur = self.conn.cursor()
            try:
                _retry_locked(lambda: cur.execute(sql.BEGIN_IMMEDIATE), f"write to {self.path}")
            except sqlite3.Error as exc:
                cur.close()
                raise StoreUnavailableError(_open_failure(self.path, exc)) from None
            try:
                yield cur
            except sqlite3.Error as exc:
                if self.conn.in_transaction:
                    cur.execute(sql.ROLLBACK)
                if type(exc) in (sqlite3.OperationalError, sqlite3.DatabaseError):
                    # read-only file, disk full, I/O error: one clear line, nothing written
                    raise StoreUnavailableError(_open_failure(self.path, exc)) from None
                raise
            except BaseException:
                if self.conn.in_transaction:
                    cur.execute(sql.ROLLBACK)
                raise
            else:
                try:
                    _retry_locked(lambda: cur.execute(sql.COMMIT), f"commit to {self.path}")
                except sqlite3.Error as exc:
                    if self.conn.in_transaction:
                        cur.execute(sql.ROLLBACK)
                    raise StoreUnavailableError(_open_failure(self.path, exc)) from None
            finally:
                cur.close()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Cursor]:
        """One read transaction (a consistent snapshot under WAL). Inside a
        transaction this thread already holds (a gather's parts), part of it."""
        with self._lock:
            cur = self.conn.cursor()
            if self.conn.in_transaction:
                try:
                    yield cur
                finally:
                    cur.close()
                return
            cur.execute(sql.BEGIN)
            try:
                yield cur
            except sqlite3.OperationalError as exc:
                if not _is_locked(exc):
                    raise
                raise StoreUnavailableError(f"cannot read {self.path}: {_reason(exc)}") from None
            finally:
                if self.conn.in_transaction:
                    cur.execute(sql.COMMIT)
                cur.close()

    def version(self, cur: sqlite3.Cursor) -> tuple[int, int]:
        """What the caches are keyed on: the graph's generation (``sql.GRAPH_GENERATION``,
        made by every writing open); in a store without one (an older store
        opened read-only, so never written by this connection), every change
        by other connections."""
        row = cur.execute(sql.GRAPH_GENERATION).fetchone()
        if row is not None:
            return int(row[0]), 0
        return int(cur.execute(sql.DATA_VERSION).fetchone()[0]), -1

    def has_index(self, cur: sqlite3.Cursor, name: str) -> bool:
        if self._indexes is None:
            self._indexes = {r[0] for r in cur.execute(sql.INDEXES)}
        return name in self._indexes

    def has_aggregates(self, cur: sqlite3.Cursor) -> bool:
        """Whether the store keeps its counts (``sql.AGGREGATES``): every store a
        writing open has seen; one opened read-only before that is counted instead."""
        if self._aggregates is None:
            row = cur.execute(sql.AGGREGATES_VERSION_GET).fetchone()
            self._aggregates = row is not None and row[0] == sql.AGGREGATES_VERSION
        return self._aggregates
