"""The SDK's own error replies, made like ctxgraph's: one line starting
``ctxgraph: error:``, at most :data:`~ctxgraph.mcp.responses.MAX_ERROR_CHARS`
characters, a value the caller sent quoted at most
:data:`~ctxgraph.mcp.responses.QUOTE_CHARS` characters long.

- :func:`clip_errors` wraps every request the SDK dispatches (stdio and HTTP):
  an unknown method (the SDK echoes it whole in ``data``), parameters that do
  not validate (the SDK says only ``Invalid request parameters``), and any
  other error a handler of the SDK raises keep their JSON-RPC code; only the
  message and ``data`` change.
- :class:`ClippedErrorReplies` wraps the HTTP app: the replies the SDK's
  transport makes before a request is dispatched (a body that is not JSON, a
  JSON-RPC batch or anything else that is not one message, which the SDK
  answers with pydantic's many-line report; a missing session) get ctxgraph's
  line. Over stdio the SDK drops such a line without a reply.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ctxgraph.mcp.responses import MAX_ERROR_CHARS, QUOTE_CHARS, clip, clip_message, compact, error_line

log = logging.getLogger(__name__)

PREFIX = "ctxgraph: error: "
#: Items of a list in an error's ``data`` kept (the rest is left out).
DATA_ITEMS = 20


def _one_line(text: str) -> str:
    return " ".join(text.split())


def as_line(message: str) -> str:
    """``message`` as ctxgraph's error line (it may already be one), clipped."""
    if message.startswith(PREFIX):  # ctxgraph's own line: its quotes are clipped already
        return clip(_one_line(message), len(PREFIX) + MAX_ERROR_CHARS)
    flat = _one_line(message)
    if flat[:1].isupper() and not flat[1:2].isupper():
        flat = flat[0].lower() + flat[1:]
    return PREFIX + clip_message(flat, words=True)


def clip_data(value: Any) -> Any:
    """An error's ``data`` with each text clipped and each list cut to its first
    :data:`DATA_ITEMS` items; None when it would still be longer than
    :data:`MAX_ERROR_CHARS` characters as JSON."""
    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return clip(v)
        if isinstance(v, list | tuple):
            return [walk(x) for x in v[:DATA_ITEMS]]
        if isinstance(v, dict):
            return {clip(str(k)): walk(x) for k, x in list(v.items())[:DATA_ITEMS]}
        return v

    short = walk(value)
    return short if len(compact(short)) <= MAX_ERROR_CHARS else None


def _invalid_params(method: str, exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    if not errors:
        return f"invalid parameters of {method!r}"
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {len(errors) - 1:,} more)" if len(errors) > 1 else ""
    return f"invalid parameters of {method!r}: {clip(where)}: {_one_line(first['msg'])}{more}"


async def clip_errors(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """A server middleware (the SDK's ``Server.middleware``): every error a
    request ends in, as ctxgraph's line with its JSON-RPC code kept."""
    try:
        return await call_next(ctx)
    except MCPError as exc:
        message = exc.message
        if exc.data and isinstance(exc.data, str) and not message.startswith(PREFIX):
            message = f"{message}: {exc.data!r}"  # "Method not found" names the method in data
        raise MCPError(code=exc.code, message=as_line(message), data=clip_data(exc.data)) from None
    except ValidationError as exc:
        raise MCPError(code=INVALID_PARAMS, message=error_line(_invalid_params(ctx.method, exc))) from None
    except Exception as exc:  # the SDK answers these with code 0 and the exception's text, whole
        line = as_line(str(exc) or type(exc).__name__)
        if not str(exc).startswith(PREFIX):
            log.warning("%s failed: %s: %s", clip(ctx.method), type(exc).__name__, line[len(PREFIX):])
            log.debug("%s failed", clip(ctx.method), exc_info=True)
        raise MCPError(code=0, message=line) from None


# ---------------------------------------------------------------- over HTTP

_NOT_ONE_MESSAGE = ("the body is not one JSON-RPC 2.0 message (an object with \"jsonrpc\": \"2.0\", a \"method\" "
                    "and, for a request, an \"id\")")
_STATUS_PHRASE = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)*: (?=\S)")
_BATCH = "a JSON-RPC batch (an array of messages) is not served: send one message per request"


def rewrite(body: bytes, batch: bool) -> bytes | None:
    """The JSON-RPC error reply ``body`` with ctxgraph's line, or None when it is
    not one (a reply of another kind is left as it is)."""
    try:
        reply = json.loads(body)
    except ValueError:
        return None
    if not (isinstance(reply, dict) and isinstance(reply.get("error"), dict) and "jsonrpc" in reply):
        return None
    error = dict(reply["error"])
    message = str(error.get("message", ""))
    if message.startswith(PREFIX):  # made by clip_errors already
        return None
    if message.startswith("Validation error:") or message.startswith("Body must be a single JSON-RPC"):
        message = _BATCH if batch else _NOT_ONE_MESSAGE
    elif message.startswith("Parse error"):
        detail = message.partition(":")[2].strip()
        message = "the body is not JSON" + (f": {clip(detail, QUOTE_CHARS)}" if detail else "")
    else:  # "Not Acceptable: Client must accept ...": the HTTP status says the first part already
        message = _STATUS_PHRASE.sub("", message)
    error["message"] = as_line(message)
    if "data" in error:
        error["data"] = clip_data(error["data"])
    return compact({**reply, "error": error}).encode("utf-8")


class ClippedErrorReplies:
    """ASGI middleware: the JSON-RPC error replies (status 400 and up, JSON)
    the SDK's HTTP transport makes itself, rewritten by :func:`rewrite`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        first = bytearray()  # the body's first non-blank byte: "[" opens a batch
        held: list[Message] = []
        chunks: list[bytes] = []

        async def watched() -> Message:
            message = await receive()
            if not first and message["type"] == "http.request":
                start = message.get("body", b"").lstrip()
                if start:
                    first.append(start[0])
            return message

        async def clipped(message: Message) -> None:
            if message["type"] == "http.response.start" and _json_error(message):
                held.append(message)
                return
            if message["type"] != "http.response.body" or not held:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = b"".join(chunks)
            body = rewrite(body, batch=bytes(first) == b"[") or body
            headers = [(k, v) for k, v in held[0].get("headers", []) if k.lower() != b"content-length"]
            await send({**held[0], "headers": [*headers, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, watched, clipped)


def _json_error(start: Message) -> bool:
    if int(start.get("status", 200)) < 400:
        return False
    for key, value in start.get("headers", []):
        if key.lower() == b"content-type":
            return bool(value.split(b";")[0].strip().lower() == b"application/json")
    return False


__all__ = ["ClippedErrorReplies", "as_line", "clip_data", "clip_errors", "rewrite"]
