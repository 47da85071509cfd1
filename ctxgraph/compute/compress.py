"""Rule-based compression tiers (Phase 4 design): no model calls, deterministic.

- ``structural``: code keeps its skeleton — signatures and docstrings, bodies
  dropped (Python parsed with :mod:`ast`; other text falls back to keeping
  its non-indented lines).
- ``summarizable``: headings, the first paragraph and key lines (lines that
  say must / never / always / do not / warning / important, and bullets
  that start with bold text).
- ``reference``: the path (or id), the size and the first line only.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from enum import StrEnum


class Policy(StrEnum):
    """How far a content block may be compressed."""

    EXACT = "exact"
    STRUCTURAL = "structural"
    SUMMARIZABLE = "summarizable"
    REFERENCE = "reference"


class Level(StrEnum):
    """How a block is shown: in full, as its skeleton, summarized, or as a reference."""

    FULL = "full"
    STRUCTURAL = "structural"
    SUMMARY = "summary"
    REFERENCE = "reference"


#: The levels a block may go through, best first (Phase 4's degradation order).
LADDER: dict[Policy, tuple[Level, ...]] = {
    Policy.EXACT: (Level.FULL,),
    Policy.STRUCTURAL: (Level.STRUCTURAL, Level.SUMMARY, Level.REFERENCE),
    Policy.SUMMARIZABLE: (Level.FULL, Level.SUMMARY, Level.REFERENCE),
    Policy.REFERENCE: (Level.REFERENCE,),
}

_KEY_LINE = re.compile(r"\b(must|never|always|do not|don't|warning|important|note:)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str, limit: int = 120) -> str:
    """The first sentence of ``text`` (cut at ``limit`` characters with an ellipsis)."""
    flat = " ".join(text.split())
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def summarize_text(text: str) -> str:
    """Headings, the first paragraph and key lines of a Markdown or plain text."""
    lines = text.strip().splitlines()
    if len(lines) <= 1:
        return first_sentence(text)
    out: list[str] = []
    first_para_done = False
    in_para = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#"):
            out.append(stripped)
            continue
        if not stripped:
            if in_para:
                first_para_done = True
            in_para = False
            continue
        if not first_para_done:
            out.append(stripped)
            in_para = True
        elif _KEY_LINE.search(stripped) or re.match(r"[-*]\s+\*\*", stripped):
            out.append(stripped)
    return "\n".join(out)


def structural(source: str) -> str:
    """Signatures and docstrings of Python code, bodies replaced by ``...``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return "\n".join(line for line in source.splitlines() if line and not line[0].isspace())
    lines = source.splitlines()
    out: list[str] = []

    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

    def visit(nodes: Sequence[ast.stmt], depth: int) -> None:
        pad = "    " * depth
        for node in nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for deco in node.decorator_list:
                    out.append(pad + "@" + ast.unparse(deco))
                body_start = node.body[0].lineno
                header = lines[node.lineno - 1 : body_start - 1] or [lines[node.lineno - 1]]
                # the signature, possibly over several lines (up to the body)
                sig = [h for h in header if h.strip()]
                if not sig or not sig[-1].rstrip().endswith(":"):
                    sig = [lines[node.lineno - 1]]
                out.extend(s.rstrip() for s in sig)
                doc = ast.get_docstring(node, clean=False)
                if doc is not None:
                    out.append(pad + '    """' + doc.strip() + '"""')
                if isinstance(node, ast.ClassDef):
                    inner = [n for n in node.body if isinstance(n, defs)]
                    if inner:
                        visit(inner, depth + 1)
                    elif doc is None:
                        out.append(pad + "    ...")
                else:
                    out.append(pad + "    ...")
            elif isinstance(node, ast.Import | ast.ImportFrom) or (
                depth == 0 and isinstance(node, ast.Assign | ast.AnnAssign)
            ):
                out.append(pad + ast.unparse(node))
    module_doc = ast.get_docstring(tree, clean=False)
    if module_doc is not None:
        out.append('"""' + module_doc.strip() + '"""')
    visit(tree.body, 0)
    return "\n".join(out)


def reference(text: str, name: str) -> str:
    """``name`` with the size and the first line of ``text``."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return f"{name} ({len(text.encode('utf-8')):,} bytes): {first_sentence(first, 80)}"
