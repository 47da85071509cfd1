"""ADRs and code notes as the knowledge items a handoff would give
(docs/knowledge-import.md): ids from their file (a note's also from its text),
texts, tags (the text's keywords and domains from the signal extractor, a
note's also its file's path words), severity or status, and the supersedes
links among ADRs. Pure: the caller extracts the signals."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import PurePosixPath

from ctxgraph.core.limits import MAX_ITEMS, MAX_NAME_CHARS
from ctxgraph.core.models import KnowledgeItem, Severity
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.graph.records import stable_id
from ctxgraph.signals import TaskSignals
from ctxgraph.sources.adr import Adr, supersessions
from ctxgraph.sources.notes import Note

#: Path words that say nothing of a file's subject.
PATH_STOP = frozenset({"src", "lib", "libs", "doc", "docs", "source", "sources", "init", "main", "index", "readme",
                       "app", "core", "util", "utils", "misc", "common", "internal", "pkg", "cmd", "the"})
#: A note's importance by its form: what the code says of itself comes before
#: what its docs tell users (it breaks ties of relevance; docs/knowledge-import.md).
NOTE_IMPORTANCE = {"comment": 0.7, "docstring": 0.6, "docs": 0.3}
#: The status a decision gets from an ADR's status (those left out are not in force).
DECISION_STATUS = {"accepted": "active", "proposed": "proposed", "superseded": "superseded"}


def note_id(note: Note) -> str:
    """A note's id: its file, marker and text (it survives lines moving; an edit is a new note)."""
    return stable_id("gotcha", f"note:{note.path}:{note.marker}:{note.text}")


def adr_id(path: str) -> str:
    """An ADR's decision id: its file (re-importing an edited ADR updates it)."""
    return stable_id("decision", f"adr:{path}")


def path_words(path: str) -> list[str]:
    """The words of a file's path a task may name: its folders' and its name's
    words, and its name when it joins several (``shell_completion``), less
    :data:`PATH_STOP` and words under three letters."""
    p = PurePosixPath(path)
    stem = p.stem.strip("_")
    words = [w.lower() for part in (*p.parent.parts, stem) for w in re.split(r"[^A-Za-z0-9]+", part)]
    found = [w for w in words if len(w) >= 3 and not w.isdigit() and w not in PATH_STOP]
    if re.search(r"[_-]", stem) and stem.lower() not in PATH_STOP:
        found.append(stem.lower())
    return list(dict.fromkeys(found))


def _tags(signals: TaskSignals, extra: Iterable[str], normalize: Callable[[str], str], *,
          domains: bool = True) -> tuple[str, ...]:
    """The tags, within a handoff's limits (:mod:`ctxgraph.core.limits`): at
    most ``MAX_ITEMS``, none longer than ``MAX_NAME_CHARS``."""
    own = (*signals.keywords, *(signals.domains if domains else ()))
    found = dict.fromkeys(t for t in (*own, *(normalize(w) for w in extra)) if t and len(t) <= MAX_NAME_CHARS)
    return tuple(found)[:MAX_ITEMS]


def note_item(note: Note, signals: TaskSignals, path_tags: Sequence[str], normalize: Callable[[str], str],
              at: str) -> KnowledgeItem:
    """The gotcha a note is: ``MARKER (path:lines, Class.function): text``,
    its severity by marker, scoped to its path, located at its lines. Its
    tags, as measured best (docs/knowledge-import.md): in code, the keywords
    and domains of its text (``signals``), the names of the class and
    function it is in, and ``path_tags``, its file's; in docs, its page's
    ``path_tags`` alone (``signals`` is not read)."""
    where = f"{note.location}, {note.symbol}" if note.symbol else note.location
    summary = f"{note.marker} ({where}): {note.text}"
    symbol = [part.lower() for part in (note.symbol or "").split(".") if part]
    if note.form == "docs":  # about its page's subject: the page's tags alone
        tags = _tags(TaskSignals(), path_tags, normalize)
    else:
        tags = _tags(signals, [*symbol, *path_tags], normalize)
    return KnowledgeItem(
        id=note_id(note), kind="gotcha", summary=summary, tags=tags, location=note.location,
        severity=Severity(note.severity), scope="path", importance=NOTE_IMPORTANCE.get(note.form, 0.5),
        token_estimate=estimate_tokens(summary), created_at=at, updated_at=at)


def adr_text(adr: Adr) -> str:
    """The text an ADR's tags come from: its title, decision and context."""
    return ". ".join(t for t in (adr.title, adr.decision, adr.context) if t)


def adr_items(adrs: Sequence[Adr], signals: Mapping[str, TaskSignals], normalize: Callable[[str], str],
              at: str) -> tuple[list[KnowledgeItem], list[tuple[str, str, str]]]:
    """The decisions of the ADRs in force or superseded (``signals`` by path:
    their keywords are the tags, not their domains: adr-tools' first ADR,
    "Record architecture decisions", is in every such log, and "record" is a
    word of the database domain), and the
    (newer id, older id, at) links among them: ``at`` is the newer ADR's date,
    else ``at``. A decision's ``created_at`` is its ADR's date."""
    kept = [a for a in adrs if a.status in DECISION_STATUS]
    pairs = [(new, old) for new, old in supersessions(kept)]
    summaries = {a.path: _adr_summary(a) for a in kept}
    replaces: dict[str, list[str]] = {}
    for new, old in pairs:
        replaces.setdefault(new.path, []).append(summaries[old.path])
    superseded = {old.path for _, old in pairs}
    items = []
    for a in kept:
        status = "superseded" if a.path in superseded else DECISION_STATUS[a.status]
        rationale = f"{a.decision or a.context or a.title} ({a.path})"
        items.append(KnowledgeItem(
            id=adr_id(a.path), kind="decision", summary=summaries[a.path], rationale=rationale,
            tags=_tags(signals[a.path], (), normalize, domains=False), location=a.path, status=status,
            valid_from=(a.date or at) if status == "superseded" else None,
            replaces=tuple(replaces.get(a.path, ())),
            token_estimate=estimate_tokens(f"{summaries[a.path]} {rationale}"),
            created_at=a.date or at, updated_at=at))
    links = [(adr_id(new.path), adr_id(old.path), new.date or at) for new, old in pairs]
    return items, links


def _adr_summary(a: Adr) -> str:
    head = f"ADR {a.number}" if a.number is not None else "ADR"
    return f"{head}{' (proposed)' if a.status == 'proposed' else ''}: {a.title}"


__all__ = ["DECISION_STATUS", "NOTE_IMPORTANCE", "PATH_STOP", "adr_id", "adr_items", "adr_text", "note_id",
           "note_item", "path_words"]
