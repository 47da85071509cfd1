"""Architecture decision records (ADRs) as decisions (docs/knowledge-import.md).

Where they are (:func:`adr_folders`): the folders ADR tools and templates use
(:data:`ADR_DIRS`), the one adr-tools' ``.adr-dir`` file names, and those the
settings file adds (``[knowledge] adr_dirs``). An ADR is a Markdown (or
reStructuredText) file in one of them, at any depth, that is not a README, an
index or a template (:func:`is_adr_file`).

What one says (:func:`parse_adr`), in both common formats:

- Michael Nygard's (adr-tools): ``# 7. Use Postgres``, a ``Date:`` line, and
  ``## Status`` / ``## Context`` / ``## Decision`` / ``## Consequences``; the
  status section may say ``Superseded by [12. Use CockroachDB](0012-...)``
  or ``Supersedes [3. ...](0003-...)``.
- MADR: a front matter (``status:``, ``date:``) or MADR 2's ``* Status:``
  and ``* Date:`` lines, ``# Title``, ``## Context and Problem Statement``
  and ``## Decision Outcome`` with ``Chosen option: "...", because ...``.

A status is one of :data:`STATUSES` (:func:`status_of`); an ADR with none is
taken as accepted (a record in the log is in force unless it says not).
Another ADR is named by a link to its file, or as ``ADR-0012``, ``ADR 12``
or ``#12`` (:func:`resolve`). Pure but for :func:`adr_folders` (it looks at
the folders and reads ``.adr-dir``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ctxgraph.sources.notes import clip

ADR_DIRS = (
    "doc/adr", "docs/adr", "doc/adrs", "docs/adrs", "adr", "adrs", "doc/decisions", "docs/decisions",
    "doc/architecture/decisions", "docs/architecture/decisions", "architecture/decisions",
    "doc/architecture/adr", "docs/architecture/adr", "docs/architecture-decisions", "doc/architecture-decisions",
    "docs/design/decisions", "decisions",
)
ADR_SUFFIXES = frozenset({".md", ".markdown", ".rst"})
#: An ADR's title is cut to about this many characters.
MAX_TITLE_CHARS = 200
_NOT_ADR = re.compile(r"^(readme|index|template|adr-template|_template|toc|summary)\b", re.I)
#: Statuses, and the words that say each (the first word of a status decides).
STATUSES: dict[str, tuple[str, ...]] = {
    "accepted": ("accepted", "approved", "adopted", "agreed", "decided", "done", "implemented", "active",
                 "final", "amended", "amends", "current"),
    "proposed": ("proposed", "draft", "open", "pending", "review", "suggested", "rfc", "wip", "discussing"),
    "superseded": ("superseded", "replaced", "supersede"),
    "deprecated": ("deprecated", "obsolete", "retired", "withdrawn", "outdated"),
    "rejected": ("rejected", "declined", "abandoned", "refused"),
}
#: The statuses of a decision in force.
IN_FORCE = frozenset({"accepted", "proposed"})
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_RST_TITLE = re.compile(r"^(=+|-+|~+|\*+)\s*$")
_NUMBERED = re.compile(r"^(?:adr|rfc|decision)?[\s_-]*(\d+)\s*[.:\-\u2013\u2014)]?\s+(.+)$", re.I)
_FIELD = re.compile(r"^[\s*+-]*(?:\*\*)?(status|date)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(.*?)\s*$", re.I)
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)[^)]*\)")
_ADR_NUMBER = re.compile(r"\b(?:adr|rfc|decision)[\s#_-]*0*(\d+)\b|#0*(\d+)\b|\b0*(\d{1,4})\b", re.I)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_CHOSEN = re.compile(r"chosen option\s*:?\s*(.+)", re.I | re.S)


@dataclass(frozen=True)
class Adr:
    """One ADR as its file says it (``supersedes``/``superseded_by``: the
    references as written, resolved by :func:`resolve`)."""

    path: str
    number: int | None
    title: str
    status: str
    date: str | None
    decision: str
    context: str
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()

    @property
    def in_force(self) -> bool:
        return self.status in IN_FORCE


def adr_folders(root: Path, extra: Iterable[str] = ()) -> list[str]:
    """The ADR folders under ``root`` (relative, with forward slashes) that
    exist: :data:`ADR_DIRS`, the one ``.adr-dir`` names, and ``extra``."""
    wanted = list(ADR_DIRS)
    try:
        named = (root / ".adr-dir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        named = ""
    wanted += [named] if named else []
    wanted += list(extra)
    found: list[str] = []
    for rel in wanted:
        clean = PurePosixPath(rel.strip().strip("/")).as_posix()
        if clean in ("", ".") or clean.startswith("../") or clean.startswith("/"):
            continue
        if (root / clean).is_dir() and clean not in found:
            found.append(clean)
    return found


def is_adr_file(path: str, folders: Sequence[str]) -> bool:
    """Whether ``path`` (relative) is an ADR in one of ``folders``."""
    p = PurePosixPath(path)
    if p.suffix.lower() not in ADR_SUFFIXES or _NOT_ADR.match(p.name):
        return False
    return any(path.startswith(f + "/") for f in folders)


def status_of(text: str) -> str:
    """The status a status text says (:data:`STATUSES`); ``accepted`` when it says none."""
    low = text.lower()
    if re.search(r"superseded\s+by|replaced\s+by", low):
        return "superseded"
    plain = "\n".join(line for line in _LINK.sub(" ", low).splitlines()
                      if not re.search(r"\b(supersedes|amends|amended by)\b", line))
    for word in re.findall(r"[a-z]+", plain):
        for status, words in STATUSES.items():
            if word in words:
                return status
    return "accepted"


def parse_adr(path: str, text: str) -> Adr | None:
    """The ADR ``text`` holds (``path`` relative to the root); None when it has no title."""
    lines = text.splitlines()
    front, body = _front_matter(lines)
    title, number, sections, fields = _structure(body)
    if not title:
        return None
    if number is None:
        m = re.match(r"^(\d+)", PurePosixPath(path).name)
        number = int(m.group(1)) if m else None
    status_text = front.get("status") or sections.get("status") or fields.get("status") or ""
    date = _iso_date(front.get("date") or fields.get("date") or _date_line(sections.get("status", "")))
    decision = _decision(sections)
    context = next((v for k, v in sections.items() if k.startswith("context")), "")
    return Adr(path=path, number=number, title=title, status=status_of(status_text), date=date,
               decision=decision, context=clip(context, 600),
               supersedes=tuple(_refs(status_text, "supersedes")),
               superseded_by=tuple(_refs(status_text, "superseded by")))


def _front_matter(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    if not lines or lines[0].strip() != "---":
        return {}, lines
    for i in range(1, min(len(lines), 100)):
        if lines[i].strip() in ("---", "..."):
            found = {}
            for line in lines[1:i]:
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() in ("status", "date"):
                    found[key.strip().lower()] = value.strip().strip("\"'")
            return found, lines[i + 1:]
    return {}, lines


def _structure(lines: list[str]) -> tuple[str, int | None, dict[str, str], dict[str, str]]:
    """(title, its number, the text of each section by lower-case heading, the
    ``Status:``/``Date:`` lines before the first section)."""
    title, number = "", None
    sections: dict[str, list[str]] = {}
    fields: dict[str, str] = {}
    current: list[str] | None = None
    for i, line in enumerate(lines):
        m = _HEADING.match(line)
        underline = i + 1 < len(lines) and line.strip() and _RST_TITLE.match(lines[i + 1])
        heading = m.group(2) if m else (line.strip() if underline else None)
        level = len(m.group(1)) if m else (1 if underline and lines[i + 1].startswith("=") else 2)
        if heading is not None and not title and level == 1:
            title, number = _title(heading)
            current = None
            continue
        if heading is not None and level <= 3 and title:
            key = re.sub(r"\s+", " ", heading.strip().lower())
            current = sections.setdefault(key, [])
            continue
        if _RST_TITLE.match(line) and i and lines[i - 1].strip():
            continue
        f = _FIELD.match(line)
        if f and current is None and title and f.group(1).lower() not in fields:
            fields[f.group(1).lower()] = f.group(2)
        if current is not None:
            current.append(line)
    return title, number, {k: "\n".join(v).strip() for k, v in sections.items()}, fields


def _title(heading: str) -> tuple[str, int | None]:
    heading = heading.strip().strip("*_`")
    m = _NUMBERED.match(heading)
    if m:
        return clip(m.group(2), MAX_TITLE_CHARS), int(m.group(1))
    return clip(heading, MAX_TITLE_CHARS), None


def _decision(sections: Mapping[str, str]) -> str:
    for key in ("decision outcome", "decision"):
        text = sections.get(key)
        if text:
            chosen = _CHOSEN.search(text)
            return clip(chosen.group(0).split("\n\n")[0] if chosen else text, 400)
    return ""


def _date_line(text: str) -> str | None:
    m = _DATE.search(text)
    return m.group(0) if m else None


def _iso_date(value: str | None) -> str | None:
    m = _DATE.search(value or "")
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}T00:00:00Z" if m else None


def _refs(status_text: str, phrase: str) -> list[str]:
    """The ADRs a status text names after ``phrase`` (``supersedes``,
    ``superseded by``), each as a link target or a number, on the phrase's lines."""
    found: list[str] = []
    for line in status_text.splitlines():
        low = line.lower()
        at = low.find(phrase)
        if at < 0 or (phrase == "supersedes" and "superseded" in low[:at + 12]):
            continue
        rest = line[at + len(phrase):]
        links = _LINK.findall(rest)
        if links:
            found += [target for _, target in links]
            continue
        found += [next(g for g in m.groups() if g) for m in _ADR_NUMBER.finditer(rest)]
    return found


def resolve(ref: str, adrs: Sequence[Adr], source: Adr) -> Adr | None:
    """The ADR among ``adrs`` that ``ref`` (a link target from ``source``'s
    file, or a number) names; None when none does (or only ``source``)."""
    if ref.isdigit():
        n = int(ref)
        return next((a for a in adrs if a.number == n and a is not source), None)
    target = PurePosixPath(ref.split("#", 1)[0])
    joined = PurePosixPath(source.path).parent / target
    parts: list[str] = []
    for part in joined.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    full = "/".join(parts)
    found = next((a for a in adrs if a.path == full and a is not source), None)
    if found is None:
        found = next((a for a in adrs if PurePosixPath(a.path).name == target.name and a is not source), None)
    if found is None and (m := re.match(r"^(\d+)", target.name)):
        return resolve(str(int(m.group(1))), adrs, source)
    return found


def supersessions(adrs: Sequence[Adr]) -> list[tuple[Adr, Adr]]:
    """(newer, older) pairs: an ADR that supersedes another, as either says it."""
    pairs: dict[tuple[str, str], tuple[Adr, Adr]] = {}
    for adr in adrs:
        for ref in adr.supersedes:
            old = resolve(ref, adrs, adr)
            if old is not None:
                pairs[(adr.path, old.path)] = (adr, old)
        for ref in adr.superseded_by:
            new = resolve(ref, adrs, adr)
            if new is not None:
                pairs[(new.path, adr.path)] = (new, adr)
    return [pairs[k] for k in sorted(pairs)]


__all__ = ["ADR_DIRS", "IN_FORCE", "STATUSES", "Adr", "adr_folders", "is_adr_file", "parse_adr", "resolve",
           "status_of", "supersessions"]
