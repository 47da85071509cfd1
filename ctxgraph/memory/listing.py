"""The candidate files of a project's root, and the names they are known by. IO only.

In a git work tree the candidates are what git lists (``git ls-files -z
--cached --others --exclude-standard``): tracked files, and untracked ones
that no ``.gitignore``, ``.git/info/exclude`` nor ``core.excludesFile``
leaves out, as git decides (a submodule's files are not listed). Elsewhere
— no git, not a work tree, or git listing nothing (a folder the work tree
around it ignores whole) — a walk of the root that never leaves it and
leaves out what the ``.gitignore`` files inside it do (read with
``pathspec``; an ignored folder is not entered). Both leave out the folders of
:data:`SKIP_DIRS` and hidden folders, and keep a file whose name says text
(:func:`wanted`) or a secret (reported by the scan, never read).

A path is bytes until proven text: git's output is split on NUL bytes and
decoded with ``surrogateescape`` to name the file on disk; the name it is
known by (reports, the store's key) is
:func:`~ctxgraph.core.names.shown_name`'s: ``caf%E9.py``.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ctxgraph.core.names import shown_name as shown

log = logging.getLogger(__name__)

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
#: Seconds git may take to list a work tree's files (else the walk).
GIT_TIMEOUT_S = 60.0

def wanted(name: str) -> bool:
    return Path(name).suffix.lower() in TEXT_SUFFIXES or name in TEXT_NAMES


def hidden_or_skipped(folder: str) -> bool:
    return folder in SKIP_DIRS or folder.startswith(".")


def candidates(root: Path, keep: Callable[[str], bool]) -> Iterator[tuple[Path, str]]:
    """(full path, :func:`~ctxgraph.core.names.shown_name` path relative to ``root``) of every candidate
    file, in path order: those :func:`wanted` or that ``keep(relative path)``
    (a secret's name, to report it)."""
    root = root.resolve()
    listed = git_files(root)
    if listed:
        yield from _from_git(root, listed, keep)
    else:
        yield from _walk(root, keep)


def git_files(root: Path) -> list[bytes] | None:
    """What ``git ls-files`` lists under ``root`` (paths relative to it, as bytes),
    or None when ``root`` is not in a work tree or git fails."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        done = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                               "--exclude-standard"], capture_output=True, env=env, timeout=GIT_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("git ls-files in %s: %s", root, exc)
        return None
    if done.returncode != 0:
        return None
    return sorted({p for p in done.stdout.split(b"\0") if p})


def _from_git(root: Path, listed: list[bytes], keep: Callable[[str], bool]) -> Iterator[tuple[Path, str]]:
    for raw in listed:
        parts = os.fsdecode(raw).split("/")
        if any(hidden_or_skipped(p) for p in parts[:-1]) or parts[-1] in ("", ".", ".."):
            continue
        rel = shown(raw)
        if wanted(parts[-1]) or keep(rel):
            yield root.joinpath(*parts), rel


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


def _walk(root: Path, keep: Callable[[str], bool]) -> Iterator[tuple[Path, str]]:
    """The walk (no git): besides :data:`SKIP_DIRS` and hidden folders, what the
    ``.gitignore`` files in the root and its folders leave out is left out (as
    git would: an ignored folder is not entered)."""
    rules_of: dict[str, list[_Rules]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        parent = rules_of.pop(dirpath, None)
        rules = list(parent) if parent is not None else []
        if ".gitignore" in filenames and (own := _gitignore(here)) is not None:
            rules.append(own)
        dirnames[:] = sorted(d for d in dirnames if not hidden_or_skipped(d)
                             and not (rules and _ignored(rules, here / d, folder=True)))
        for d in dirnames:
            rules_of[os.path.join(dirpath, d)] = rules
        folder = here.relative_to(root).as_posix()
        for name in sorted(filenames):
            full = here / name
            rel = shown(name if folder == "." else f"{folder}/{name}")
            if (wanted(name) or keep(rel)) and not (rules and _ignored(rules, full, folder=False)):
                yield full, rel
