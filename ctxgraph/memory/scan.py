"""Which files of a project are indexed, and their text. IO only, no ranking.

The candidates: in a git work tree, the files git lists (``git ls-files
--cached --others --exclude-standard``: tracked, and untracked unless
ignored by a ``.gitignore``, ``.git/info/exclude`` or ``core.excludesFile``);
elsewhere, or when git lists nothing, a walk of the root that never leaves
it and leaves out what the ``.gitignore`` files in it do (``pathspec``).
Either way, folders of version control, package managers, builds and caches
(:data:`SKIP_DIRS`) and hidden folders are left out, and a file is a
candidate when its name says text (:data:`TEXT_SUFFIXES`, :data:`TEXT_NAMES`)
or a secret. Hidden files are candidates like any other.

Each candidate is then read, or skipped with a reason the caller can report:
a secret file by its name (:mod:`.secrets`: never opened), a symlink (not
followed), not a regular file, over :data:`MAX_FILE_BYTES`, empty (blanks
only), binary (a NUL byte or invalid UTF-8 in the first 8 KB), or a handoff. A file read has its
secret values redacted (:meth:`.secrets.SecretFilter.redact`) before anything
else sees its text.

File names are bytes until proven text: a name that is not UTF-8 is kept as
its file system gives it to read the file, and shown (and stored as the
file's key) with the bad bytes escaped, ``caf%E9.py`` (:func:`shown`;
:func:`inside` finds the file from that key again).

:func:`changes` is the stat-then-hash scan that incremental work is built on
(the memory's index, ``index --watch``, and any other "what changed under
this root" question): given what a previous scan saw of each file (its
:class:`~ctxgraph.core.models.FileStat`: modification time, size, sha256), it
stats every candidate file and reads only those whose stat differs; a file
read whose sha256 is the one seen before is unchanged (only its stat is new).
It returns the added, changed and deleted paths and the stats to keep for the
next call. A file modified within :data:`RACY_NS` of the scan is kept with an
unknown stat (mtime 0), so that a second write in the same clock tick (same
size) is still found by the next scan: it is read again, not trusted. A
file's sha256 is that of its bytes, or of its text as redacted when a value
was (no hash of a secret is kept), prefixed with the tag of the secret rules
(:attr:`.secrets.SecretFilter.tag`): a file seen under other rules is read
again, whatever its stat.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat as stat_module
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_origin

from ctxgraph.core.models import FileStat
from ctxgraph.core.models.documents import HandoffDoc
from ctxgraph.core.names import disk_name as on_disk
from ctxgraph.core.names import shown_name as shown
from ctxgraph.memory.listing import SKIP_DIRS, TEXT_NAMES, TEXT_SUFFIXES, wanted
from ctxgraph.memory.listing import candidates as _listed
from ctxgraph.memory.secrets import DEFAULT, SecretFilter

MAX_FILE_BYTES = 500 * 1024
SNIFF_BYTES = 8192
#: A handoff's lists (core.models.HandoffDoc's list fields): a YAML or JSON file with
#: ``task_id``, ``summary`` and one of them is a handoff, knowledge the graph holds
#: already (``ctxgraph ingest handoff``), not the project's code.
_HANDOFF_LISTS = tuple(name for name, f in HandoffDoc.model_fields.items() if get_origin(f.annotation) is list)
_HANDOFF_KEY = re.compile(r"""(?:^|[\s{,"'-])["']?(""" + "|".join(("task_id", "summary", *_HANDOFF_LISTS))
                          + r""")["']?\s*:""", re.MULTILINE)
_HANDOFF_SUFFIXES = frozenset({".yaml", ".yml", ".json"})
#: A file modified this close to the scan (ns) is not trusted by its stat next time.
RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative to the root, with forward slashes (bad bytes escaped: shown())
    text: str  # secret values redacted
    sha256: str  # the rules' tag and a sha256 (see the module's text)
    redacted: int = 0  # values redacted from the text


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


def is_binary(head: bytes) -> bool:
    """A NUL byte, or bytes that are not UTF-8 (a cut multi-byte tail is fine)."""
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 3
    return False


def candidates(root: Path, secrets: SecretFilter = DEFAULT) -> Iterator[tuple[Path, str]]:
    """(full path, path relative to ``root``) of every candidate file, in path
    order (:func:`ctxgraph.memory.listing.candidates`): text files, and the
    files ``secrets`` leaves out by name (to report them)."""
    return _listed(root, lambda rel: secrets.secret_file(rel) is not None)


def walk(root: Path, secrets: SecretFilter = DEFAULT) -> Iterator[SourceFile | Skipped]:
    """Every candidate file under ``root`` in path order: read, or skipped with a reason."""
    for full, rel in candidates(root, secrets):
        yield read(full, rel, secrets)


#: Why a file with no text but blanks is skipped: it has nothing to index, and
#: a file not indexed is not new again at the next run (it was re-indexed each time).
EMPTY = "empty"
#: Why a handoff file is skipped: ``ctxgraph ingest handoff`` reads it, the index does not.
HANDOFF = "handoff file (for ctxgraph ingest handoff)"


def _stat(full: Path, rel: str, secrets: SecretFilter) -> os.stat_result | Skipped | None:
    """The file's own stat (a symlink is not followed), why it is skipped, or
    None when it is gone (a file git still lists, deleted)."""
    rule = secrets.secret_file(rel)
    if rule is not None:
        return Skipped(rel, f"secret file (by name): {rule}")
    try:
        st = full.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Skipped(rel, f"unreadable: {exc.strerror or exc}")
    if stat_module.S_ISLNK(st.st_mode):
        return Skipped(rel, "symlink")
    if not stat_module.S_ISREG(st.st_mode):
        return Skipped(rel, "not a regular file")
    if st.st_size > MAX_FILE_BYTES:
        return Skipped(rel, f"over {MAX_FILE_BYTES // 1024} KB")
    if st.st_size == 0:
        return Skipped(rel, EMPTY)
    return st


def read(full: Path, rel: str, secrets: SecretFilter = DEFAULT) -> SourceFile | Skipped:
    """One file's text (secret values redacted), or why it is skipped."""
    st = _stat(full, rel, secrets)
    if st is None:
        return Skipped(rel, "missing")
    if isinstance(st, Skipped):
        return st
    return _read(full, rel, secrets)


def _read(full: Path, rel: str, secrets: SecretFilter) -> SourceFile | Skipped:
    try:
        data = full.read_bytes()
    except OSError as exc:
        return Skipped(rel, f"unreadable: {exc.strerror or exc}")
    if len(data) > MAX_FILE_BYTES:  # grew since its stat
        return Skipped(rel, f"over {MAX_FILE_BYTES // 1024} KB")
    if is_binary(data[:SNIFF_BYTES]):
        return Skipped(rel, "binary")
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        return Skipped(rel, EMPTY)
    if is_handoff(rel, text):
        return Skipped(rel, HANDOFF)
    text, redacted = secrets.redact(rel, text)
    digest = hashlib.sha256(text.encode("utf-8") if redacted else data).hexdigest()
    return SourceFile(rel, text, secrets.tag + digest, redacted)

def is_handoff(rel: str, text: str) -> bool:
    """Whether a YAML or JSON file reads as a handoff (or a batch of them): see
    :data:`_HANDOFF_KEY`."""
    if Path(rel).suffix.lower() not in _HANDOFF_SUFFIXES:
        return False
    keys = set(_HANDOFF_KEY.findall(text[:SNIFF_BYTES]))
    return {"task_id", "summary"} <= keys and len(keys) > 2


@dataclass
class Changes:
    """What :func:`changes` found under a root, against the previous stats.

    ``added`` and ``changed`` files are read (their text and new sha256);
    ``deleted`` are the paths of the previous stats no longer found (or now
    skipped); ``unchanged`` counts the files found as before, of which
    ``touched`` (read because their stat moved, same sha256: a checkout, a
    ``touch``) hold the new stats. ``stats`` is every file found now: pass it
    as ``previous`` to the next call. ``read`` counts the files opened;
    ``redacted``, the values redacted in each file read (path: count)."""

    added: list[SourceFile] = field(default_factory=list)
    changed: list[SourceFile] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    touched: dict[str, FileStat] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    stats: dict[str, FileStat] = field(default_factory=dict)
    read: int = 0
    redacted: dict[str, int] = field(default_factory=dict)

    @property
    def any(self) -> bool:
        """Something to (re)index or remove."""
        return bool(self.added or self.changed or self.deleted)

    def paths(self) -> dict[str, list[str]]:
        """``{"added": [...], "changed": [...], "deleted": [...]}``, each sorted."""
        return {"added": [f.path for f in self.added], "changed": [f.path for f in self.changed],
                "deleted": list(self.deleted)}


def changes(root: Path, previous: Mapping[str, FileStat], *, now_ns: int | None = None,
            secrets: SecretFilter = DEFAULT, read_all: bool = False) -> Changes:
    """The stat-then-hash scan of ``root`` against ``previous`` (see the module's text).

    A file whose (mtime_ns, size) equals its previous stat (with a known
    mtime, and a sha256 made under ``secrets``' rules) is unchanged without
    being opened, unless ``read_all``; any other is read and compared by
    sha256. Pure IO, no store: the caller keeps ``stats`` where it likes (the
    memory keeps them on its chunks, ``index --watch`` in memory too)."""
    found = Changes()
    racy_after = (time.time_ns() if now_ns is None else now_ns) - RACY_NS
    for full, rel in candidates(root, secrets):
        st = _stat(full, rel, secrets)
        if st is None:
            continue
        if isinstance(st, Skipped):
            found.skipped.append(st)
            continue
        before = previous.get(rel)
        if before is not None and not read_all and before.mtime_ns and before.mtime_ns == st.st_mtime_ns \
                and before.size == st.st_size and before.sha256.startswith(secrets.tag):
            found.unchanged += 1
            found.stats[rel] = before
            continue
        item = _read(full, rel, secrets)
        found.read += 1
        if isinstance(item, Skipped):
            found.skipped.append(item)
            continue
        if item.redacted:
            found.redacted[rel] = item.redacted
        seen = FileStat(mtime_ns=st.st_mtime_ns if st.st_mtime_ns < racy_after else 0, size=st.st_size,
                        sha256=item.sha256)
        found.stats[rel] = seen
        if before is None:
            found.added.append(item)
        elif before.sha256 != item.sha256:
            found.changed.append(item)
        else:
            found.unchanged += 1
            if before != seen:
                found.touched[rel] = seen
    found.deleted = sorted(p for p in previous if p not in found.stats)
    return found


def inside(root: Path, rel: str) -> Path | None:
    """``root / rel`` resolved (symlinks followed), or None when it is not a file
    inside ``root`` — the traversal and symlink-escape gate. ``rel`` may be a
    key with escaped bytes (:func:`~ctxgraph.core.names.shown_name`): when it
    names no file as it is, the file its bytes name."""
    if not rel or rel.startswith("/") or "\0" in rel:
        return None
    base = root.resolve()
    target = _resolved(base, rel)
    if target is None and (raw := on_disk(rel)) is not None:
        target = _resolved(base, raw)
    if target is None or not target.is_relative_to(base) or not target.is_file():
        return None
    return target


def _resolved(base: Path, name: str) -> Path | None:
    try:
        return (base / name).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL byte (a key's %00)
        return None


__all__ = ["MAX_FILE_BYTES", "SKIP_DIRS", "TEXT_NAMES", "TEXT_SUFFIXES", "Changes", "Skipped", "SourceFile",
           "candidates", "changes", "inside", "is_binary", "is_handoff", "read", "shown", "walk", "wanted"]
