"""The root watcher and names that are not UTF-8 (issue 40): `watchfiles` stops on
them ("Unable to decode path"); the watcher signals, watches again, and polls
once a folder's name stops every watch as it starts. Real threads, real files."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from ctxgraph.memory.watch import RootWatcher, events_available

pytestmark = pytest.mark.skipif(not events_available(), reason="watchfiles is not installed")


def odd(folder: Path, name: bytes, *, directory: bool = False) -> None:
    path = os.path.join(os.fsencode(folder), name)
    try:
        if directory:
            os.mkdir(path)
        else:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("def cafe():\n    return 1\n")
    except OSError as exc:  # a file system that takes UTF-8 names only
        pytest.skip(f"no name that is not UTF-8 here: {exc}")


class Signals:
    def __init__(self) -> None:
        self.count = 0
        self.event = threading.Event()

    def __call__(self) -> None:
        self.count += 1
        self.event.set()

    def wait(self, act: object = None, seconds: float = 30.0) -> bool:
        """Until a signal comes, doing ``act()`` (a write) again every half second."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.event.clear()
            if callable(act):
                act()
            if self.event.wait(0.5):
                return True
        return False


def test_a_file_named_in_bad_bytes_is_signalled_and_the_events_go_on(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    signals = Signals()
    watcher = RootWatcher(tmp_path, signals, mode="events")
    watcher.start()
    try:
        assert signals.wait(lambda: odd(tmp_path, b"caf\xe9.py"))
        seen = signals.count
        assert signals.wait(lambda: (tmp_path / "ok.py").write_text(f"x = {time.time_ns()}\n", encoding="utf-8"))
        assert signals.count > seen and watcher.mode == "events" and watcher.is_alive()
    finally:
        watcher.stop()
        watcher.join(10)


def test_a_folder_named_in_bad_bytes_makes_the_watcher_poll(tmp_path: Path) -> None:
    odd(tmp_path, b"d\xe9", directory=True)
    signals = Signals()
    watcher = RootWatcher(tmp_path, signals, mode="events", poll_seconds=0.1)
    watcher.start()
    try:
        deadline = time.monotonic() + 30
        while watcher.mode != "poll" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watcher.mode == "poll" and watcher.is_alive()
        assert signals.wait(lambda: (tmp_path / "new.py").write_text(f"x = {time.time_ns()}\n", encoding="utf-8"))
    finally:
        watcher.stop()
        watcher.join(10)
