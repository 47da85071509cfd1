"""Rendering a computed context as Markdown with a Jinja2 template.

The default template ships in ``compute/templates/context.md.j2``; a user's
template (its text, read by the caller) can replace it. Pure: no file IO here.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from ctxgraph.errors import ConfigurationError

if TYPE_CHECKING:
    import jinja2

    from ctxgraph.compute.output import ComputedContext

_BLANK_RUNS = re.compile(r"\n{3,}")

# Markdown escaping. Every value that came from a user, a file, a handoff or a
# commit goes into the template through one of the filters below, so that it
# stays text on its own line: it cannot end the line, open a block the template
# did not (a heading, a list item, a block quote, a fence, an HTML block, a
# table row, a link definition) or close a code span early.

#: What Python's str.splitlines() ends a line at (CommonMark's \n and \r among them).
_LINE_BREAKS = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
#: A start of text that would open a block if the text began a line or a list
#: item's content (text here is already on one line, without leading spaces).
_BLOCK_START = re.compile(
    r"""\#{1,6}(?:\ |$)                 # an ATX heading
      | [>|]                           # a block quote; a table row
      | [-+*](?:\ |$)                  # a bullet list item
      | ([-*_])\ ?(?:\1\ ?){2,}$         # a thematic break
      | (?:=+|-+)\ ?$                   # a setext heading's underline
      | `{3,} | ~{3,}                  # a code fence
      | <[A-Za-z/!?]                   # an HTML block
      | \[\^[^\]]*\]:                   # a footnote (GFM)
      | \[(?:\\.|[^\\\]])+\]:\ ?          # a link reference definition: [label]: destination
        (?:<(?:\\.|[^\\>])*>|[^<\ ]\S*)
        (?:\ (?:"(?:\\.|[^\\"])*"|'(?:\\.|[^\\'])*'|\((?:\\.|[^\\()])*\)))?\ ?$   # "title"
    """,
    re.VERBOSE,
)
_ORDERED_START = re.compile(r"(\d{1,9})([.)])(?=\ |$)")  # an ordered list item
_BACKTICKS = re.compile(r"`+")


def fold(value: object) -> str:
    """Text on one line: every run of white space (line breaks included) one
    space. Safe in the middle of a line (where no block can start); where a
    text begins a line or a list item's content, :func:`inline`."""
    return " ".join(str(value or "").split())


def escape_start(text: str) -> str:
    """``text`` with a backslash before a leading block marker (``# ``, ``> ``,
    ``- ``, ``1. ``, a fence, ``<div``...), so that it cannot open a block
    where it begins a line or a list item; other text as it is. The backslash
    escapes of ASCII punctuation render as the character itself."""
    ordered = _ORDERED_START.match(text)
    if ordered:
        return f"{ordered[1]}\\{text[len(ordered[1]):]}"
    return "\\" + text if _BLOCK_START.match(text) else text


def escape_cell(text: str) -> str:
    """``text`` with its ``|`` escaped (it cannot end a table cell)."""
    return text.replace("|", "\\|")


def inline(value: object) -> str:
    """Text on one line (white space folded), safe where it begins a line or a
    list item's content (:func:`escape_start`)."""
    return escape_start(fold(value))


def short(value: object) -> str:
    """A text's first sentence, cut to 60 characters (a decision named in a marker line)."""
    from ctxgraph.compute.compress import first_sentence

    return first_sentence(fold(value), 60)


def cell(value: object) -> str:
    """Text safe inside a Markdown table cell (on one line, ``|`` escaped)."""
    return escape_cell(fold(value))


def code(value: object) -> str:
    """``value`` as an inline code span (CommonMark): fenced by a run of
    backticks longer than any in it, padded with a space on each side when it
    holds a backtick (or starts and ends with a space, which a code span would
    strip); each line break becomes a space. Inside a code span nothing is
    Markdown, so a name shows as it is."""
    text = _LINE_BREAKS.sub(" ", "" if value is None else str(value))
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or (text[:1] == text[-1:] == " " and text.strip(" ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_cell(value: object) -> str:
    """:func:`code` inside a table cell (its ``|`` escaped: GFM splits cells at
    a bare ``|`` even inside a code span)."""
    return escape_cell(code(value))


@functools.cache
def _environment() -> jinja2.Environment:
    import jinja2  # on the first render: commands that render nothing skip its import

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ctxgraph.compute", "templates"),
        autoescape=False,  # Markdown, not HTML
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        auto_reload=False,  # the template ships with the package: read once, never stat'ed again
    )
    env.filters["fold"] = fold
    env.filters["inline"] = inline
    env.filters["cell"] = cell
    env.filters["code"] = code
    env.filters["code_cell"] = code_cell
    env.filters["short"] = short
    return env


def render(ctx: ComputedContext, *, debug: bool = False, template: str | None = None) -> str:
    """Markdown for ``ctx``; ``template`` is the text of a replacement template."""
    import jinja2

    env = _environment()
    try:
        tmpl = env.from_string(template) if template is not None else env.get_template("context.md.j2")
        text = tmpl.render(ctx=ctx, debug=debug)
    except jinja2.TemplateError as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, jinja2.TemplateSyntaxError) else ""
        raise ConfigurationError(f"context template error{where}: {exc.message or exc}") from None
    return _BLANK_RUNS.sub("\n\n", text).strip() + "\n"

