"""Code anchors and the work tree (issue 32): making an anchor from a file,
checking anchors against the files as they are now, and git's rename
detection. The hashes are :mod:`ctxgraph.core.anchors`'; this module does the
IO (stat, read, ``git``).

A check stats each anchor's file first and reads and hashes it only when its
stat (size, mtime in ns) differs from the one the last check saw, as git's
index does. A file gone is looked for under another name with git's rename
detection, ``git diff --find-renames --name-status <commit>`` from the
anchor's commit to the work tree (paths relative to the root): it follows a
file renamed and edited in one commit (similarity, not only an equal blob),
and through several commits at once, in one process per distinct commit.
Without git, or with a file git does not track, a file gone is deleted.
"""

from __future__ import annotations

import logging
import os
import posixpath
import stat
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctxgraph.core.anchors import anchor_id, blob_id, lines_hash, verdict
from ctxgraph.core.models import Anchor, utcnow

log = logging.getLogger(__name__)

#: How long one ``git`` call may take before the check goes on without it.
GIT_TIMEOUT_S = 10.0


def inside(root: Path, path: str) -> Path | None:
    """``root / path`` for a relative path that stays inside ``root``; else None."""
    if not path or path.startswith("/") or ":" in path.split("/", 1)[0]:
        return None
    norm = posixpath.normpath(path)
    if norm == ".." or norm.startswith("../"):
        return None
    return root / norm


def stat_at(root: str, path: str) -> tuple[int, int] | None:
    """(size, mtime_ns) of the regular file ``path`` names inside the folder
    ``root``; None when there is none (strings, not pathlib: this runs once
    per anchor and per candidate file)."""
    if not path or path[0] == "/":
        return None
    if path[0] == "." or "/." in path:  # a "." or ".." segment (the graph's paths are clean: rare)
        path = posixpath.normpath(path)
        if path == ".." or path.startswith("../"):
            return None
    try:
        st = os.stat(f"{root}/{path}")
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def is_file(root: str, path: str) -> bool:
    """Whether ``path`` names a regular file inside the folder ``root``."""
    return stat_at(root, path) is not None


def stat_of(file: Path) -> tuple[int, int] | None:
    """(size, mtime_ns) of a regular file; None when there is none."""
    try:
        st = os.stat(file)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_size, st.st_mtime_ns


def git_head(root: Path) -> str | None:
    """The commit checked out in ``root``'s work tree; None without git or a commit."""
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() or None if out is not None else None


def git_renames(root: Path, base: str | None) -> dict[str, str]:
    """old path -> new path of the files renamed from ``base`` (a commit; None:
    HEAD) to the work tree, as git's rename detection finds them (paths
    relative to ``root``). Empty without git or when ``base`` is unknown."""
    out = _git(root, "diff", "--find-renames", "--name-status", "-z", "--relative", base or "HEAD", "--")
    if out is None and base is not None:
        out = _git(root, "diff", "--find-renames", "--name-status", "-z", "--relative", "HEAD", "--")
    if not out:
        return {}
    parts = out.split("\0")
    renames: dict[str, str] = {}
    i = 0
    while i < len(parts):
        status = parts[i]
        if not status:
            break
        if status.startswith(("R", "C")):
            if status.startswith("R") and i + 2 < len(parts):
                renames[parts[i + 1]] = parts[i + 2]
            i += 3
        else:
            i += 2
    return renames


def _git(root: Path, *args: str) -> str | None:
    """``git -C root args`` 's output; None when git is missing or fails."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, env=env, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("git %s: %s", args[0], exc)
        return None
    return done.stdout if done.returncode == 0 else None


def make_anchor(root: Path, *, owner: str, task_id: str, path: str, lines: str | None,
                commit: str | None, at: str) -> Anchor | None:
    """The anchor of ``owner`` on ``path`` as the file is now; None when the
    file is not a file inside ``root``."""
    file = inside(root, path)
    st = stat_of(file) if file is not None else None
    if file is None or st is None:
        return None
    try:
        data = file.read_bytes()
    except OSError:
        return None
    size, mtime_ns = st
    return Anchor(id=anchor_id(owner, path, lines), owner=owner, task_id=task_id, path=path, lines=lines,
                  blob=blob_id(data), lines_hash=lines_hash(data, lines), size=size, mtime_ns=mtime_ns,
                  commit=commit, anchored_at=at, current_path=path, seen_size=size, seen_mtime_ns=mtime_ns,
                  checked_at=at)


@dataclass
class CheckResult:
    """What a check found: every anchor as it is now (``anchors``, the given
    order), those that differ from what was stored (``updated``: to write), and
    counts of what happened in this check."""

    anchors: list[Anchor] = field(default_factory=list)
    updated: list[Anchor] = field(default_factory=list)
    hashed: int = 0
    changed: int = 0
    renamed: int = 0
    deleted: int = 0

    @property
    def unchanged(self) -> int:
        return sum(1 for a in self.anchors if a.status == "unchanged")


def check(root: Path, anchors: Sequence[Anchor], now: str | None = None, *, renames: bool = True,
          head: str | None = None, progress: Callable[[int], None] | None = None) -> CheckResult:
    """Each anchor against the work tree under ``root`` (see the module's text),
    as of ``now`` (None: the time when an anchor first differs).
    ``renames``: look for the files gone with git, from the commit where the
    file was last seen (``seen_commit``), then from the anchor's commit.
    ``head``: the work tree's HEAD, kept as ``seen_commit`` of the anchors
    read. ``progress`` is called with the number of anchors checked, every
    1,000 and at the end."""
    result = CheckResult()
    stamp = [now] if now is not None else []

    def at() -> str:
        if not stamp:
            stamp.append(utcnow())
        return stamp[0]

    out: list[Anchor | None] = []
    missing: list[int] = []
    top = str(root)
    for n, a in enumerate(anchors, 1):
        st = stat_at(top, a.current_path)
        if st is None:
            out.append(a if a.status == "deleted" else None)
            if a.status != "deleted":
                missing.append(len(out) - 1)
        elif st == (a.seen_size, a.seen_mtime_ns) and a.status != "deleted":
            out.append(a)
        else:
            out.append(_rehash(result, a, root / posixpath.normpath(a.current_path), st, at(), head))
        if progress and n % 1000 == 0:
            progress(n)
    if missing:
        found: dict[str | None, dict[str, str]] = {}
        for i in missing:
            a = anchors[i]
            new = None
            bases: list[str | None] = [*dict.fromkeys(b for b in (a.seen_commit, a.commit) if b)] or [None]
            for base in bases if renames else ():
                if base not in found:
                    found[base] = git_renames(root, base)
                new = _follow(found[base], a.current_path)
                if new:
                    break
            file = inside(root, new) if new else None
            st = stat_of(file) if file is not None else None
            if new and file is not None and st is not None:
                result.renamed += 1
                moved = a.model_copy(update={"current_path": new, "seen_size": -1, "seen_mtime_ns": -1})
                out[i] = _rehash(result, moved, file, st, at(), head, force=True)
            else:
                result.deleted += 1
                when = at()
                out[i] = a.model_copy(update={
                    "status": "deleted", "reason": f"file deleted: {a.current_path}", "changed_at": when,
                    "checked_at": when, "seen_size": -1, "seen_mtime_ns": -1})
    if progress:
        progress(len(anchors))
    result.anchors = [a for a in out if a is not None]
    result.updated = [new for old, new in zip(anchors, result.anchors, strict=True) if new is not old]
    return result


def _follow(renames: dict[str, str], path: str) -> str | None:
    """Where ``path`` went (through chained renames), or None."""
    seen: set[str] = set()
    new = renames.get(path)
    while new is not None and new in renames and new not in seen:
        seen.add(new)
        new = renames[new]
    return new


def _rehash(result: CheckResult, a: Anchor, file: Path, st: tuple[int, int], now: str, head: str | None, *,
            force: bool = False) -> Anchor:
    try:
        data = file.read_bytes()
    except OSError:
        return a
    result.hashed += 1
    status, reason = verdict(a, data)
    if status == "changed" and (a.status != "changed" or force):
        result.changed += 1
    changed_at = a.changed_at if status == a.status and not force else now
    return a.model_copy(update={"status": status, "reason": reason, "seen_size": st[0], "seen_mtime_ns": st[1],
                                "checked_at": now, "changed_at": changed_at if status != "unchanged" else None,
                                "seen_commit": head or a.seen_commit})


__all__ = ["CheckResult", "check", "git_head", "git_renames", "inside", "is_file", "make_anchor", "stat_at", "stat_of"]
