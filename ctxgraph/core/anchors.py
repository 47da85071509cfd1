"""Code anchors, the pure half (issue 32): the git blob id of a file's bytes,
the hash of the lines a handoff cites, an anchor's id, and what a file's
current bytes (or, for a file too big to read, its stat) say about an
anchor. No IO: the work tree is read by :mod:`ctxgraph.service.anchor_files`.

A git blob id is ``sha1(b"blob <size>\\0" + content)``, the id ``git
hash-object`` prints, so an anchor can be compared with a commit's tree
without git. Cited lines (``"10-24"``, ``"7"``, ``"3-5,9-12"``; 1-based,
inclusive) are hashed as the sha1 of those lines' bytes, line ends included
(``\\n``, ``\\r\\n`` or ``\\r``, as :meth:`bytes.splitlines` splits), with a
``\\0`` after each range; a range past the file's end takes what there is.
An anchor on a file too big to read has the blob id :data:`NOT_READ` and no
lines hash: only its size and mtime say whether it changed.

A path with bytes that are not UTF-8 (``caf\\xe9.py`` on disk, ``caf%E9.py`` shown) is held as the file
system gives it to Python (``surrogateescape``) only on its way to the file
system; stored and shown, it is :func:`shown_path`'s escaped text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from ctxgraph.core.models.anchors import Anchor
from ctxgraph.core.names import disk_name, shown_name

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")
#: The blob id of an anchor on a file not read (over the read limit): no blob id is this.
NOT_READ = ""
#: The bytes whose newlines are counted at once when a line is looked for.
_BLOCK = 1 << 16


def blob_id(data: bytes | memoryview) -> str:
    """The git blob id of ``data`` (what ``git hash-object`` prints)."""
    h = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    h.update(data)
    return h.hexdigest()


def parse_lines(spec: str | None) -> tuple[tuple[int, int], ...]:
    """``"10-24,30"`` -> ((10, 24), (30, 30)); () when ``spec`` is empty or not
    a list of 1-based line ranges (the anchor is then on the whole file)."""
    if not spec:
        return ()
    ranges: list[tuple[int, int]] = []
    for part in spec.split(","):
        m = _RANGE.match(part)
        if m is None:
            return ()
        start = int(m.group(1))
        end = int(m.group(2)) if m.group(2) else start
        if start < 1 or end < start:
            return ()
        ranges.append((start, end))
    return tuple(ranges)


class Lines:
    """Where the lines of ``data`` are, found as they are asked for: the
    newlines of each block of :data:`_BLOCK` bytes are counted once (no list
    of lines is made, and no single step holds the interpreter for the whole
    file), then the line is looked for in its block. Data with a ``\\r`` that
    does not end a ``\\r\\n`` is split as :meth:`bytes.splitlines` does."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._view = memoryview(data)
        self._counts: list[int] | None = None  # newlines before each block
        self._split: list[int] | None = None  # line starts, for data with a lone \r
        if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
            starts, pos = [0], 0
            for line in data.splitlines(keepends=True):
                pos += len(line)
                starts.append(pos)
            self._split = starts

    def _newline(self, k: int) -> int | None:
        """The offset of the ``k``-th newline (1-based), None past the last."""
        if self._counts is None:
            counts, total = [0], 0
            for start in range(0, len(self._data), _BLOCK):
                total += self._data.count(b"\n", start, start + _BLOCK)
                counts.append(total)
            self._counts = counts
        counts = self._counts
        if k > counts[-1]:
            return None
        lo, hi = 0, len(counts) - 1  # the block holding it: counts[b] < k <= counts[b + 1]
        while lo < hi:
            mid = (lo + hi) // 2
            if counts[mid + 1] < k:
                lo = mid + 1
            else:
                hi = mid
        pos = lo * _BLOCK - 1
        for _ in range(k - counts[lo]):
            pos = self._data.find(b"\n", pos + 1)
        return pos

    def start(self, n: int) -> int:
        """The offset where line ``n`` (1-based) starts; the data's length past its end."""
        if self._split is not None:
            return self._split[min(n - 1, len(self._split) - 1)]
        if n == 1:
            return 0
        pos = self._newline(n - 1)
        return len(self._data) if pos is None else pos + 1

    def hash(self, spec: str | None) -> str | None:
        """The sha1 of the cited lines (see the module's text); None when ``spec`` names none."""
        ranges = parse_lines(spec)
        if not ranges:
            return None
        h = hashlib.sha1(usedforsecurity=False)
        for start, end in ranges:
            h.update(self._view[self.start(start):self.start(end + 1)])
            h.update(b"\0")
        return h.hexdigest()


def lines_hash(data: bytes, spec: str | None) -> str | None:
    """The sha1 of the cited lines of ``data``; None when ``spec`` names none."""
    return Lines(data).hash(spec)


def lines_hashes(data: bytes, specs: Iterable[str | None]) -> dict[str | None, str | None]:
    """:func:`lines_hash` of each of ``specs``, the lines of ``data`` found once."""
    lines = Lines(data)
    return {spec: lines.hash(spec) for spec in specs}


def shown_path(path: str) -> str:
    """``path`` as it is stored and shown (:func:`~ctxgraph.core.names.shown_name`)."""
    return shown_name(path)


def fs_path(path: str) -> str:
    """The name the file system knows a :func:`shown_path` by (the same text for
    a path that escapes nothing)."""
    return disk_name(path) or path


def anchor_id(owner: str, path: str, lines: str | None) -> str:
    """The id of the anchor of ``owner`` (a task id or a knowledge id) on
    ``path`` (and ``lines``): the same for the same three, so anchoring again
    replaces it."""
    key = "\x1f".join((owner, path, lines or ""))
    return "anchor:" + hashlib.sha1(key.encode("utf-8", "surrogatepass"),
                                    usedforsecurity=False).hexdigest()[:20]


def judge(anchor: Anchor, blob: str, lines: str | None, stat: tuple[int, int]) -> tuple[str, str | None]:
    """(status, reason) of ``anchor`` given its file now: its blob id
    (:data:`NOT_READ` for a file too big to read), the hash of the anchor's
    cited lines, and its (size, mtime_ns).

    ``unchanged`` when the blob id is the anchored one, or when the cited
    lines hash the same; else ``changed``, with the reason. A file not read
    (now or at anchoring) is unchanged only with the anchored size and mtime."""
    if blob == NOT_READ or anchor.blob == NOT_READ:
        if blob == anchor.blob and stat == (anchor.size, anchor.mtime_ns):
            return "unchanged", None
        return "changed", "file changed (too big to read: its size or time differs)" if blob == NOT_READ \
            else "file changed"
    if blob == anchor.blob:
        return "unchanged", None
    if anchor.lines_hash is not None:
        if lines == anchor.lines_hash:
            return "unchanged", None
        return "changed", f"lines {anchor.lines} changed"
    return "changed", "file changed"


def verdict(anchor: Anchor, data: bytes) -> tuple[str, str | None]:
    """:func:`judge` given the current bytes of the anchor's file."""
    return judge(anchor, blob_id(data), lines_hash(data, anchor.lines), (len(data), anchor.mtime_ns))


__all__ = ["NOT_READ", "Lines", "anchor_id", "blob_id", "fs_path", "judge", "lines_hash", "lines_hashes",
           "parse_lines", "shown_path", "verdict"]
