"""Tool results: structured content, the text block beside it, errors, the
size cap and cursors.

- A result carries its JSON as ``structuredContent`` (checked against the
  tool's output schema) and a text block: the JSON itself, compact (as the
  MCP specification recommends), except for contexts, whose text block is
  the Markdown an agent reads.
- An error is an ``isError`` result whose one text block is the line the CLI
  prints on stderr, ``ctxgraph: error: ...``, and no structured content (a
  client checks structured content against the tool's output schema, which
  describes successes; the TypeScript SDK checks it on errors too). The CLI's
  exit code is in the result's ``_meta`` as ``ctxgraph/exit_code``. A value
  the caller sent is quoted at most :data:`QUOTE_CHARS` characters long.
- Size: a response is measured as it goes on the wire (the JSON of the whole
  result) with the project's token estimator; nothing over the cap is sent.
- Cursors are opaque: the offset of the next page and a digest of the
  arguments of the call they came from (a cursor only continues its own list).
- A listing whose page of one item would not fit the cap (one item with a
  huge text, stored before the input limits) is shortened instead
  (:func:`clipped_page`): its long texts keep their start and end around
  ``…(N characters left out)…``, its long lists their first items, and each
  entry's ``clipped`` names the fields shortened.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from mcp_types import CallToolResult, TextContent

from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.errors import CtxgraphError

#: Items on one page unless the call asks for fewer (or the cap cuts it).
DEFAULT_PAGE = 50
MAX_PAGE = 500
#: The key of the CLI's exit code in an error result's ``_meta``.
EXIT_CODE_META = "ctxgraph/exit_code"
#: Characters of one quoted value an error repeats (the rest is elided).
QUOTE_CHARS = 200
#: No error line is longer (a safety net beyond the quoted values).
MAX_ERROR_CHARS = 2_000
#: How a listing is shortened, tried in turn until a page of at least one item
#: fits the cap: whole, then at most (characters of a text, items of a list).
CLIP_LEVELS: tuple[tuple[int, int] | None, ...] = (None, (4_000, 100), (1_000, 20), (200, 5), (40, 2))
_QUOTED = re.compile(rf"'[^'\n]{{{QUOTE_CHARS + 1},}}'|\"[^\"\n]{{{QUOTE_CHARS + 1},}}\"")
_LONG_RUN = re.compile(rf"\S{{{QUOTE_CHARS + 1},}}")


class Measured(NamedTuple):
    """A result with its size already measured (so it is not measured twice)."""

    result: CallToolResult
    tokens: int


class CursorError(CtxgraphError):
    exit_code = 2


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def wire_tokens(result: CallToolResult) -> int:
    """Estimated tokens of the result as sent (its JSON, every block and the structured content)."""
    return estimate_tokens(compact(result.model_dump(mode="json", by_alias=True, exclude_none=True)))


def ok(structured: Mapping[str, Any], text: str | None = None, *, extra_text: Sequence[str] = ()) -> CallToolResult:
    """A result with ``structured`` as its structured content; its text block is
    ``text`` (default: the JSON), after any ``extra_text`` blocks (warnings)."""
    blocks = [TextContent(type="text", text=t) for t in extra_text]
    blocks.append(TextContent(type="text", text=compact(structured) if text is None else text))
    return CallToolResult(content=list(blocks), structured_content=dict(structured))


def clip(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text``, or its start and end around a note of how much was left out."""
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]}…({len(text) - 2 * keep:,} characters left out)…{text[-keep:]}"


def clip_message(message: str, *, words: bool = False) -> str:
    """``message`` with every quoted value over :data:`QUOTE_CHARS` characters
    clipped (with ``words``, every other run of non-blank characters over it
    too: a message not ctxgraph's may repeat a value unquoted), and at most
    :data:`MAX_ERROR_CHARS` characters in all."""
    message = _QUOTED.sub(lambda m: m.group(0)[0] + clip(m.group(0)[1:-1]) + m.group(0)[0], message)
    if words:
        message = _LONG_RUN.sub(lambda m: clip(m.group(0)), message)
    return clip(message, MAX_ERROR_CHARS)


def error_line(message: str) -> str:
    return f"ctxgraph: error: {clip_message(message)}"


def error(message: str, exit_code: int = 1) -> CallToolResult:
    """An MCP tool error: the CLI's stderr line (values quoted from the caller
    clipped), its exit code in ``_meta``; no structured content."""
    return CallToolResult(content=[TextContent(type="text", text=error_line(message))],
                          _meta={EXIT_CODE_META: exit_code}, is_error=True)


def capped(result: CallToolResult | Measured, cap: int) -> CallToolResult:
    """``result``, or an error saying it was too large (the cap is never exceeded)."""
    result, size = result if isinstance(result, Measured) else (result, wire_tokens(result))
    if size <= cap:
        return result
    return error(f"the response ({size:,} tokens) exceeds the server's cap of {cap:,} tokens "
                 "(--max-response-tokens); ask for less (a smaller budget, a page limit)")


def digest(arguments: Mapping[str, Any]) -> str:
    """What ties a cursor to the call it came from."""
    return hashlib.sha256(compact(dict(sorted(arguments.items()))).encode()).hexdigest()[:16]


def encode_cursor(offset: int, key: str) -> str:
    return base64.urlsafe_b64encode(compact({"o": offset, "k": key}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, key: str) -> int:
    """The offset a cursor points at (0 without one)."""
    if not cursor:
        return 0
    try:
        raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset, found = raw["o"], raw["k"]
    except (ValueError, TypeError, KeyError, binascii.Error):
        raise CursorError("invalid cursor (pass back the next_cursor of the previous page, unchanged)") from None
    if not isinstance(offset, int) or offset < 0 or found != key:
        raise CursorError("this cursor belongs to another list (the arguments changed); start again without it")
    return offset


def page(
    items: Sequence[Any],
    offset: int,
    limit: int,
    key: str,
    build: Callable[[list[Any], str | None], CallToolResult],
    cap: int,
) -> Measured:
    """The result ``build(page, next_cursor)`` of the items from ``offset``: at
    most ``limit`` of them, and fewer when the response would exceed ``cap``
    (the rest is behind ``next_cursor``, None on the last page)."""
    end = min(len(items), offset + limit)
    while True:
        more = encode_cursor(end, key) if end < len(items) else None
        result = build(list(items[offset:end]), more)
        size = wire_tokens(result)
        if size <= cap or end - offset <= 1:
            return Measured(result, size)  # (one item over the cap: an error, by ``capped``)
        # shrink in proportion, at least by one item
        end = offset + max(1, min(end - offset - 1, int((end - offset) * cap / size * 0.9)))


Level = tuple[int, int] | None


def shorten(value: dict[str, Any], fields: Iterable[str], level: Level) -> list[str]:
    """Shorten, in place, the named fields of a dumped model (``item.summary``
    reaches into ``item``) to ``level``: a text to at most ``level[0]``
    characters (:func:`clip`), a list to its first ``level[1]`` items, each
    text in it shortened too. Returns the names of the fields changed."""
    if level is None:
        return []
    chars, count = level
    changed = []
    for name in fields:
        *path, last = name.split(".")
        holder: Any = value
        for part in path:
            holder = holder.get(part) if isinstance(holder, dict) else None
        if not isinstance(holder, dict):
            continue
        found = holder.get(last)
        if isinstance(found, str) and len(found) > chars:
            holder[last] = clip(found, chars)
            changed.append(name)
        elif isinstance(found, list | tuple):
            short = [clip(v, chars) if isinstance(v, str) else v for v in found[:count]]
            if len(found) > count or short != list(found):
                holder[last] = short
                changed.append(name)
    return changed


def clipped_page(
    items: Sequence[Any],
    offset: int,
    limit: int,
    key: str,
    build: Callable[[list[Any], str | None, Level], CallToolResult],
    cap: int,
) -> Measured:
    """:func:`page` with the items whole, or, when not even one fits the cap,
    shortened at each of :data:`CLIP_LEVELS` in turn (``build(page,
    next_cursor, level)`` shortens them): one item with a huge text never
    makes a listing fail."""
    for level in CLIP_LEVELS:
        found = page(items, offset, limit, key, functools.partial(_build_at, build, level), cap)
        if found.tokens <= cap:
            break
    return found


def _build_at(build: Callable[[list[Any], str | None, Level], CallToolResult], level: Level,
              part: list[Any], more: str | None) -> CallToolResult:
    return build(part, more, level)
