"""Which of the project's files an import reads this time: the memory index's
selection (:func:`ctxgraph.memory.scan.candidates`, so what ``.gitignore``
leaves out, dot folders, dependencies and builds are never read; files over
500 KB, binary files and handoffs are skipped as the index skips them), each
given a kind by the caller (``adr``, ``notes``, or None: not read), stat
first against what the last run saw (:class:`~ctxgraph.core.models.ImportedFile`).

A file whose kind and stat (modification time in ns, size) are the ones seen
is not opened; any other is read and hashed: the same sha256 and kind is
*touched* (only its stat is new), else it is *read* for the caller to parse.
A file modified within :data:`~ctxgraph.memory.scan.RACY_NS` of the scan is
kept with mtime 0, so the next run reads it again (a second write in the
same clock tick is not missed). Paths seen before and not found now (or now
skipped, or of no kind) are *gone*.
"""

from __future__ import annotations

import os
import stat as stat_module
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ctxgraph.core.models import ImportedFile
from ctxgraph.memory.scan import RACY_NS, SourceFile, candidates, read
from ctxgraph.memory.secrets import DEFAULT, SecretFilter


@dataclass(frozen=True)
class ReadFile:
    """A file read this run: its state (items empty until parsed) and text."""

    state: ImportedFile
    text: str


@dataclass
class Scan:
    """What :func:`scan` found: files ``read`` (new, changed or of another kind
    than before), ``touched`` (same content, new stat), ``unchanged`` (the
    state kept), ``gone`` paths, and files ``skipped`` (too big, binary...)."""

    read: list[ReadFile] = field(default_factory=list)
    touched: list[ImportedFile] = field(default_factory=list)
    unchanged: list[ImportedFile] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    skipped: int = 0
    looked_at: int = 0


def scan(root: Path, previous: Mapping[str, ImportedFile], kind_of: Callable[[str], str | None], *,
         progress: Callable[[int], None] | None = None, now_ns: int | None = None,
         secrets: SecretFilter = DEFAULT) -> Scan:
    """The stat-then-hash scan of ``root`` against ``previous`` (see the module's
    text); ``secrets``: the project's secret rules (files left out, values redacted)."""
    found = Scan()
    seen: set[str] = set()
    racy_after = (time.time_ns() if now_ns is None else now_ns) - RACY_NS
    for full, rel in candidates(root, secrets):
        kind = kind_of(rel)
        if kind is None:
            continue
        found.looked_at += 1
        if progress is not None and found.looked_at % 1000 == 0:
            progress(found.looked_at)
        try:
            st = full.lstat()
        except OSError:
            found.skipped += 1
            continue
        if not stat_module.S_ISREG(st.st_mode):
            found.skipped += 1
            continue
        before = previous.get(rel)
        if (before is not None and before.kind == kind and before.mtime_ns
                and (before.mtime_ns, before.size) == (st.st_mtime_ns, st.st_size)):
            seen.add(rel)
            found.unchanged.append(before)
            continue
        item = read(full, rel, secrets)
        if not isinstance(item, SourceFile):
            found.skipped += 1
            continue
        seen.add(rel)
        state = ImportedFile(path=rel, kind=kind, mtime_ns=st.st_mtime_ns if st.st_mtime_ns < racy_after else 0,
                             size=st.st_size, sha256=item.sha256)
        if before is not None and before.kind == kind and before.sha256 == item.sha256:
            found.touched.append(state.model_copy(update={"items": before.items}))
        else:
            found.read.append(ReadFile(state, item.text))
    found.gone = sorted(p for p in previous if p not in seen)
    if progress is not None:
        progress(found.looked_at)
    return found


def read_text(root: Path, path: str, secrets: SecretFilter = DEFAULT) -> ReadFile | None:
    """One file under ``root`` as :func:`scan` reads it (its stat taken now);
    None when it is gone or skipped."""
    full = root / path
    try:
        st = os.lstat(full)
    except OSError:
        return None
    item = read(full, path, secrets)
    if not isinstance(item, SourceFile) or not stat_module.S_ISREG(st.st_mode):
        return None
    racy = st.st_mtime_ns >= time.time_ns() - RACY_NS
    return ReadFile(ImportedFile(path=path, kind="", mtime_ns=0 if racy else st.st_mtime_ns, size=st.st_size,
                                 sha256=item.sha256), item.text)


__all__ = ["ReadFile", "Scan", "read_text", "scan"]
