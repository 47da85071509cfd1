"""The commits of a git repository as they are: streamed from ``git log``.

``git log -z --name-status -M --no-merges --format=...`` runs as a child
process whose output is read as bytes, a block at a time, and parsed into one
:class:`Commit` after the other: however long the history, only the commit
being parsed (and one block of output) is in memory. git is asked for the
commit id, the parents, the author date and the message, never for a name or
an e-mail address.

Text is decoded as UTF-8: a path is named as everywhere else in ctxgraph
(:func:`~ctxgraph.core.names.shown_name`: an odd byte escaped, ``%FF``), so
that two different byte paths stay two paths and match the memory's and the
anchors' names; an odd byte in a message is replaced. git's own user configuration that would change the output (a
signature shown, colours, an external diff, the rename detection switched
off) is overridden on the command line.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ctxgraph.core.names import shown_name
from ctxgraph.errors import CtxgraphError

#: What starts each commit's record in the output (no path and no status can
#: be read where a record starts: the parser reads the tokens in order).
MARK = b"\x01ctxgraph-commit "
#: The record: the mark and the full id, the parents, the author date (seconds
#: since the epoch: a commit's recorded offset can be nonsense, ``+518:00``),
#: the raw message; then the name-status entries.
FORMAT = "%x01ctxgraph-commit %H%x00%P%x00%at%x00%B"
#: Bytes read from git at a time.
BLOCK = 1 << 16
#: git options that make the output the same whatever the user's configuration.
CONFIG = ("-c", "log.showSignature=false", "-c", "color.ui=false", "-c", "diff.external=",
          "-c", "core.quotePath=false")

_STATUS = re.compile(rb"\n?([ACDMRTUXB])([0-9]*)")


class GitError(CtxgraphError):
    """git is missing, the folder is not a repository, or a revision is unknown."""

    exit_code = 2


@dataclass(frozen=True)
class Change:
    """One file of a commit: ``status`` is git's letter (A added, M modified,
    D deleted, R renamed, C copied, T type changed), ``path`` the path after
    the commit, ``old_path`` the path before it for R and C (else "")."""

    status: str
    path: str
    old_path: str = ""


@dataclass(frozen=True)
class Commit:
    """A commit as git gives it (no author or committer identity is read)."""

    id: str
    parents: tuple[str, ...]
    #: The author date, ISO 8601 in UTC (``2014-04-27T00:06:32Z``).
    date: str
    message: str
    changes: tuple[Change, ...] = field(default=())

    @property
    def subject(self) -> str:
        """The first paragraph on one line, as ``git log --format=%s`` gives it."""
        return subject_of(self.message)

    @property
    def body(self) -> str:
        """The message after its first paragraph, stripped."""
        return body_of(self.message)


def subject_of(message: str) -> str:
    lines: list[str] = []
    for line in message.strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


def body_of(message: str) -> str:
    text = message.strip()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            return "\n".join(lines[i:]).strip()
    return ""


def path_text(raw: bytes) -> str:
    """A path's bytes as text: :func:`~ctxgraph.core.names.shown_name`."""
    return shown_name(raw)


def git_env() -> dict[str, str]:
    """The environment git runs in: the caller's, less the variables that would
    point it at another repository or index."""
    return {k: v for k, v in os.environ.items()
            if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")}


def run_git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``git -C repo ARGS`` with its output as text; a failure (with ``check``)
    is a :class:`GitError` giving git's own message."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *CONFIG, *args], capture_output=True, text=True,
                              env=git_env(), errors="replace", check=False)
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    if check and done.returncode != 0:
        raise GitError(_git_message(done.stderr) or f"git {args[0]} failed in {repo}")
    return done


def _git_message(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    message = lines[0] if lines else ""
    return message.removeprefix("fatal: ").removeprefix("error: ")


def read_log(repo: Path, revisions: Sequence[str], *, since: str | None = None,
             max_count: int | None = None, paths: Sequence[str] = ()) -> Iterator[Commit]:
    """The non-merge commits of ``revisions`` (``git log`` arguments: ``HEAD``,
    ``main ^3f2a9c1``, ...), newest first as ``git log`` orders them, each with
    its changed files (renames detected). ``since``: only commits after that
    date (git's date syntax); ``max_count``: at most that many.

    The child process is stopped when the iteration is (a ``break``, an
    error): nothing is left running."""
    args = [f"--since={since}"] if since else []
    if max_count is not None:
        args.append(f"--max-count={max_count}")
    yield from _log(repo, [*args, *revisions, "--", *paths])


def _log(repo: Path, args: Sequence[str], *, merges: bool = False) -> Iterator[Commit]:
    args = ["log", "-z", "--name-status", "-M", *(() if merges else ("--no-merges",)), "--no-color",
            "--no-ext-diff", f"--format={FORMAT}", *args]
    try:
        proc = subprocess.Popen(["git", "-C", str(repo), *CONFIG, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=git_env())
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    assert proc.stdout is not None and proc.stderr is not None
    finished = False
    try:
        yield from parse(_tokens(proc.stdout))
        finished = True
    finally:
        if not finished:
            proc.kill()
        proc.stdout.close()
        stderr = proc.stderr.read().decode("utf-8", "replace")
        proc.stderr.close()
        code = proc.wait()
    if code != 0:
        raise GitError(_git_message(stderr) or f"git log failed in {repo}")


def read_commit(repo: Path, revision: str) -> Commit:
    """One commit, merge or not (a merge's files are not listed)."""
    full = resolve(repo, revision)
    found = list(_log(repo, ["--no-walk", "--max-count=1", full], merges=True))
    if not found:
        raise GitError(f"{revision!r} is not a commit in {repo}")
    return found[0]


def _tokens(stream: object) -> Iterator[bytes]:
    """The NUL-separated tokens of a binary stream, a block at a time."""
    read = stream.read  # type: ignore[attr-defined]
    rest = b""
    while True:
        block = read(BLOCK)
        if not block:
            break
        parts = (rest + block).split(b"\0")
        rest = parts.pop()
        yield from parts
    if rest:
        yield rest


def parse(tokens: Iterator[bytes]) -> Iterator[Commit]:
    """Commits from the tokens of ``git log -z --name-status --format=FORMAT``:
    the record's four fields, then (status, path[, path]) entries until the
    next record's mark."""
    pending: bytes | None = next(tokens, None)
    while pending is not None:
        if not pending.startswith(MARK):
            raise GitError(f"unexpected git log output near {pending[:40]!r}")
        commit_id = pending[len(MARK):].decode("ascii").strip()
        parents = next(tokens, b"").decode("ascii").split()
        date = _iso(next(tokens, b"").decode("ascii").strip())
        message = next(tokens, b"").decode("utf-8", "replace")
        changes: list[Change] = []
        pending = next(tokens, None)
        while pending is not None and not pending.startswith(MARK):
            status = _STATUS.fullmatch(pending)
            if status is None:
                raise GitError(f"unexpected git log output near {pending[:40]!r}")
            letter = status.group(1).decode("ascii")
            first = path_text(next(tokens, b""))
            if letter in ("R", "C"):
                changes.append(Change(letter, path_text(next(tokens, b"")), first))
            else:
                changes.append(Change(letter, first))
            pending = next(tokens, None)
        yield Commit(id=commit_id, parents=tuple(parents), date=date, message=message, changes=tuple(changes))


def _iso(seconds: str) -> str:
    try:
        when = datetime.fromtimestamp(int(seconds), UTC)
    except (ValueError, OverflowError, OSError):
        raise GitError(f"unexpected git log output: author date {seconds[:40]!r}") from None
    return when.isoformat(timespec="seconds").replace("+00:00", "Z")


def resolve(repo: Path, revision: str) -> str:
    """The full id of the commit ``revision`` names (a branch, a tag, an id)."""
    done = run_git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}",
                   check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise GitError(f"{revision!r} is not a commit in {repo}")
    return done.stdout.strip()


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    """Whether ``older`` is ``newer`` or one of its ancestors (False when
    ``older`` is no longer in the repository)."""
    return run_git(repo, "merge-base", "--is-ancestor", older, newer, check=False).returncode == 0


def reachable(repo: Path, revision: str) -> Iterator[str]:
    """The full ids of every commit reachable from ``revision``, merges
    included, streamed (``git rev-list``)."""
    try:
        proc = subprocess.Popen(["git", "-C", str(repo), *CONFIG, "rev-list", revision, "--"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=git_env())
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    assert proc.stdout is not None and proc.stderr is not None
    for line in proc.stdout:
        yield line.decode("ascii").strip()
    proc.stdout.close()
    stderr = proc.stderr.read().decode("utf-8", "replace")
    proc.stderr.close()
    if proc.wait() != 0:
        raise GitError(_git_message(stderr) or f"git rev-list failed in {repo}")


def work_tree(path: Path) -> Path | None:
    """The top of the git work tree holding ``path`` (None: not in one)."""
    done = run_git(path, "rev-parse", "--show-toplevel", check=False)
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


__all__ = ["BLOCK", "Change", "Commit", "GitError", "body_of", "is_ancestor", "parse", "path_text", "reachable",
           "read_commit", "read_log", "resolve", "run_git", "subject_of", "work_tree"]
