"""The embedded store under a held write lock: a writer waits (busy timeout,
then retries with backoff) and goes on once the lock is released; if it is
never released the user gets one clear StoreUnavailableError, never SQLite's
bare "database is locked". A write that SQLite refuses midway is rolled back."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from ctxgraph.core.models import FileEntry
from ctxgraph.errors import StoreUnavailableError
from ctxgraph.graph.local import LocalStore, connection
from tests._reads import stored_files

ENTRY = FileEntry(path="src/app.py", component="app", notes="wiring")


@pytest.fixture
def short_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "_BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(connection, "_LOCK_RETRY_SECONDS", 1.5)


def hold_write_lock(path: Path, seconds: float) -> threading.Thread:
    ready = threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        ready.set()
        time.sleep(seconds)
        conn.execute("ROLLBACK")
        conn.close()

    thread = threading.Thread(target=hold)
    thread.start()
    ready.wait(10)
    return thread


def test_a_writer_outlasts_a_lock_held_longer_than_the_busy_timeout(tmp_path: Path, short_timeouts: None) -> None:
    store = LocalStore.open(tmp_path / "graph.db")
    try:
        holder = hold_write_lock(store.path, 0.5)  # 10 busy timeouts
        began = time.monotonic()
        store.upsert_files([ENTRY])
        assert time.monotonic() - began >= 0.3
        holder.join()
        assert list(stored_files(store)) == ["src/app.py"]
    finally:
        store.close()


def test_a_lock_never_released_is_one_clear_error(tmp_path: Path, short_timeouts: None) -> None:
    store = LocalStore.open(tmp_path / "graph.db")
    try:
        holder = hold_write_lock(store.path, 3.0)
        with pytest.raises(StoreUnavailableError) as locked:
            store.upsert_files([ENTRY])
        holder.join()
        message = str(locked.value)
        assert "still locked by another process" in message and "database is locked" not in message
        assert stored_files(store) == {}
    finally:
        store.close()


def test_reads_go_on_while_another_process_writes(tmp_path: Path, short_timeouts: None) -> None:
    store = LocalStore.open(tmp_path / "graph.db")
    store.upsert_files([ENTRY])
    reader = LocalStore.open(store.path, read_only=True)
    try:
        holder = hold_write_lock(store.path, 0.5)
        began = time.monotonic()
        assert list(stored_files(reader)) == ["src/app.py"]  # WAL: readers never wait
        assert time.monotonic() - began < 0.4
        holder.join()
    finally:
        reader.close()
        store.close()


def test_a_write_refused_midway_is_rolled_back_and_reported_in_one_line(tmp_path: Path) -> None:
    store = LocalStore.open(tmp_path / "graph.db")
    try:
        store.upsert_files([ENTRY])
        with pytest.raises(StoreUnavailableError, match="cannot write to the embedded store"):  # noqa: SIM117
            with store.db.write() as cur:
                cur.execute("DELETE FROM nodes")
                cur.execute("INSERT INTO no_such_table VALUES (1)")
        assert list(stored_files(store)) == ["src/app.py"]
    finally:
        store.close()
