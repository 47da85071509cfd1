"""Which files of a project are indexed, and their text. IO only, no ranking.

A walk of the root that never leaves it: folders of version control, package
managers, builds and caches are skipped (:data:`SKIP_DIRS`, plus any folder
whose name starts with a dot, and what the project's ``.gitignore`` files
leave out), symlinks are not followed, files over
:data:`MAX_FILE_BYTES` and binary files (a NUL byte or invalid UTF-8 in the
first 8 KB) are left out, each with a reason the caller can report.

:func:`changes` is the stat-then-hash scan that incremental work is built on
(the memory's index, ``index --watch``, and any other "what changed under
this root" question): given what a previous scan saw of each file (its
:class:`~ctxgraph.core.models.FileStat`: modification time, size, sha256), it
stats every candidate file and reads only those whose stat differs; a file
read whose sha256 is the one seen before is unchanged (only its stat is new).
It returns the added, changed and deleted paths and the stats to keep for the
next call. A file modified within :data:`RACY_NS` of the scan is kept with an
unknown stat (mtime 0), so that a second write in the same clock tick (same
size) is still found by the next scan: it is read again, not trusted.
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
from typing import Any, get_origin

from ctxgraph.core.models import FileStat
from ctxgraph.core.models.documents import HandoffDoc

MAX_FILE_BYTES = 500 * 1024
SNIFF_BYTES = 8192
SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "dist", "build", "target", "out", "vendor", "vendored",
    "third_party", "__pycache__", ".venv", "venv", "env", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".cache", ".ctxgraph", "site-packages", "bower_components", ".next", ".gradle", ".idea",
})
#: Files worth reading as text; others are skipped without being opened.
TEXT_SUFFIXES = frozenset({
    ".py", ".pyi", ".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".js", ".jsx",
    ".ts", ".tsx", ".mjs", ".cjs", ".go", ".rs", ".java", ".kt", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs",
    ".rb", ".php", ".sh", ".bash", ".sql", ".html", ".css", ".scss", ".vue", ".svelte", ".swift", ".scala",
    ".lua", ".r", ".jl", ".ex", ".exs", ".erl", ".hs", ".ml", ".tf", ".proto", ".graphql", ".cypher",
})
TEXT_NAMES = frozenset({"Dockerfile", "Makefile", "README", "LICENSE", "CHANGES", "Justfile"})
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
    path: str  # relative to the root, with forward slashes
    text: str
    sha256: str


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


def wanted(name: str) -> bool:
    return Path(name).suffix.lower() in TEXT_SUFFIXES or name in TEXT_NAMES


#: A folder's ignore rules: the folder, and its ``.gitignore`` compiled.
_Rules = tuple[Path, Any]


def _gitignore(folder: Path) -> _Rules | None:
    """``folder``'s ``.gitignore`` as git reads it (pathspec's ``GitIgnoreSpec``), if it has one."""
    try:
        lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    import pathspec

    return folder, pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(rules: list[_Rules], full: Path, folder: bool) -> bool:
    """Whether the ``.gitignore`` files above ``full`` leave it out: the deepest
    file with a pattern matching it decides (a ``!pattern`` keeps it)."""
    for base, spec in reversed(rules):
        rel = full.relative_to(base).as_posix() + ("/" if folder else "")
        include = spec.check_file(rel).include
        if include is not None:
            return bool(include)
    return False


def candidates(root: Path) -> Iterator[tuple[Path, str]]:
    """(full path, path relative to ``root``) of every candidate file, in path
    order. Besides :data:`SKIP_DIRS` and dot folders, what the ``.gitignore``
    files in the root and its folders leave out is left out (as git would: an
    ignored folder is not entered)."""
    root = root.resolve()
    rules_of: dict[str, list[_Rules]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        parent = rules_of.pop(dirpath, None)
        rules = list(parent) if parent is not None else []
        if ".gitignore" in filenames and (own := _gitignore(here)) is not None:
            rules.append(own)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                             and not (rules and _ignored(rules, here / d, folder=True)))
        for d in dirnames:
            rules_of[os.path.join(dirpath, d)] = rules
        for name in sorted(filenames):
            if wanted(name):
                full = here / name
                if rules and _ignored(rules, full, folder=False):
                    continue
                yield full, full.relative_to(root).as_posix()


def walk(root: Path) -> Iterator[SourceFile | Skipped]:
    """Every candidate file under ``root`` in path order: read, or skipped with a reason."""
    for full, rel in candidates(root):
        yield read(full, rel)


def _stat(full: Path, rel: str) -> os.stat_result | Skipped:
    """The file's own stat (a symlink is not followed), or why it is skipped."""
    try:
        st = full.lstat()
    except OSError as exc:
        return Skipped(rel, f"unreadable: {exc.strerror or exc}")
    if stat_module.S_ISLNK(st.st_mode):
        return Skipped(rel, "symlink")
    if not stat_module.S_ISREG(st.st_mode):
        return Skipped(rel, "not a regular file")
    if st.st_size > MAX_FILE_BYTES:
        return Skipped(rel, f"over {MAX_FILE_BYTES // 1024} KB")
    return st


def read(full: Path, rel: str) -> SourceFile | Skipped:
    """One file's text, or why it is skipped."""
    st = _stat(full, rel)
    if isinstance(st, Skipped):
        return st
    return _read(full, rel)


def _read(full: Path, rel: str) -> SourceFile | Skipped:
    try:
        data = full.read_bytes()
    except OSError as exc:
        return Skipped(rel, f"unreadable: {exc.strerror or exc}")
    if len(data) > MAX_FILE_BYTES:  # grew since its stat
        return Skipped(rel, f"over {MAX_FILE_BYTES // 1024} KB")
    if is_binary(data[:SNIFF_BYTES]):
        return Skipped(rel, "binary")
    text = data.decode("utf-8", errors="replace")
    if is_handoff(rel, text):
        return Skipped(rel, "a handoff (its knowledge is in the graph)")
    return SourceFile(rel, text, hashlib.sha256(data).hexdigest())


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
    as ``previous`` to the next call. ``read`` counts the files opened."""

    added: list[SourceFile] = field(default_factory=list)
    changed: list[SourceFile] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    touched: dict[str, FileStat] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    stats: dict[str, FileStat] = field(default_factory=dict)
    read: int = 0

    @property
    def any(self) -> bool:
        """Something to (re)index or remove."""
        return bool(self.added or self.changed or self.deleted)

    def paths(self) -> dict[str, list[str]]:
        """``{"added": [...], "changed": [...], "deleted": [...]}``, each sorted."""
        return {"added": [f.path for f in self.added], "changed": [f.path for f in self.changed],
                "deleted": list(self.deleted)}


def changes(root: Path, previous: Mapping[str, FileStat], *, now_ns: int | None = None) -> Changes:
    """The stat-then-hash scan of ``root`` against ``previous`` (see the module's text).

    A file whose (mtime_ns, size) equals its previous stat (with a known
    mtime) is unchanged without being opened; any other is read and compared
    by sha256. Pure IO, no store: the caller keeps ``stats`` where it likes
    (the memory keeps them on its chunks, ``index --watch`` in memory too)."""
    found = Changes()
    racy_after = (time.time_ns() if now_ns is None else now_ns) - RACY_NS
    for full, rel in candidates(root):
        st = _stat(full, rel)
        if isinstance(st, Skipped):
            found.skipped.append(st)
            continue
        before = previous.get(rel)
        if before is not None and before.mtime_ns and before.mtime_ns == st.st_mtime_ns \
                and before.size == st.st_size:
            found.unchanged += 1
            found.stats[rel] = before
            continue
        item = _read(full, rel)
        found.read += 1
        if isinstance(item, Skipped):
            found.skipped.append(item)
            continue
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
    inside ``root`` — the traversal and symlink-escape gate."""
    if not rel or rel.startswith("/") or "\0" in rel:
        return None
    base = root.resolve()
    try:
        target = (base / rel).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not target.is_relative_to(base) or not target.is_file():
        return None
    return target
