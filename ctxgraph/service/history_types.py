"""The types of the history import (``ctxgraph.service.history``): its
options, its report and what ``explain_commit`` says of a commit."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ctxgraph.core.models import TaskStatus
from ctxgraph.errors import InvalidArgumentError
from ctxgraph.sources.history import ID_DIGITS
from ctxgraph.sources.history_rules import RULES

#: Commits written per store transaction: a commit's task id is a hash, so
#: every batch lands all over the stores' indexes, and fewer, larger batches
#: write each page fewer times (22,150 commits into the embedded store:
#: 7.6 s at 2,000, 6.2 s at 5,000, 5.9 s at 10,000; peak memory 157, 213,
#: 297 MB).
HISTORY_BATCH = 5_000


@dataclass(frozen=True)
class HistoryOptions:
    """What one import reads: ``branch`` (a branch, tag or commit; default the
    checked-out one), commits after ``since`` only (git's date syntax), at
    most ``max_commits`` (the newest), for at most ``time_limit`` seconds;
    ``signals``: give the imported tasks their signals (step 3); ``paths``:
    folders of the repository whose files alone a commit keeps (``()``: all
    of it; None: those of the last import, all of it at first)."""

    branch: str = "HEAD"
    since: str | None = None
    max_commits: int | None = None
    time_limit: float | None = None
    batch_size: int = HISTORY_BATCH
    signals: bool = True
    paths: tuple[str, ...] | None = None


@dataclass
class HistoryReport:
    """What an import did (``as_dict`` for JSON)."""

    root: str
    branch: str
    head: str = ""
    #: The folders whose files alone the commits keep (``[]``: the whole repository).
    paths: list[str] = field(default_factory=list)
    #: ``full`` (every commit of the branch read), ``new commits`` (those after
    #: the last tip), ``up to date`` (none to read), ``no commits`` (a
    #: repository without any yet: nothing to import).
    mode: str = "full"
    read: int = 0
    imported: int = 0
    unchanged: int = 0
    updated: int = 0
    joined: int = 0
    #: Tasks with an imported id (``c-`` and 10 hex digits) that are not from an import: left alone.
    conflicts: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    files_dropped: dict[str, int] = field(default_factory=dict)
    retired: int = 0
    revived: int = 0
    signals: int = 0
    #: The reverts read (skipped as tasks): commit, the commit it reverts, subject.
    reverts: list[dict[str, str]] = field(default_factory=list)
    #: The gotchas of reverts written (new or changed) and removed (their revert left the branch).
    gotchas: int = 0
    gotchas_removed: int = 0
    #: Why the run stopped before the end ("": it did not): ``time limit`` or ``max commits``.
    stopped: str = ""
    seconds: float = 0.0
    full_text_seconds: float = 0.0
    signals_seconds: float = 0.0

    @property
    def partial(self) -> bool:
        return bool(self.stopped)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["partial"] = self.partial
        return out


@dataclass
class CommitExplanation:
    """What the import made, or makes, of one commit (``as_dict`` for JSON):
    ``verdict`` says it in one sentence."""

    commit: str
    task_id: str
    subject: str
    date: str
    branch: str
    on_branch: bool
    merge: bool
    #: The rule that skips it (None: a task; ``merge`` for a merge).
    rule: str | None
    files: list[dict[str, str]]
    dropped: list[dict[str, str]]
    reverts: str
    #: The existing task a ``Task:`` trailer names (None: none, or no such task).
    joins: str | None
    #: The stored task's status ("": none stored).
    stored: str
    verdict: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def verdict_of(found: CommitExplanation) -> str:
    """One sentence on an explained commit."""
    short = found.commit[:ID_DIGITS]
    where = "" if found.on_branch else f"; it is not on {found.branch}"
    if found.rule == "merge":
        return f"{short} is a merge: merges are never imported (their changes come with the commits merged)"
    if found.rule is not None:
        return f"{short} is skipped by the rule {found.rule!r}: {RULES[found.rule]}{where}"
    if found.joins is not None:
        state = "its handoff is there" if found.stored else "not imported yet"
        return f"{short} joins the task {found.joins} (a Task: trailer) as a second handoff: {state}{where}"
    if found.stored == TaskStatus.RETIRED.value:
        return f"{short} was imported as {found.task_id}, now retired: it is not on {found.branch} any more"
    if found.stored:
        return f"{short} is imported as {found.task_id} ({found.stored}){where}"
    if not found.on_branch:
        return f"{short} is kept by the rules but not on {found.branch}: only its commits are imported"
    return f"{short} is kept by the rules but not imported yet (ctxgraph history import)"


def check_options(options: HistoryOptions) -> None:
    if options.max_commits is not None and options.max_commits < 1:
        raise InvalidArgumentError(f"max_commits: {options.max_commits!r} is not a whole number of at least 1")
    if options.time_limit is not None and options.time_limit <= 0:
        raise InvalidArgumentError(f"time_limit: {options.time_limit!r} is not a number of seconds above 0")
    if options.batch_size < 1:
        raise InvalidArgumentError(f"batch_size: {options.batch_size!r} is not a whole number of at least 1")
    if not options.branch.strip() or options.branch.startswith("-"):
        raise InvalidArgumentError(f"branch: {options.branch!r} is not a branch, tag or commit")
    for path in options.paths or ():
        folder(path)


def folder(path: str) -> str:
    """A folder of ``paths`` as the import compares it: relative to the
    repository's top, ``/``-separated, ending in ``/`` (``src/pkg`` ->
    ``src/pkg/``)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if path.startswith("/") or not parts or ".." in parts:
        raise InvalidArgumentError(f"path: {path!r} is not a folder inside the repository (relative to its top)")
    return "/".join(parts) + "/"


def folders(paths: tuple[str, ...]) -> tuple[str, ...]:
    """``paths`` as :func:`folder` gives them, sorted, without repeats."""
    return tuple(sorted({folder(p) for p in paths}))


__all__ = ["HISTORY_BATCH", "CommitExplanation", "HistoryOptions", "HistoryReport", "check_options", "folder",
           "folders", "verdict_of"]
