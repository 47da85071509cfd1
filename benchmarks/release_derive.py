"""Evaluation sets from two released versions of a project: the pure part
(no network, no files): reading a changelog, finding the files its entries
concern, and turning two source trees and two changelogs into the rows of
an evaluation set (the format of ``../shared/eval``: docs/evaluation.md).

How a set is derived (``benchmarks/release_sets.py`` fetches the sources):

- **Trees.** The package's files of each release's sdist, under their
  repository paths (``src/jinja2/ext.py``), Python files only.
- **Changelog entries.** The changelog the sdist ships is split into
  sections, one per version heading (RST underlined, or Markdown ``#``), each
  with its date (the heading's or a "Released ..." line's) and its top-level
  bullets, one entry each (continuation lines and sub-bullets included).
  Issue and pull-request references are left out of the entry's text.
- **Files an entry concerns.** The identifiers it names — RST roles
  (``:meth:`Environment.get_template```), double or single backquotes, and
  bare dotted names starting with the package's name — are looked up in an
  index of the tree's modules, top-level definitions (functions, classes,
  assigned names) and class members (:class:`SymbolIndex`); then its plain
  words written like identifiers (``HTTPSConnectionPool``) or equal to a
  module's last name ("the sandbox"). A name defined in more than
  :data:`MAX_FILES` files says nothing and is dropped; an entry naming
  nothing found is left out of the set. Rows carry their ``version`` (an
  extra field the set's readers ignore).
- **History** (completed tasks with handoffs): the old release's changelog
  entries of versions up to the old one, each looked up in the *old* tree,
  dated by its section, oldest first.
- **Queries**: the new release's changelog entries of versions after the old
  one (and not listed in the old changelog), looked up in the *new* tree:
  their ``gold_files``.
- **Context map**: the new tree's files (the snapshot), each with its
  module's first docstring line.

Limits: an entry's files are the files *defining what it names*, not the
files its commit changed (an entry naming nothing — "Drop Python 2" — is
lost; one naming a class changed through a helper elsewhere points at the
class); history entries are mapped onto the old release's tree, not onto the
tree of their own time; a query names the identifiers its gold files were
found by, so recall is easier than on commit messages. What the sets are for
is the files a context names that are gone from the new tree: those come
from the old tree, as a project's real handoffs would.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from packaging.version import InvalidVersion, Version

#: A name defined in more files than this says nothing about where an entry's work was.
MAX_FILES = 3
#: An entry's name (its first sentence) is cut to about this many characters.
NAME_CHARS = 120

_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*(?:(?:a|b|rc|\.dev|\.post)\d*)?)(?![\w.]*\w)")
_UNDERLINE = re.compile(r"^([=\-~^+*#`'\"])\1{2,}\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+\.)\s+(.*)$")
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,})\.?,?\s+(\d{4})")
_MONTH_DAY = re.compile(r"\b([A-Za-z]{3,})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})")

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|exc|data|obj|const|ref)?:`~?([^`<]+?)(?:\s*<([^>]+)>)?`")
_LITERAL = re.compile(r"``([^`]+)``")
_TICK = re.compile(r"(?<![`:\w])`([^`<]+)`(?![`_])")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_ISSUE_ROLE = re.compile(r":(?:issue|pr|user|bug|ghissue|gh)s?:`[^`]*`")
_RST_LINK = re.compile(r"`([^`<]*?)\s*<[^>]+>`__?")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_REFS = re.compile(r"\(\s*(?:(?:pull|pr|issue|issues|gh|see|thanks)?\s*#?\d+[\s,;]*(?:and\s+)?)+\)", re.I)
_LEAD_REF = re.compile(r"^\s*(?:#\d+[,\s]*)+:?\s*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENTIFIER = re.compile(r"[a-z][A-Z]|[A-Z][a-z0-9]+[A-Z]|\w_\w")
_ANY_ROLE = re.compile(r":(?:py:)?\w+:`~?([^`<]+?)(?:\s*<[^>]+>)?`")


@dataclass(frozen=True)
class Entry:
    """One changelog bullet: its raw text (references found from it) and
    its text for people (issue references left out)."""

    raw: str

    @property
    def text(self) -> str:
        return clean(self.raw)

    @property
    def name(self) -> str:
        return first_sentence(self.text)


@dataclass
class Section:
    """A version's part of a changelog: its version, date and entries (in the changelog's order)."""

    version: Version
    released: date | None
    entries: list[Entry] = field(default_factory=list)


def _day(year: str, month: str, day: str) -> date | None:
    number = int(month) if month.isdigit() else _MONTHS.get(month[:3].lower(), 0)
    try:
        return date(int(year), number, int(day))
    except ValueError:
        return None


def parse_date(text: str) -> date | None:
    """The first date in ``text`` (``2021-05-11``, ``17th June, 2021``, ``March 12th 2010``)."""
    found: list[tuple[int, date]] = []
    for pattern, order in ((_ISO_DATE, (1, 2, 3)), (_DAY_MONTH, (3, 2, 1)), (_MONTH_DAY, (3, 1, 2))):
        for m in pattern.finditer(text):
            day = _day(m[order[0]], m[order[1]], m[order[2]])
            if day is not None:
                found.append((m.start(), day))
    return min(found, key=lambda f: f[0])[1] if found else None


def version_of(heading: str) -> Version | None:
    """The version a heading names ("Version 3.0.0", "pluggy 1.0.0 (2021-08-25)", "0.18.2 (17th June, 2021)")."""
    for m in _VERSION.finditer(heading):
        try:
            return Version(m[1])
        except InvalidVersion:
            continue
    return None


def _headings(lines: list[str]) -> dict[int, tuple[str, int]]:
    """Line number -> (heading text, number of lines it takes)."""
    out: dict[int, tuple[str, int]] = {}
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("#") and not _UNDERLINE.match(stripped):
            out[i] = (stripped.lstrip("#").strip(), 1)
        elif (stripped and not _UNDERLINE.match(stripped) and not _BULLET.match(line) and not line[:1].isspace()
              and i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1].strip())):
            out[i] = (stripped, 2)
    return out


def parse_changelog(text: str) -> list[Section]:
    """The changelog's version sections, in the file's order (see the module's text)."""
    lines = text.replace("\r\n", "\n").split("\n")
    heads = _headings(lines)
    sections: list[Section] = []
    current: Section | None = None
    body: list[str] = []

    def close() -> None:
        if current is not None:
            sections.append(current)
            if current.released is None:
                current.released = parse_date("\n".join(body[:6]))
            current.entries.extend(_entries(body))

    i = 0
    while i < len(lines):
        if i in heads:
            heading, size = heads[i]
            version = version_of(heading)
            if version is not None:
                close()
                current, body = Section(version, parse_date(heading)), []
                i += size
                continue
            body.append("")  # a sub-heading ("Features", "### Fixed") ends the entry before it
            i += size
            continue
        body.append(lines[i])
        i += 1
    close()
    return sections


def _entries(body: list[str]) -> list[Entry]:
    """The top-level bullets of a section's body, each with its continuation."""
    indents = [len(m[1]) for line in body if (m := _BULLET.match(line))]
    if not indents:
        return []
    top = min(indents)
    out: list[list[str]] = []
    current: list[str] | None = None
    for line in body:
        bullet = _BULLET.match(line)
        if bullet and len(bullet[1]) <= top:
            current = [bullet[2]]
            out.append(current)
        elif not line.strip():
            if current is not None:
                current.append("")
        elif current is not None and (line[:1].isspace() or bullet):
            current.append(line.strip())
        else:
            current = None  # a paragraph of the section, not part of a bullet
    return [Entry("\n".join(e).strip()) for e in out if "".join(e).strip()]


def clean(raw: str) -> str:
    """An entry's text without issue and pull-request references, roles as
    their target, on one line."""
    text = _ISSUE_ROLE.sub("", raw)
    text = _RST_LINK.sub(lambda m: m[1], text)
    text = _MD_LINK.sub(lambda m: m[1], text)
    text = _ANY_ROLE.sub(lambda m: f"``{m[1]}``", text)
    text = _REFS.sub("", text)
    text = _LEAD_REF.sub("", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([.,;:])", r"\1", text)
    return re.sub(r"\(\s*\)", "", text).strip(" ,;")


def first_sentence(text: str) -> str:
    m = re.search(r"(?<=[^.\s][.!?])\s", text)
    head = text[:m.start()] if m else text
    if len(head) <= NAME_CHARS:
        return head
    return head[:NAME_CHARS].rsplit(" ", 1)[0] + " ..."


def references(raw: str, package: str) -> list[str]:
    """The dotted names an entry mentions, in order of appearance, each once."""
    found: list[tuple[int, str]] = []
    for m in _ROLE.finditer(raw):
        found.append((m.start(), m[2] or m[1]))
    for pattern in (_LITERAL, _TICK):
        for m in pattern.finditer(raw):
            found.append((m.start(), m[1]))
    for m in re.finditer(rf"(?<![\w.`]){re.escape(package)}(?:\.[A-Za-z_]\w*)+", raw):
        found.append((m.start(), m[0]))
    out: dict[str, None] = {}
    for _, ref in sorted(found, key=lambda f: f[0]):
        name = _DOTTED.match(ref.strip().lstrip("~.!"))
        if name and len(name[0]) >= 3:
            out[name[0]] = None
    return list(out)


def module_of(path: str, prefix: str, package: str) -> str | None:
    """``src/jinja2/ext.py`` -> ``jinja2.ext`` (``__init__.py``: the package itself)."""
    if not (path.startswith(prefix) and path.endswith(".py")):
        return None
    parts = [package, *path[len(prefix):-3].split("/")]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _definitions(source: str) -> tuple[set[str], set[tuple[str, str]]]:
    """(top-level names, (class, member) pairs) a module defines; a module
    that does not parse is read line by line."""
    top: set[str] = set()
    members: set[tuple[str, str]] = set()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        klass = None
        for line in source.splitlines():
            m = re.match(r"^(\s*)(?:async\s+)?(def|class)\s+(\w+)", line)
            if not m:
                continue
            if not m[1]:
                top.add(m[3])
                klass = m[3] if m[2] == "class" else None
            elif klass is not None:
                members.add((klass, m[3]))
        return top, members
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            top.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            top.update(t.id for t in targets if isinstance(t, ast.Name))
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    members.add((node.name, item.name))
                elif isinstance(item, ast.Assign | ast.AnnAssign):
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    members.update((node.name, t.id) for t in targets if isinstance(t, ast.Name))
    return top, members


def first_doc_line(source: str) -> str:
    try:
        doc = ast.get_docstring(ast.parse(source)) or ""
    except (SyntaxError, ValueError):
        return ""
    return doc.strip().split("\n", 1)[0].strip()


class SymbolIndex:
    """Where a tree's modules, top-level names and class members are defined."""

    def __init__(self, tree: Mapping[str, str], prefix: str, package: str) -> None:
        self.package = package
        self.modules: dict[str, str] = {}
        self.top: dict[str, set[str]] = {}
        self.members: dict[tuple[str, str], set[str]] = {}
        self.member_names: dict[str, set[str]] = {}
        self.defines: dict[str, set[str]] = {}
        self.stems: dict[str, set[str]] = {}
        for path in sorted(tree):
            module = module_of(path, prefix, package)
            if module is None:
                continue
            self.modules[module] = path
            if not path.endswith("/__init__.py"):
                self.stems.setdefault(module.rsplit(".", 1)[-1], set()).add(path)
            top, members = _definitions(tree[path])
            self.defines[path] = top
            for name in top:
                self.top.setdefault(name, set()).add(path)
            for pair in members:
                self.members.setdefault(pair, set()).add(path)
                self.member_names.setdefault(pair[1], set()).add(path)

    def resolve(self, ref: str) -> set[str]:
        """The files defining what ``ref`` names (empty: unknown, or too many to say)."""
        parts = ref.split(".")
        if parts[0] != self.package and f"{self.package}.{ref}" in self.modules:
            parts = [self.package, *parts]
        if parts[0] == self.package:
            for cut in range(len(parts), 0, -1):
                module = ".".join(parts[:cut])
                if module in self.modules:
                    path, rest = self.modules[module], parts[cut:]
                    if not rest or rest[0] in self.defines.get(path, ()):
                        return {path}
                    parts = rest
                    break
            else:
                return set()
        found = self._names(parts)
        return found if len(found) <= MAX_FILES else set()

    def _names(self, parts: list[str]) -> set[str]:
        if len(parts) >= 2:
            pair = (parts[-2], parts[-1])
            if pair in self.members:
                return self.members[pair]
            if parts[-2] in self.top and parts[-2][:1].isupper():
                return self.top[parts[-2]]
            return set()
        name = parts[0]
        return self.top.get(name) or self.member_names.get(name, set())

    def words(self, text: str) -> list[str]:
        """The files of the plain words of ``text`` that name a module
        ("the ``sandbox``", "the lexer": its last part, 4 letters or more) or a
        definition written like an identifier (``HTTPSConnectionPool``,
        ``call_historic``), in order."""
        out: dict[str, None] = {}
        for word in _WORD.findall(text):
            found = self.stems.get(word, set()) if len(word) >= 4 and word.islower() else set()
            if not found and _IDENTIFIER.search(word):
                found = self.top.get(word, set())
            if 0 < len(found) <= MAX_FILES:
                out.update(dict.fromkeys(sorted(found)))
        return list(out)

    def files_for(self, entry: Entry) -> list[str]:
        """The files an entry concerns: those of the names it quotes, then
        those of its plain words (:meth:`words`), in order."""
        out: dict[str, None] = {}
        for ref in references(entry.raw, self.package):
            out.update(dict.fromkeys(sorted(self.resolve(ref))))
        out.update(dict.fromkeys(self.words(entry.text)))
        return list(out)


@dataclass(frozen=True)
class Release:
    """One release's sources as the builder read them."""

    version: str
    tree: Mapping[str, str]  # repository path -> text, the package's Python files
    changelog: str


def _stamp(day: date | None) -> str | None:
    return f"{day.isoformat()}T12:00:00+00:00" if day is not None else None


def _fill_dates(sections: list[Section]) -> None:
    """An undated section takes the date of the nearest older dated one."""
    ordered = sorted(sections, key=lambda s: s.version)
    last: date | None = None
    for s in ordered:
        if s.released is None:
            s.released = last
        last = s.released


def build_rows(old: Release, new: Release, *, prefix: str, package: str) -> dict[str, Any]:
    """The set's rows (``history``, ``context_map``, ``queries``) and what
    was dropped on the way (``stats``) from two releases."""
    old_v, new_v = Version(old.version), Version(new.version)
    old_sections = [s for s in parse_changelog(old.changelog) if s.version <= old_v]
    new_sections = parse_changelog(new.changelog)
    _fill_dates(old_sections)
    known = {s.version for s in old_sections}
    query_sections = [s for s in new_sections if old_v < s.version <= new_v and s.version not in known]
    old_index = SymbolIndex(old.tree, prefix, package)
    new_index = SymbolIndex(new.tree, prefix, package)
    history: list[dict[str, Any]] = []
    dropped_history = 0
    for section in sorted(old_sections, key=lambda s: s.version):
        for entry in section.entries:
            files = old_index.files_for(entry)
            if not files or not entry.text:
                dropped_history += 1
                continue
            row: dict[str, Any] = {
                "id": f"h-{len(history) + 1:04d}", "name": entry.name, "objective": entry.text,
                "type": "change", "status": "completed", "version": str(section.version),
                "handoff": {"summary": entry.name, "files_modified": [{"path": p} for p in files]},
            }
            stamp = _stamp(section.released)
            if stamp:
                row["completed_at"] = stamp
            history.append(row)
    queries: list[dict[str, Any]] = []
    dropped_queries = 0
    for section in sorted(query_sections, key=lambda s: s.version):
        for entry in section.entries:
            gold = new_index.files_for(entry)
            if not gold or not entry.text:
                dropped_queries += 1
                continue
            queries.append({"id": f"q-{len(queries) + 1:04d}", "name": entry.name, "objective": entry.text,
                            "type": "change", "complexity": "normal", "version": str(section.version),
                            "gold_files": gold})
    context_map = [{"component": path.rsplit("/", 1)[-1][:-3], "location": path,
                    "notes": first_doc_line(new.tree[path])}
                   for path in sorted(new.tree) if module_of(path, prefix, package) is not None]
    old_files, new_files = set(old.tree), set(new.tree)
    named = {f["path"] for h in history for f in h["handoff"]["files_modified"]}
    return {
        "history": history, "context_map": context_map, "queries": queries,
        "stats": {
            "old_files": len(old_files), "new_files": len(new_files),
            "gone": sorted(old_files - new_files), "added": sorted(new_files - old_files),
            "history": len(history), "history_dropped": dropped_history,
            "history_naming_gone": sum(
                1 for h in history if any(f["path"] not in new_files for f in h["handoff"]["files_modified"])),
            "gone_named": sorted(named - new_files),
            "queries": len(queries), "queries_dropped": dropped_queries,
            "query_versions": [str(s.version) for s in sorted(query_sections, key=lambda s: s.version)],
        },
    }
