"""The git history as finished tasks: each commit the rules keep
(:mod:`.history_rules`) becomes a task and its handoff, the documents a tasks
file and an agent's handoff would give.

- the task: id ``c-`` and the commit's first 10 hex digits (the id the
  evaluation sets give a commit), the subject as its name, the message as its
  objective, type ``change``, finished at the commit's author date;
- the handoff: the subject as its summary, the files the commit added as
  ``files_created``, those it modified, renamed or copied as
  ``files_modified``, those it deleted as ``files_deleted`` (kept in the
  handoff's document, linked to nothing), the full commit id as ``commit``
  and the issue and pull-request references (``#123``, ``GH-45``) as
  ``refs``.

Renames are followed: the history is read newest first, and a path is
written as the path its file has at the newest commit read (the branch's
tip), so the work done on ``flask/app.py`` before it moved counts for
``src/flask/app.py``. A path a later commit created anew (after a delete or a
rename away) is another file and keeps its name.

No name or e-mail address is kept: git is never asked for the author, the
trailers that name people (``Signed-off-by:``, ``Co-authored-by:``, any
``...-by:``) are left out of the objective, and any other e-mail address in
a message is replaced by ``[e-mail]``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ctxgraph.core.limits import MAX_ID_CHARS, MAX_NAME_CHARS, MAX_TEXT_CHARS
from ctxgraph.core.models import Complexity, Task, TaskStatus, clean_path
from ctxgraph.memory.secrets import DEFAULT
from ctxgraph.sources.git_log import Change, Commit
from ctxgraph.sources.history_rules import MASS_CHANGE, Verdict, in_paths, judge

#: The prefix of the id of a task made from a commit.
ID_PREFIX = "c-"
#: Hex digits of the commit id in a task id.
ID_DIGITS = 10
#: The type of a task made from a commit (the evaluation sets' type).
TASK_TYPE = "change"

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")
_TRAILER = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*:\s*(.*)$")
_BLANK_LINES = re.compile(r"\n{3,}")
_PERSON_KEYS = frozenset({"cc", "author", "committer", "from", "to"})
_REFS = re.compile(r"(?<![\w&/#])(?:#|\bGH-)(\d{1,7})\b|github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/(\d{1,7})\b",
                   re.IGNORECASE)


def task_id(commit_id: str) -> str:
    """The id of the task a commit becomes."""
    return ID_PREFIX + commit_id[:ID_DIGITS].lower()


def is_commit_task(task: str) -> bool:
    """Whether ``task`` is an id this import gives (``c-`` and 10 hex digits)."""
    return len(task) == len(ID_PREFIX) + ID_DIGITS and task.startswith(ID_PREFIX) and all(
        c in "0123456789abcdef" for c in task[len(ID_PREFIX):])


def trailers(message: str) -> list[tuple[str, str]]:
    """The trailers of a message (``Key: value`` lines of its last paragraph,
    when every line of it is one), keys as written."""
    paragraphs = [p for p in re.split(r"\n\s*\n", message.strip()) if p.strip()]
    if len(paragraphs) < 2:
        return []
    found = []
    for line in paragraphs[-1].splitlines():
        match = _TRAILER.match(line.strip())
        if match is None:
            return []
        found.append((match.group(1), match.group(2).strip()))
    return found


def _names_a_person(line: str) -> bool:
    match = _TRAILER.match(line.strip())
    if match is None:
        return False
    key = match.group(1).lower()
    return key.endswith("-by") or key in _PERSON_KEYS


def clean_message(message: str) -> str:
    """The message without the lines naming people and without e-mail addresses."""
    lines = [line.rstrip() for line in message.strip().splitlines() if ":" not in line or not _names_a_person(line)]
    text = "\n".join(lines).strip()
    if "\n\n\n" in text:
        text = _BLANK_LINES.sub("\n\n", text)
    return _EMAIL.sub("[e-mail]", text) if "@" in text else text


def refs(message: str) -> list[str]:
    """The issue and pull-request numbers a message names, as ``#123``, sorted by number."""
    numbers = {int(a or b) for a, b in _REFS.findall(message)}
    return [f"#{n}" for n in sorted(numbers)]


def joined_task(message: str) -> str | None:
    """The ctxgraph task a ``Task: <id>`` trailer names (the first; None: none)."""
    for key, value in trailers(message):
        if key.lower() == "task" and value and len(value) <= MAX_ID_CHARS and " " not in value:
            return value
    return None


class Renames:
    """Where each path of an older commit is at the tip: fed the commits newest
    first (:meth:`step` after a commit is mapped), it maps a path as an older
    commit names it to the path its file has at the newest commit fed."""

    def __init__(self) -> None:
        self._to: dict[str, str] = {}

    def final(self, path: str) -> str:
        return self._to.get(path, path)

    def step(self, changes: Iterable[Change]) -> None:
        """Walk back past a commit with these changes."""
        changes = list(changes)
        moved = {c.old_path: self.final(c.path) for c in changes if c.status == "R"}
        for change in changes:
            if change.status in ("A", "C", "R"):  # before this commit, the path named another file (or none)
                self._to.pop(change.path, None)
        for old, final in moved.items():
            if final != old:
                self._to[old] = final
            else:
                self._to.pop(old, None)

    @property
    def moved(self) -> bool:
        """Whether any path of an older commit is at another path at the tip."""
        return bool(self._to)


@dataclass(frozen=True)
class HistoryEntry:
    """One commit read: the rules' verdict and, when kept, the task and the
    handoff document it becomes (``join``: the existing task a ``Task:``
    trailer names, which the commit may join instead)."""

    commit: Commit
    verdict: Verdict
    #: The files the rules keep, as (git's status letter, the path at the tip).
    files: tuple[tuple[str, str], ...] = ()
    task: Task | None = None
    handoff: dict[str, Any] | None = None
    join: str | None = None

    @property
    def task_id(self) -> str:
        return task_id(self.commit.id)


#: The name a commit message is redacted as (a text file: the keyword detector's rules for prose).
MESSAGE_NAME = "COMMIT_EDITMSG.txt"


def redact_message(message: str) -> str:
    """``message`` with the values that look like credentials replaced, as the
    memory's index replaces them in files (:mod:`ctxgraph.memory.secrets`, its
    default rules): a commit's text goes into contexts, hence into prompts."""
    return DEFAULT.redact(MESSAGE_NAME, message)[0]


def commit_task(commit: Commit, message: str) -> Task:
    """The finished task a kept commit becomes (no signals yet); ``message`` is
    its message as kept (:func:`clean_message`). Built without validation:
    every field is already in the form the model's validators give."""
    subject, body = _subject_and_body(message)
    name = subject[:MAX_NAME_CHARS] or commit.id[:ID_DIGITS]
    objective = (name + ("\n\n" + body if body else ""))[:MAX_TEXT_CHARS]
    return Task.model_construct(
        id=task_id(commit.id), name=name, objective=objective, acceptance_criteria=(), type=TASK_TYPE,
        complexity=Complexity.NORMAL, status=TaskStatus.COMPLETED, blocked_reason=None, blocked_at=None,
        requires_context=True, outcome_summary=name, success=True, completed_at=commit.date, depends_on=(),
        signals=None, created_at=commit.date, updated_at=commit.date)


def _subject_and_body(message: str) -> tuple[str, str]:
    """``(subject_of(message), body_of(message))`` in one pass over its lines."""
    lines = message.strip().splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            return " ".join(part.strip() for part in lines[:i]), "\n".join(lines[i:]).strip()
    return " ".join(part.strip() for part in lines), ""


@functools.lru_cache(maxsize=65_536)
def _clean_path(path: str) -> str:
    """``clean_path`` of a path a commit names (cached: a history names the same paths again and again)."""
    return clean_path(path)


def commit_handoff(commit: Commit, subject: str, files: Iterable[tuple[str, str]], task: str) -> dict[str, Any]:
    """The handoff document of a kept commit: ``files`` are (status, path at the tip)."""
    created: dict[str, None] = {}
    modified: dict[str, None] = {}
    deleted: dict[str, None] = {}
    for status, raw in files:
        path = _clean_path(raw)
        (created if status in ("A", "C") else deleted if status == "D" else modified)[path] = None
    modified = {p: None for p in modified if p not in created}
    doc: dict[str, Any] = {
        "task_id": task,
        "summary": subject[:MAX_TEXT_CHARS] or commit.id[:ID_DIGITS],
        "success": True,
        "completed_at": commit.date,
        "commit": commit.id,
        "files_created": [{"path": p} for p in created],
        "files_modified": [{"path": p} for p in modified],
    }
    if deleted:
        doc["files_deleted"] = list(deleted)
    found = refs(commit.message)
    if found:
        doc["refs"] = found
    return doc


def entries(commits: Iterable[Commit], renames: Renames | None = None, *, mass_change: int = MASS_CHANGE,
            paths: Sequence[str] = ()) -> Generator[HistoryEntry, None, None]:
    """Each commit (newest first) with its verdict and, when kept, its task
    and handoff; ``renames`` (a new one when None) follows the renames of every
    commit read, kept or not. With ``paths`` (folders, each ending in ``/``),
    a kept commit keeps its files under them alone, judged at their path at
    the tip (:func:`~.history_rules.in_paths`)."""
    renames = renames if renames is not None else Renames()
    for commit in commits:
        verdict = judge(commit, mass_change=mass_change)
        files = tuple((c.status, renames.final(c.path)) for c in verdict.kept)
        renames.step(commit.changes)
        if paths and not verdict.skipped:
            verdict, files = in_paths(verdict, files, paths)
        if verdict.skipped:
            yield HistoryEntry(commit=commit, verdict=verdict, files=files)
            continue
        message = redact_message(clean_message(commit.message))
        task = commit_task(commit, message)
        yield HistoryEntry(commit=commit, verdict=verdict, files=files, task=task,
                           handoff=commit_handoff(commit, task.name, files, task.id),
                           join=joined_task(commit.message))


__all__ = ["ID_DIGITS", "ID_PREFIX", "TASK_TYPE", "HistoryEntry", "Renames", "clean_message", "commit_handoff",
           "commit_task", "entries", "is_commit_task", "joined_task", "refs", "task_id", "trailers"]
