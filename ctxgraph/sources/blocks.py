"""Admonitions in prose: reStructuredText directives (``.. warning::``), the
sections of a Python docstring (Google's ``Note:``, numpy's ``Warnings`` over
a line of dashes) and Markdown's admonitions (GitHub's ``> [!WARNING]``,
mkdocs' ``!!! warning``, MyST's ```` ```{warning} ```` fences). Pure: lines
in, blocks out; :mod:`ctxgraph.sources.notes` decides which are knowledge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

#: The admonition names read, and the marker each stands for.
ADMONITIONS: dict[str, str] = {
    "note": "NOTE", "notes": "NOTE", "warning": "WARNING", "warnings": "WARNING", "caution": "CAUTION",
    "danger": "DANGER", "attention": "ATTENTION", "important": "IMPORTANT", "error": "DANGER",
    "bug": "BUG",
}
_NAMES = "|".join(sorted(ADMONITIONS, key=len, reverse=True))
_RST = re.compile(rf"^(?P<indent>\s*)\.\.\s+(?P<name>{_NAMES}|admonition)::\s*(?P<title>.*)$", re.I)
_OPTION = re.compile(r"^\s*:[\w-]+:")
_GOOGLE = re.compile(rf"^(?P<indent>\s*)(?P<name>{_NAMES}):\s*(?P<title>.*)$", re.I)
_NUMPY = re.compile(rf"^(?P<indent>\s*)(?P<name>{_NAMES})\s*$", re.I)
_DASHES = re.compile(r"^\s*-{3,}\s*$")
_ALERT = re.compile(rf"^(?P<indent>\s*)>\s*\[!(?P<name>{_NAMES})\]\s*(?P<title>.*)$", re.I)
_QUOTED = re.compile(r"^\s*>\s?(?P<text>.*)$")
_MKDOCS = re.compile(rf"^(?P<indent>\s*)(?:!!!|\?\?\?\+?)\s*(?P<name>{_NAMES})\b\s*(?P<title>.*)$", re.I)
_MYST = re.compile(
    rf"^(?P<indent>\s*)(?P<fence>`{{3,}}|:{{3,}})\s*\{{(?P<name>{_NAMES}|admonition)\}}\s*(?P<title>.*)$", re.I)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_BOLD = re.compile(rf"^(?P<indent>\s*)\*\*(?P<name>{_NAMES})\s*:?\*\*\s*:?\s*(?P<title>.*)$", re.I)


@dataclass(frozen=True)
class Block:
    """An admonition: its name as written (``warning``, ``admonition``...), its
    title (a directive's argument, the text on a section's first line), its
    body's lines, and the 1-based lines it spans."""

    name: str
    title: str
    body: tuple[str, ...]
    start: int
    end: int

    @property
    def marker(self) -> str:
        """The marker it stands for; a generic admonition is a note unless its
        title names a stronger one (``.. admonition:: Warning: ...``)."""
        found = ADMONITIONS.get(self.name.lower())
        if found is not None:
            return found
        words = re.findall(r"[a-z]+", self.title.lower())
        return next((ADMONITIONS[w] for w in words if w in ADMONITIONS and ADMONITIONS[w] != "NOTE"), "NOTE")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indented(lines: Sequence[str], start: int, indent: int) -> int:
    """The index past the lines from ``start`` that are blank or indented
    deeper than ``indent`` (trailing blank lines left out)."""
    end = start
    i = start
    while i < len(lines):
        line = lines[i]
        if line.strip():
            if _indent(line) <= indent:
                break
            end = i + 1
        i += 1
    return end


def _paragraph(lines: Sequence[str], start: int) -> int:
    """The index past the paragraph going on from ``start`` (up to a blank line)."""
    i = start
    while i < len(lines) and lines[i].strip():
        i += 1
    return i


def _directive_at(lines: Sequence[str], i: int, first: int, docstring: bool) -> Block | None:
    """The directive, **Note:** paragraph or (in a ``docstring``) section that
    starts at ``lines[i]``, if one does."""
    line = lines[i]
    m = _RST.match(line) or _BOLD.match(line)
    if m is None and docstring:
        m = _GOOGLE.match(line)
    if m is not None:
        indent = _indent(line)
        if m.re is _BOLD or (m.re is _GOOGLE and m.group("title").strip()):
            end = max(_paragraph(lines, i + 1), _indented(lines, i + 1, indent))
        else:
            end = _indented(lines, i + 1, indent)
        if end == i + 1 and m.re is _GOOGLE and not m.group("title").strip():
            # ``Note:`` over a blank line and a paragraph at its own indent: that paragraph
            start = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), len(lines))
            if start < len(lines) and _indent(lines[start]) == indent and start - i <= 2:
                end = _paragraph(lines, start)
        body = [b for b in lines[i + 1:end] if not _OPTION.match(b)]
        return Block(m.group("name"), m.group("title").strip(), tuple(body), first + i, first + max(i, end - 1))
    if docstring and (n := _NUMPY.match(line)) and i + 1 < len(lines) and _DASHES.match(lines[i + 1]):
        end = i + 2
        while end < len(lines) and not (end + 1 < len(lines) and lines[end].strip()
                                        and _DASHES.match(lines[end + 1])):
            end += 1
        while end > i + 2 and not lines[end - 1].strip():
            end -= 1
        return Block(n.group("name"), "", tuple(lines[i + 2:end]), first + i, first + max(i + 1, end - 1))
    return None


def rst_blocks(lines: Sequence[str], first: int = 1, *, docstring: bool = False) -> list[Block]:
    """The directives of reStructuredText ``lines`` (the first is line ``first``);
    in a ``docstring`` also its Google and numpy sections."""
    found: list[Block] = []
    i = 0
    while i < len(lines):
        block = _directive_at(lines, i, first, docstring)
        if block is None:
            i += 1
            continue
        found.append(block)
        i = block.end - first + 1
    return found


def markdown_blocks(lines: Sequence[str], first: int = 1) -> list[Block]:
    """The admonitions of Markdown ``lines``: GitHub alerts, mkdocs' ``!!!``,
    MyST's fenced directives, **Note:** paragraphs and reStructuredText
    directives (MyST's ``{eval-rst}``); code fences are skipped."""
    found: list[Block] = []
    i = 0
    fence = ""
    while i < len(lines):
        line = lines[i]
        if fence:
            if line.strip().startswith(fence):
                fence = ""
            i += 1
            continue
        if (m := _MYST.match(line)) is not None:
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(m.group("fence")):
                end += 1
            body = [b for b in lines[i + 1:end] if not _OPTION.match(b)]
            last = first + min(end, len(lines) - 1)
            found.append(Block(m.group("name"), m.group("title").strip(), tuple(body), first + i, last))
            i = end + 1
            continue
        if (f := _FENCE.match(line)) is not None and "{eval-rst}" not in line:
            fence = f.group(1)
            i += 1
            continue
        if (m := _ALERT.match(line)) is not None:
            end = i + 1
            while end < len(lines) and _QUOTED.match(lines[end]) and lines[end].strip() != ">":
                end += 1
            body = [q.group("text") for b in lines[i + 1:end] if (q := _QUOTED.match(b)) is not None]
            found.append(Block(m.group("name"), m.group("title").strip(), tuple(body), first + i, first + end - 1))
            i = end
            continue
        if (m := _MKDOCS.match(line)) is not None:
            end = _indented(lines, i + 1, _indent(line))
            found.append(Block(m.group("name"), m.group("title").strip().strip('"'), tuple(lines[i + 1:end]),
                               first + i, first + max(i, end - 1)))
            i = max(end, i + 1)
            continue
        if (block := _directive_at(lines, i, first, False)) is not None:
            found.append(block)
            i = block.end - first + 1
            continue
        i += 1
    return found


__all__ = ["ADMONITIONS", "Block", "markdown_blocks", "rst_blocks"]
