"""Watching a project's root: something under it changed, index it again.

A :class:`RootWatcher` (a daemon thread) calls ``on_change()`` soon after a
file under the root is saved, added or deleted; what changed exactly is then
found by the run itself with the stat-then-hash scan
(:func:`ctxgraph.memory.scan.changes`), so a missed or extra signal costs
nothing but a cheap scan. Two ways to notice a change:

- **events** (the default when `watchfiles` imports): the operating system's
  file notifications (inotify, FSEvents, ReadDirectoryChangesW) through
  `watchfiles`; changes are grouped for :data:`STEP_MS` of quiet. Measured
  on this project's worktree (369 candidate files, a 2-core machine at load
  5-7): 0.05-0.11 s from a save to the signal, 0.08 % of a core when idle.
- **poll**: :func:`~ctxgraph.memory.scan.changes` every ``poll_seconds``
  against the stats of the previous poll (no file is read unless its stat
  moved). The same worktree: 7 ms of CPU a poll, 2.6 % of a core at 0.25 s
  and 1.5 % at 0.5 s — growing with the files (about 20 µs a file), so
  events are preferred; polling is the fallback where notifications do not
  work (some network or container file systems) or `watchfiles` is missing.

Events under skipped folders (:data:`~ctxgraph.memory.scan.SKIP_DIRS`,
dot-folders) and of files that are neither candidates nor possibly folders
(a ``.db-wal``, an editor's swap file) are ignored, so that a store kept
under the root does not wake its own watcher.

A path that is not UTF-8 (``caf\\xe9.py``, known as ``caf%E9.py``) is one
`watchfiles` cannot give to Python: it stops with "Unable to decode path",
and the changes it was grouping are lost to it. The watcher then signals a
change anyway (the run's scan finds what changed, odd names included) and
watches again; after :data:`MAX_RESTARTS` such stops within
:data:`RESTART_WINDOW` seconds (a folder with such a name stops every watch
as it starts) it polls instead, logged once. Hidden files are candidates
like any other (:mod:`.scan`), so their events count; hidden folders' do not.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxgraph.core.models import FileStat
from ctxgraph.memory.scan import SKIP_DIRS, changes, wanted

log = logging.getLogger(__name__)

#: Quiet time (ms) that ends a group of file events.
STEP_MS = 50
#: Seconds between two polls when polling.
POLL_SECONDS = 0.5
#: Stops of the file events on a name they cannot decode, within RESTART_WINDOW
#: seconds, after which the watcher polls instead.
MAX_RESTARTS = 3
RESTART_WINDOW = 60.0


def relevant(root: Path, path: str) -> bool:
    """Whether an event on ``path`` may change the index of ``root``."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return False
    if not parts or any(p in SKIP_DIRS or p.startswith(".") for p in parts[:-1]) or parts[-1] in SKIP_DIRS:
        return False
    name = parts[-1]
    return wanted(name) or not Path(name).suffix  # a candidate (hidden ones too), or maybe a folder


def events_available() -> bool:
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        return False
    return True


def undecodable(exc: BaseException) -> bool:
    """Whether `watchfiles` stopped on a path it cannot decode."""
    return "decode path" in str(exc)


class RootWatcher(threading.Thread):
    """Calls ``on_change()`` after files under ``root`` change (see the module).

    ``mode``: ``events``, ``poll``, or ``auto`` (events when available). A
    failure of the events (a watch limit reached) falls back to polling,
    logged. :meth:`stop` ends it within about half a second."""

    def __init__(self, root: Path, on_change: Callable[[], None], *, mode: str = "auto",
                 poll_seconds: float = POLL_SECONDS, name: str = "ctxgraph-root-watcher") -> None:
        super().__init__(name=name, daemon=True)
        self.root = root.resolve()
        self.on_change = on_change
        self.mode = "events" if mode == "auto" and events_available() else ("poll" if mode == "auto" else mode)
        self.poll_seconds = poll_seconds
        self._stop_event = threading.Event()
        self.signals = 0

    def stop(self) -> None:
        self._stop_event.set()

    @property
    def stopped(self) -> bool:
        return self._stop_event.is_set()

    def _signal(self) -> None:
        self.signals += 1
        try:
            self.on_change()
        except Exception as exc:  # the watcher outlives a failing callback
            log.warning("after a change under %s: %s", self.root, exc)

    def run(self) -> None:
        if self.mode == "events":
            try:
                self._events()
                return
            except Exception as exc:  # e.g. the inotify watch limit: polling still works
                if self.stopped:
                    return
                log.warning("watching %s with file events failed (%s); polling every %.1f s instead",
                            self.root, exc, self.poll_seconds)
                self.mode = "poll"
        self._poll()

    def _events(self) -> None:
        """File events until stopped; a stop on a name that is not UTF-8 signals
        and watches again (see the module), a few times in a row at most."""
        stops: list[float] = []
        while not self.stopped:
            try:
                self._watch()
                return
            except Exception as exc:
                if self.stopped or not undecodable(exc):
                    raise
                now = time.monotonic()
                stops = [t for t in stops if now - t < RESTART_WINDOW] + [now]
                log.debug("file events under %s stopped on a name that is not UTF-8 (%s)", self.root, exc)
                self._signal()  # what the stopped watch was grouping: the run's scan finds it
                if len(stops) >= MAX_RESTARTS:
                    raise

    def _watch(self) -> None:
        import watchfiles

        def keep(change: Any, path: str) -> bool:
            return relevant(self.root, path)

        for _ in watchfiles.watch(self.root, watch_filter=keep, stop_event=self._stop_event, step=STEP_MS,
                                  debounce=1000, rust_timeout=500, yield_on_timeout=False,
                                  raise_interrupt=False):
            if self.stopped:
                return
            self._signal()

    def _poll(self) -> None:
        stats: dict[str, FileStat] = changes(self.root, {}).stats
        while not self._stop_event.wait(self.poll_seconds):
            began = time.monotonic()
            found = changes(self.root, stats)
            stats = found.stats
            if found.any:
                log.debug("poll of %s: %s in %.3f s", self.root, found.paths(), time.monotonic() - began)
                self._signal()
