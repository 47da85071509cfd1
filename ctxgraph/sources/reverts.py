"""Reverts as gotchas (issue 44; docs/history.md, "Reverts become gotchas"):
a revert is not a task worth ranking (the rule ``revert`` skips it), but it
says that something went wrong and, often, why. Each revert the history
import reads becomes a gotcha naming what was reverted and why: ``Reverted:
"Use the new cache" (c-1a2b3c4d5e, reverted by c-6f7a8b9c0d): it broke the
session tests``. Pure: the caller gives the texts (as kept, without names or
e-mail addresses, values redacted) and the signals of each item's text."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

from ctxgraph.core.limits import MAX_TEXT_CHARS
from ctxgraph.core.models import KnowledgeItem, Severity
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.graph.records import stable_id
from ctxgraph.signals import TaskSignals
from ctxgraph.sources.git_log import body_of
from ctxgraph.sources.history import task_id
from ctxgraph.sources.history_rules import is_changelog_or_version
from ctxgraph.sources.items import _tags, path_words

_QUOTED = re.compile(r"""^\s*revert(?:s|ed)?\s*(?:\([^)]*\))?:?\s*(["'`])(?P<subject>.+)\1\s*$""", re.IGNORECASE)
_PREFIX = re.compile(r"^\s*revert(?:s|ed)?\s*(?:\([^)]*\))?:\s*(?P<subject>.+?)\s*$", re.IGNORECASE)
_THIS_REVERTS = re.compile(r"this\s+reverts\s+commit\s+[0-9a-f]{7,64}\.?"
                           r"(,?\s*reversing\s+changes\s+made\s+to\s+[0-9a-f]{7,64}\.?)?", re.IGNORECASE)
_SHA_SUBJECT = re.compile(r"^\s*revert(?:s|ed)?\s*:?\s*(?:commit\s+)?(?P<sha>[0-9a-f]{7,64})\b", re.IGNORECASE)
#: The importance of a revert's gotcha (a note in code has 0.7, one in docs 0.3).
REVERT_IMPORTANCE = 0.6


def revert_id(commit: str) -> str:
    """The gotcha's id: the revert commit's (an amended revert is another gotcha)."""
    return stable_id("gotcha", f"revert:{commit.lower()}")


def reverted_commit(subject: str) -> str:
    """The commit a subject ``Revert <sha>`` names ("": none)."""
    found = _SHA_SUBJECT.match(subject)
    return found.group("sha").lower() if found else ""


def reverted_subject(subject: str) -> str | None:
    """What a revert's subject says it reverts (``Revert "X"`` -> ``X``; None: it does not say)."""
    for pattern in (_QUOTED, _PREFIX):
        found = pattern.match(subject)
        if found is not None and not re.fullmatch(r"(commit\s+)?[0-9a-f]{7,64}", found.group("subject").strip()):
            return found.group("subject").strip()
    return None


def why(message: str) -> str:
    """The reason a revert's message gives: its body without git's "This
    reverts commit ..." sentence, on one line ("" when it gives none)."""
    text = _THIS_REVERTS.sub(" ", body_of(message))
    return " ".join(text.split())


def revert_text(subject: str, reverted: str, commit: str, message: str) -> str:
    """The gotcha's text: what was reverted (its commit as a task id when known), by which commit, why."""
    again = reverted_subject(subject)  # a revert of a revert: the change is back
    said = f'Reverted the revert of "{again}"' if again else f'Reverted: "{subject}"'
    where = f"{task_id(reverted)}, reverted by {task_id(commit)}" if reverted else f"reverted by {task_id(commit)}"
    reason = why(message)
    return (f"{said} ({where})" + (f": {reason}" if reason else ""))[:MAX_TEXT_CHARS]


def revert_item(commit: str, text: str, files: Sequence[tuple[str, str]], signals: TaskSignals,
                normalize: Callable[[str], str], at: str) -> KnowledgeItem:
    """The gotcha of a revert: ``text`` (:func:`revert_text`), tagged by its
    words and the words of the files it changed; about the first file it left
    in the tree (``files``: git's status letter and the path at the tip),
    scoped to it, a changelog or version file only when it changed nothing
    else (none left: global)."""
    kept = [path for status, path in files if status != "D"]
    location = next((p for p in kept if not is_changelog_or_version(p)), kept[0] if kept else None)
    tags = _tags(signals, [w for _, path in files for w in path_words(path)], normalize)
    return KnowledgeItem(id=revert_id(commit), kind="gotcha", summary=text, tags=tags, location=location,
                         severity=Severity.MEDIUM, scope="path" if location else "global",
                         importance=REVERT_IMPORTANCE, token_estimate=estimate_tokens(text), created_at=at,
                         updated_at=at)


def digest(item: KnowledgeItem) -> str:
    """What the import keeps of a revert to know it unchanged (its item's JSON)."""
    return hashlib.sha256(item.model_dump_json().encode("utf-8")).hexdigest()


__all__ = ["REVERT_IMPORTANCE", "digest", "revert_id", "revert_item", "revert_text", "reverted_commit",
           "reverted_subject", "why"]
