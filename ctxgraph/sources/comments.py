"""The comments of a source file, by language, with their lines: what the code
notes (:mod:`ctxgraph.sources.notes`) are read from. Pure: text in, comments out.

Which comments a file has is decided by its name (:func:`syntax`):

- ``#`` — Python (read with :mod:`tokenize`, so a ``#`` inside a string is
  no comment; a file tokenize refuses is read line by line), shell, Ruby,
  R, Julia, Elixir, Terraform, YAML, TOML, INI files, Dockerfiles, Makefiles;
- ``//`` and ``/* */`` — C and its family (C++, C#, Java, Kotlin, Scala,
  Swift, Go, Rust), JavaScript and TypeScript, PHP (also ``#``), protobuf,
  Cypher, SCSS, Vue and Svelte; ``/* */`` alone in CSS;
- ``--`` — SQL (also ``/* */``), Lua and Haskell.

Line by line, a comment leader inside a quoted string (``'``, ``"``, a
backquote; escapes honoured, a string ends with its line) is not one. A
comment is *full* when nothing but blanks comes before it on its line: runs
of full comments on consecutive lines are what a note spans
(:func:`runs`); a comment after code is a run of its own.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass
from pathlib import PurePosixPath

HASH = frozenset({".py", ".pyi", ".sh", ".bash", ".rb", ".r", ".jl", ".ex", ".exs", ".tf", ".yaml", ".yml",
                  ".toml", ".cfg", ".ini", ".graphql", ".php"})
SLASH = frozenset({".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".go", ".rs", ".java", ".kt", ".c", ".h", ".cc",
                   ".cpp", ".hpp", ".cs", ".swift", ".scala", ".php", ".proto", ".cypher", ".scss", ".vue",
                   ".svelte", ".tf"})
BLOCK = SLASH | {".css", ".sql"}
DASH = frozenset({".sql", ".lua", ".hs"})
HASH_NAMES = frozenset({"Dockerfile", "Makefile", "Justfile"})


@dataclass(frozen=True)
class Syntax:
    """A language's comment leaders: line comments, and whether ``/* */`` blocks count."""

    line: tuple[str, ...]
    block: bool
    python: bool = False


@dataclass(frozen=True)
class Comment:
    """One line of a comment: its 1-based line, its text without the leader
    (a block comment's leading ``*`` taken off), whether nothing but blanks
    comes before it on its line (``full``), and its column."""

    line: int
    text: str
    full: bool
    column: int


def syntax(path: str) -> Syntax | None:
    """The comment syntax of a file by its name; None for a file with none read here."""
    name = PurePosixPath(path).name
    suffix = PurePosixPath(name).suffix.lower()
    leaders: list[str] = []
    if suffix in HASH or name in HASH_NAMES:
        leaders.append("#")
    if suffix in SLASH:
        leaders.append("//")
    if suffix in DASH:
        leaders.append("--")
    if not leaders and suffix not in BLOCK:
        return None
    return Syntax(line=tuple(leaders), block=suffix in BLOCK, python=suffix in (".py", ".pyi"))


def comments(text: str, lang: Syntax) -> list[Comment]:
    """Every comment line of ``text`` in order."""
    if lang.python:
        found = _python_comments(text)
        if found is not None:
            return found
    return _scan(text, lang)


def _python_comments(text: str) -> list[Comment] | None:
    """Python's comments as its tokenizer sees them; None when it refuses the text."""
    lines = text.splitlines()
    found: list[Comment] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                before = lines[row - 1][:col] if row - 1 < len(lines) else ""
                found.append(Comment(row, tok.string[1:].lstrip("#").strip(), not before.strip(), col))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return found


def _scan(text: str, lang: Syntax) -> list[Comment]:
    """Comments found line by line (quotes end with their line; block comments span lines)."""
    found: list[Comment] = []
    in_block = False
    block_col = 0
    for number, line in enumerate(text.splitlines(), 1):
        col = 0
        if in_block:
            end = line.find("*/")
            body = line if end < 0 else line[:end]
            found.append(Comment(number, _block_text(body), True, block_col))
            if end < 0:
                continue
            in_block, col = False, end + 2
        while col < len(line):
            start, kind = _leader(line, col, lang)
            if kind is None:
                break
            full = not line[:start].strip()
            if kind == "block":
                end = line.find("*/", start + 2)
                body = line[start + 2:] if end < 0 else line[start + 2:end]
                found.append(Comment(number, _block_text(body), full, start))
                if end < 0:
                    in_block, block_col = True, start
                    break
                col = end + 2
                continue
            found.append(Comment(number, line[start + len(kind):].lstrip(kind[0]).strip(), full, start))
            break
    return found


def _leader(line: str, col: int, lang: Syntax) -> tuple[int, str | None]:
    """(column, leader) of the first comment leader from ``col`` outside a
    quoted string: a line leader, or ``"block"`` for ``/*``; (len, None) when none."""
    quote = ""
    i = col
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif lang.block and line.startswith("/*", i):
            return i, "block"
        else:
            for leader in lang.line:
                if line.startswith(leader, i):
                    return i, leader
        i += 1
    return len(line), None


def _block_text(body: str) -> str:
    text = body.strip()
    if text.startswith("*"):
        text = text.lstrip("*").strip()
    return text


def runs(found: list[Comment]) -> list[list[Comment]]:
    """The comments grouped as a note may span them: full comments on
    consecutive lines at the same column form one run; a comment after code
    is a run of its own."""
    out: list[list[Comment]] = []
    for c in found:
        last = out[-1][-1] if out else None
        if (c.full and last is not None and last.full and c.line == last.line + 1
                and c.column == out[-1][0].column):
            out[-1].append(c)
        else:
            out.append([c])
    return out


__all__ = ["Comment", "Syntax", "comments", "runs", "syntax"]
