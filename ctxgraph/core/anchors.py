"""Code anchors, the pure half (issue 32): the git blob id of a file's bytes,
the hash of the lines a handoff cites, an anchor's id, and what a file's
current bytes say about an anchor. No IO: the work tree is read by
:mod:`ctxgraph.service.anchors`.

A git blob id is ``sha1(b"blob <size>\\0" + content)``, the id ``git
hash-object`` prints, so an anchor can be compared with a commit's tree
without git. Cited lines (``"10-24"``, ``"7"``, ``"3-5,9-12"``; 1-based,
inclusive) are hashed as the sha1 of those lines' bytes, line ends included;
a range past the file's end takes what there is.
"""

from __future__ import annotations

import hashlib
import re

from ctxgraph.core.models.anchors import Anchor

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


def blob_id(data: bytes) -> str:
    """The git blob id of ``data`` (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


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


def lines_hash(data: bytes, spec: str | None) -> str | None:
    """The sha1 of the cited lines of ``data``; None when ``spec`` names none."""
    ranges = parse_lines(spec)
    if not ranges:
        return None
    lines = data.splitlines(keepends=True)
    h = hashlib.sha1(usedforsecurity=False)
    for start, end in ranges:
        for line in lines[start - 1:end]:
            h.update(line)
        h.update(b"\0")
    return h.hexdigest()


def anchor_id(owner: str, path: str, lines: str | None) -> str:
    """The id of the anchor of ``owner`` (a task id or a knowledge id) on
    ``path`` (and ``lines``): the same for the same three, so anchoring again
    replaces it."""
    key = "\x1f".join((owner, path, lines or ""))
    return "anchor:" + hashlib.sha1(key.encode("utf-8"), usedforsecurity=False).hexdigest()[:20]


def verdict(anchor: Anchor, data: bytes) -> tuple[str, str | None]:
    """(status, reason) of ``anchor`` given the current bytes of its file:
    ``unchanged`` when the file's blob id is the anchored one, or when the
    cited lines hash the same; else ``changed``, with the reason."""
    if blob_id(data) == anchor.blob:
        return "unchanged", None
    if anchor.lines_hash is not None:
        if lines_hash(data, anchor.lines) == anchor.lines_hash:
            return "unchanged", None
        return "changed", f"lines {anchor.lines} changed"
    return "changed", "file changed"


__all__ = ["anchor_id", "blob_id", "lines_hash", "parse_lines", "verdict"]
