"""Which files of a project are indexed, and their text. IO only, no ranking.

A walk of the root that never leaves it: folders of version control, package
managers, builds and caches are skipped (:data:`SKIP_DIRS`, plus any folder
whose name starts with a dot), symlinks are not followed, files over
:data:`MAX_FILE_BYTES` and binary files (a NUL byte or invalid UTF-8 in the
first 8 KB) are left out, each with a reason the caller can report.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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


def walk(root: Path) -> Iterator[SourceFile | Skipped]:
    """Every candidate file under ``root`` in path order: read, or skipped with a reason."""
    root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if not wanted(name):
                continue
            yield read(full, rel)


def read(full: Path, rel: str) -> SourceFile | Skipped:
    """One file's text, or why it is skipped."""
    try:
        if full.is_symlink():
            return Skipped(rel, "symlink")
        size = full.stat().st_size
        if size > MAX_FILE_BYTES:
            return Skipped(rel, f"over {MAX_FILE_BYTES // 1024} KB")
        data = full.read_bytes()
    except OSError as exc:
        return Skipped(rel, f"unreadable: {exc.strerror or exc}")
    if is_binary(data[:SNIFF_BYTES]):
        return Skipped(rel, "binary")
    text = data.decode("utf-8", errors="replace")
    return SourceFile(rel, text, hashlib.sha256(data).hexdigest())


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
