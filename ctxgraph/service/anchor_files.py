"""The files anchors are made from and checked against (issue 32, issue 40):
found inside the project's root, read at most once each, and never read
whole when they are big. The hashes are :mod:`ctxgraph.core.anchors`'.

- **Inside the root.** A path is joined to the root and resolved
  (``realpath``: every link followed); a file that resolves outside the
  root — ``passwd.txt`` linking to ``/etc/passwd``, ``home/.bashrc`` under a
  link to ``/root`` — is not the project's: no anchor, and nothing of it is
  read (not even its stat is kept). The resolved path is what is opened,
  without following a link (``O_NOFOLLOW``), and a FIFO or a device is never
  opened for reading.
- **Capped.** A file over :data:`MAX_READ_BYTES` is anchored and checked by
  its stat alone (:data:`ctxgraph.core.anchors.NOT_READ`): never read.
- **Once.** A :class:`FileReads` serves one ingestion or one check: each
  file is read and hashed at most once there (memoized by its resolved
  path, size and mtime), its blob id and the hashes of all the cited lines
  asked of it made from that one read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ctxgraph.core.anchors import NOT_READ, blob_id, fs_path, lines_hashes

#: Files larger than this (64 MiB) are never read for an anchor: their stat
#: (size, mtime) stands for their content.
MAX_READ_BYTES = 64 * 1024 * 1024
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Digest:
    """A file as one read found it: its (size, mtime_ns), its blob id
    (:data:`NOT_READ` when it was too big to read) and the hash of each
    cited lines asked of it (None for a whole file, or a file not read)."""

    stat: tuple[int, int]
    blob: str
    lines: Mapping[str | None, str | None]


def real_top(root: Path | str) -> str:
    """The root as every file under it is compared with: resolved, with a trailing separator."""
    top = os.path.realpath(root)
    return top if top.endswith(os.sep) else top + os.sep


def resolve(top: str, path: str) -> str | None:
    """The resolved path of the file ``path`` names under ``top`` (a
    :func:`real_top`); None when it resolves outside it (or to the root itself)."""
    if not path or path.startswith("/") or "\0" in path or ":" in path.split("/", 1)[0]:
        return None
    try:
        real = os.path.realpath(os.path.join(top, fs_path(path)))
    except (OSError, ValueError):
        return None
    return real if real.startswith(top) else None


class FileReads:
    """The files under one root as one ingestion or one check reads them:
    each inside the root (:func:`resolve`) or not at all, read at most once,
    or not at all over :data:`MAX_READ_BYTES`. ``reads``: the files read."""

    def __init__(self, root: Path | str, *, limit: int = MAX_READ_BYTES) -> None:
        self.top = real_top(root)
        self.limit = limit
        self.reads = 0
        self._done: dict[tuple[str, int, int], Digest] = {}

    def digest(self, path: str, specs: Iterable[str | None] = (None,)) -> Digest | None:
        """``path``'s file now, with the hashes of the cited lines ``specs``;
        None when it is not a regular file inside the root."""
        real = resolve(self.top, path)
        if real is None:
            return None
        try:
            st = os.stat(real)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        wanted = set(specs)
        key = (real, st.st_size, st.st_mtime_ns)
        done = self._done.get(key)
        if done is not None and wanted <= done.lines.keys():
            return done
        made: Digest | None
        if st.st_size > self.limit:
            made = Digest((st.st_size, st.st_mtime_ns), NOT_READ, dict.fromkeys(wanted))
        else:
            made = self._read(real, wanted | set(done.lines if done else ()))
        if made is not None:
            self._done[(real, *made.stat)] = made
        return made

    def _read(self, real: str, specs: set[str | None]) -> Digest | None:
        try:
            fd = os.open(real, _OPEN_FLAGS)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_size > self.limit:
                return Digest((st.st_size, st.st_mtime_ns), NOT_READ, dict.fromkeys(specs))
            try:
                data = f.read(st.st_size + 1)
                if len(data) > st.st_size:  # it grew as it was read
                    data += f.read(self.limit + 1 - len(data))
            except OSError:
                return None
        self.reads += 1
        if len(data) > self.limit:
            return Digest((len(data), st.st_mtime_ns), NOT_READ, dict.fromkeys(specs))
        return Digest((len(data), st.st_mtime_ns), blob_id(data), lines_hashes(data, specs))


__all__ = ["MAX_READ_BYTES", "Digest", "FileReads", "real_top", "resolve"]
