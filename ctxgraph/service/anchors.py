"""Code anchors and the work tree (issue 32): making an anchor from a file,
checking anchors against the files as they are now, and git's rename
detection. The hashes are :mod:`ctxgraph.core.anchors`'; this module does the
IO (stat, read, ``git``).

A check stats each anchor's file first and reads and hashes it only when its
stat (size, mtime in ns) differs from the one the last check saw, as git's
index does; what is read, and how (inside the root, capped, each file once
whatever the number of anchors on it), is
:mod:`ctxgraph.service.anchor_files`'. A file that now resolves outside the
root (a link) is not read: its anchors are deleted. A file gone is looked for under another name with git's rename
detection, ``git diff --find-renames --name-status <commit>`` from the
anchor's commit to the work tree (paths relative to the root): it follows a
file renamed and edited in one commit (similarity, not only an equal blob),
and through several commits at once, in one process per distinct commit.
Without git, or with a file git does not track, a file gone is deleted.
Git's output is read as bytes (``-z``): a file name that is not UTF-8 is
escaped (:func:`~ctxgraph.core.anchors.shown_path`), never an error.
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

from ctxgraph.core.anchors import anchor_id, fs_path, judge, shown_path
from ctxgraph.core.models import Anchor, utcnow
from ctxgraph.service.anchor_files import Digest, FileReads

log = logging.getLogger(__name__)

#: How long one ``git`` call may take before the check goes on without it.
GIT_TIMEOUT_S = 10.0


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
        st = os.stat(f"{root}/{fs_path(path)}")
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def is_file(root: str, path: str) -> bool:
    """Whether ``path`` names a regular file inside the folder ``root``."""
    return stat_at(root, path) is not None


def git_head(root: Path) -> str | None:
    """The commit checked out in ``root``'s work tree; None without git or a commit."""
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.decode("ascii", "replace").strip() or None if out is not None else None


def git_renames(root: Path, base: str | None) -> dict[str, str]:
    """old path -> new path of the files renamed from ``base`` (a commit; None:
    HEAD) to the work tree, as git's rename detection finds them (paths
    relative to ``root``, as :func:`~ctxgraph.core.anchors.shown_path` shows
    them: a name that is not UTF-8 is escaped, never an error). Empty
    without git or when ``base`` is unknown."""
    out = _git(root, "diff", "--find-renames", "--name-status", "-z", "--relative", base or "HEAD", "--")
    if out is None and base is not None:
        out = _git(root, "diff", "--find-renames", "--name-status", "-z", "--relative", "HEAD", "--")
    return parse_renames(out) if out else {}


def parse_renames(out: bytes) -> dict[str, str]:
    """The renames in the output of ``git diff --name-status -z`` (status,
    path, and for a rename or copy a second path, each ended by a NUL)."""
    parts = out.split(b"\0")
    renames: dict[str, str] = {}
    i = 0
    while i < len(parts):
        status = parts[i]
        if not status:
            break
        if status.startswith((b"R", b"C")):
            if status.startswith(b"R") and i + 2 < len(parts):
                renames[_decoded(parts[i + 1])] = _decoded(parts[i + 2])
            i += 3
        else:
            i += 2
    return renames


def _decoded(name: bytes) -> str:
    return shown_path(name.decode("utf-8", "surrogateescape"))


def _git(root: Path, *args: str) -> bytes | None:
    """``git -C root args`` 's output (bytes); None when git is missing or fails."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              timeout=GIT_TIMEOUT_S, env=env, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("git %s: %s", args[0], exc)
        return None
    return done.stdout if done.returncode == 0 else None


#: What a handoff asks to anchor: (owner, task_id, path, lines, commit, anchored at).
Wanted = tuple[str, str, str, str | None, str | None, str]


def make_anchors(root: Path, wanted: Sequence[Wanted], reads: FileReads | None = None) -> list[Anchor]:
    """The anchors of ``wanted`` on their files as they are now, each file
    read once (:class:`~ctxgraph.service.anchor_files.FileReads`: inside
    ``root`` only, capped); none for a path that is not a file inside ``root``."""
    reads = reads if reads is not None else FileReads(root)
    specs: dict[str, set[str | None]] = {}
    for _, _, path, lines, _, _ in wanted:
        specs.setdefault(path, set()).add(lines)
    digests = {path: reads.digest(path, found) for path, found in specs.items()}
    made: list[Anchor] = []
    for owner, task_id, path, lines, commit, at in wanted:
        d = digests[path]
        if d is None:
            continue
        shown = shown_path(path)
        size, mtime_ns = d.stat
        made.append(Anchor(id=anchor_id(owner, shown, lines), owner=owner, task_id=task_id, path=shown,
                           lines=lines, blob=d.blob, lines_hash=d.lines.get(lines), size=size, mtime_ns=mtime_ns,
                           commit=commit, anchored_at=at, current_path=shown, seen_size=size,
                           seen_mtime_ns=mtime_ns, checked_at=at))
    return made


def make_anchor(root: Path, *, owner: str, task_id: str, path: str, lines: str | None,
                commit: str | None, at: str, reads: FileReads | None = None) -> Anchor | None:
    """The anchor of ``owner`` on ``path`` as the file is now; None when the
    file is not a file inside ``root`` (:func:`make_anchors`)."""
    made = make_anchors(root, [(owner, task_id, path, lines, commit, at)], reads)
    return made[0] if made else None


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
          head: str | None = None, progress: Callable[[int], None] | None = None,
          reads: FileReads | None = None) -> CheckResult:
    """Each anchor against the work tree under ``root`` (see the module's text),
    as of ``now`` (None: the time when an anchor first differs).
    ``renames``: look for the files gone with git, from the commit where the
    file was last seen (``seen_commit``), then from the anchor's commit.
    ``head``: the work tree's HEAD, kept as ``seen_commit`` of the anchors
    read. ``progress`` is called with the number of anchors checked, every
    1,000 and at the end. Each file is read once at most
    (:class:`~ctxgraph.service.anchor_files.FileReads`, ``reads`` if given),
    whatever the number of anchors on it."""
    result = CheckResult()
    stamp = [now] if now is not None else []

    def at() -> str:
        if not stamp:
            stamp.append(utcnow())
        return stamp[0]

    out: list[Anchor | None] = []
    missing: list[int] = []
    stale: list[tuple[int, Anchor, bool]] = []  # (where, the anchor, renamed by this check) to read
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
            out.append(None)
            stale.append((len(out) - 1, a, False))
        if progress and n % 1000 == 0:
            progress(n)
    if missing:
        _follow_renames(result, root, anchors, missing, out, stale, at, renames=renames)
    if stale:
        _reread(result, root, stale, out, at, head, reads)
    if progress:
        progress(len(anchors))
    result.anchors = [a for a in out if a is not None]
    result.updated = [new for old, new in zip(anchors, result.anchors, strict=True) if new is not old]
    return result


def _follow_renames(result: CheckResult, root: Path, anchors: Sequence[Anchor], missing: list[int],
                    out: list[Anchor | None], stale: list[tuple[int, Anchor, bool]], at: Callable[[], str], *,
                    renames: bool) -> None:
    """The anchors whose file is gone: to read at their new path (git found
    it renamed: added to ``stale``), else deleted."""
    found: dict[str | None, dict[str, str]] = {}
    top = str(root)
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
        if new and stat_at(top, new) is not None:
            result.renamed += 1
            stale.append((i, a.model_copy(update={"current_path": new, "seen_size": -1, "seen_mtime_ns": -1}), True))
        else:
            out[i] = _deleted(result, a, f"file deleted: {a.current_path}", at())


def _deleted(result: CheckResult, a: Anchor, reason: str, when: str) -> Anchor:
    result.deleted += 1
    return a.model_copy(update={"status": "deleted", "reason": reason, "changed_at": when, "checked_at": when,
                                "seen_size": -1, "seen_mtime_ns": -1})


def _reread(result: CheckResult, root: Path, stale: list[tuple[int, Anchor, bool]], out: list[Anchor | None],
            at: Callable[[], str], head: str | None, reads: FileReads | None) -> None:
    """The anchors whose file's stat differs from the one last seen (or just
    renamed), against their file's one read."""
    reads = reads if reads is not None else FileReads(root)
    before = reads.reads
    specs: dict[str, set[str | None]] = {}
    for _, a, _ in stale:
        specs.setdefault(a.current_path, set()).add(a.lines)
    digests = {path: reads.digest(path, wanted) for path, wanted in specs.items()}
    result.hashed += reads.reads - before
    for i, a, moved in stale:
        d = digests[a.current_path]
        if d is None:  # gone since its stat, or a link out of the root: nothing of it is read
            out[i] = _deleted(result, a, f"file not in the work tree: {a.current_path}", at())
        else:
            out[i] = _judged(result, a, d, at(), head, force=moved)


def _follow(renames: dict[str, str], path: str) -> str | None:
    """Where ``path`` went (through chained renames), or None."""
    seen: set[str] = set()
    new = renames.get(path)
    while new is not None and new in renames and new not in seen:
        seen.add(new)
        new = renames[new]
    return new


def _judged(result: CheckResult, a: Anchor, d: Digest, now: str, head: str | None, *, force: bool) -> Anchor:
    status, reason = judge(a, d.blob, d.lines.get(a.lines), d.stat)
    if status == "changed" and (a.status != "changed" or force):
        result.changed += 1
    changed_at = a.changed_at if status == a.status and not force else now
    return a.model_copy(update={"status": status, "reason": reason, "seen_size": d.stat[0],
                                "seen_mtime_ns": d.stat[1], "checked_at": now,
                                "changed_at": changed_at if status != "unchanged" else None,
                                "seen_commit": head or a.seen_commit})


__all__ = ["CheckResult", "Wanted", "check", "git_head", "git_renames", "is_file", "make_anchor", "make_anchors",
           "parse_renames", "stat_at"]
