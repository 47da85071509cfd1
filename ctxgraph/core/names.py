"""File names as ctxgraph stores and shows them. Pure (no IO).

A path from the file system or git is bytes until proven text: Python hands
the bytes that are not UTF-8 over as surrogates (``surrogateescape``). The
name a file is known by — the memory's key, an anchor's path, a commit's file,
what a context shows — escapes as ``%XX`` the bytes that are not UTF-8
(``caf%E9.py``), a backslash, and white space at either end: what a stored
path's normal form (``clean_path``: a backslash made a slash, the ends
stripped) would otherwise change, so the name stays the same in every store.
:func:`disk_name` turns it back into the name the file system knows.
"""

from __future__ import annotations

import os
import re

_ESCAPED = re.compile(r"%([0-9A-F]{2})")


def shown_name(name: str | bytes) -> str:
    """``name`` as it is stored and shown: UTF-8 as it is; a byte that is not
    UTF-8, a backslash and white space at either end as ``%XX``. ``name`` is
    bytes, or a str from the file system (bytes that are not UTF-8 as
    surrogates)."""
    if isinstance(name, str) and name.isascii() and "\\" not in name and name == name.strip():
        return name
    raw = name if isinstance(name, bytes) else os.fsencode(name)
    text = raw.decode("utf-8", "surrogateescape")
    if text.isascii() and "\\" not in text and text == text.strip():
        return text
    out = [f"%{ord(c) - 0xDC00:02X}" if 0xDC80 <= ord(c) <= 0xDCFF else "%5C" if c == "\\" else c for c in text]
    for end in (0, -1):
        if out and out[end].isspace():
            out[end] = "".join(f"%{b:02X}" for b in out[end].encode("utf-8"))
    return "".join(out)


def disk_name(key: str) -> str | None:
    """The file system's name (a str, bytes that are not UTF-8 as surrogates)
    for a name :func:`shown_name` escaped; None when ``key`` escapes nothing
    (a name that really holds ``%XX`` is then tried as it is)."""
    if not _ESCAPED.search(key):
        return None
    out = bytearray()
    at = 0
    for match in _ESCAPED.finditer(key):
        out += key[at:match.start()].encode("utf-8", "surrogateescape")
        out.append(int(match.group(1), 16))
        at = match.end()
    out += key[at:].encode("utf-8", "surrogateescape")
    return os.fsdecode(bytes(out))


__all__ = ["disk_name", "shown_name"]
