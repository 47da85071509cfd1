"""Split a file into chunks of about :data:`TARGET_TOKENS` on structural lines. Pure.

- Python: top-level statements (a function or class with its decorators is
  one unit, parsed with :mod:`ast`); a class over the target is split into
  its members; consecutive small units share a chunk.
- Markdown and reStructuredText: sections, each starting at a heading.
- Anything else (or Python that does not parse): runs of lines cut at blank
  lines.

A unit still over :data:`MAX_TOKENS` is cut into line windows. Lines are
1-based and inclusive; every non-blank line of the file is in exactly one
chunk.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ctxgraph.core.tokens import estimate_tokens

TARGET_TOKENS = 500
MAX_TOKENS = 800

_MD_HEADING = re.compile(r"^(#{1,6}\s|\S.*\n(=+|-+|~+|\^+)\s*$)")


@dataclass(frozen=True)
class Chunk:
    start_line: int
    end_line: int
    text: str
    token_estimate: int

    @property
    def text_hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def chunk_file(path: str, text: str) -> list[Chunk]:
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        return []
    lower = path.lower()
    if lower.endswith((".py", ".pyi")):
        spans = _python_spans(text, lines)
    elif lower.endswith((".md", ".markdown", ".rst")):
        spans = _heading_spans(lines)
    else:
        spans = None
    if spans is None:
        spans = _blank_line_spans(lines)
    return list(_pack(lines, _split_large(lines, spans)))


def _tokens(lines: list[str], start: int, end: int) -> int:
    return estimate_tokens("\n".join(lines[start - 1:end]))


def _python_spans(text: str, lines: list[str]) -> list[tuple[int, int]] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    spans: list[tuple[int, int]] = []
    for node in tree.body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        end = node.end_lineno or node.lineno
        if isinstance(node, ast.ClassDef) and _tokens(lines, start, end) > TARGET_TOKENS and node.body:
            first = node.body[0]
            head_end = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))]) - 1
            spans.append((start, max(start, head_end)))
            for member in node.body:
                m_start = min([member.lineno, *(d.lineno for d in getattr(member, "decorator_list", []))])
                spans.append((max(m_start, head_end + 1), member.end_lineno or member.lineno))
        else:
            spans.append((start, end))
    return _cover(spans, len(lines))


def _heading_spans(lines: list[str]) -> list[tuple[int, int]]:
    starts = [1]
    for i in range(1, len(lines)):
        two = lines[i] + ("\n" + lines[i + 1] if i + 1 < len(lines) else "")
        if _MD_HEADING.match(lines[i]) or _MD_HEADING.match(two):
            starts.append(i + 1)
    bounds = sorted(set(starts))
    return [(s, (bounds[k + 1] - 1) if k + 1 < len(bounds) else len(lines)) for k, s in enumerate(bounds)]


def _blank_line_spans(lines: list[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 1
    for i, line in enumerate(lines, start=1):
        if not line.strip() and i > start:
            spans.append((start, i))
            start = i + 1
    if start <= len(lines):
        spans.append((start, len(lines)))
    return spans


def _cover(spans: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """Extend the spans so that they tile lines 1..n (comments and blank lines
    between units go with the unit after them)."""
    out: list[tuple[int, int]] = []
    nxt = 1
    for _start, end in sorted(spans):
        if end < nxt:
            continue
        out.append((nxt, end))
        nxt = end + 1
    if nxt <= n:
        if out:
            out[-1] = (out[-1][0], n)
        else:
            out.append((1, n))
    return out


def _split_large(lines: list[str], spans: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    for start, end in spans:
        if _tokens(lines, start, end) <= MAX_TOKENS:
            yield start, end
            continue
        window_start = start
        for i in range(start, end + 1):
            if _tokens(lines, window_start, i) > TARGET_TOKENS and i > window_start:
                yield window_start, i - 1
                window_start = i
        yield window_start, end


def _pack(lines: list[str], spans: Iterator[tuple[int, int]]) -> Iterator[Chunk]:
    """Merge consecutive spans while the chunk stays within the target."""
    current: tuple[int, int] | None = None
    for start, end in spans:
        if current is not None and _tokens(lines, current[0], end) <= TARGET_TOKENS:
            current = (current[0], end)
            continue
        if current is not None:
            chunk = _make(lines, *current)
            if chunk:
                yield chunk
        current = (start, end)
    if current is not None:
        chunk = _make(lines, *current)
        if chunk:
            yield chunk


def _make(lines: list[str], start: int, end: int) -> Chunk | None:
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    if start > end:
        return None
    text = "\n".join(lines[start - 1:end])
    return Chunk(start, end, text, estimate_tokens(text))
