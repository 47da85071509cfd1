"""The HTTP server's front door: what ``ctxgraph mcp --http`` answers before,
or instead of, the MCP transport.

- ``GET /healthz``: 200 while the process serves (liveness); ``GET /readyz``:
  :mod:`ctxgraph.mcp.probes` (readiness; 503 with the reason while a store
  is down, and while the server shuts down); ``GET /metrics``:
  :mod:`ctxgraph.mcp.metrics` in Prometheus' text format. None of them needs
  the token, and none is under the MCP path.
- A request to the MCP path refused for its token (the SDK's 401, whose
  ``WWW-Authenticate`` names only an OAuth error) gets a 401 saying which
  header to send: ``Authorization: Bearer <token>``, in its JSON body and in
  ``WWW-Authenticate`` (``realm="ctxgraph"``, with ``error="invalid_token"``
  when a token was sent). The server does no OAuth and advertises none.
- While the server drains (:class:`Drain`, after SIGTERM), a new request to
  the MCP path gets 503 with ``Retry-After`` and ``Connection: close``; the
  requests already in flight are counted until they finish.
- With request logging on, each HTTP response the MCP layer did not log
  itself (a refusal, a stream, a probe that failed) is one line.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ctxgraph.mcp.logs import requests_log
from ctxgraph.mcp.metrics import CONTENT_TYPE, Metrics
from ctxgraph.mcp.probes import Readiness
from ctxgraph.mcp.replies import PREFIX

PROBES = ("/healthz", "/readyz", "/metrics")
#: What a 401 tells the client to send (in the body and in WWW-Authenticate).
AUTH_HINT = ("send the header `Authorization: Bearer <token>` with the token the server was started with "
             "($CTXGRAPH_MCP_TOKEN or --token-stdin, or a project's token from --project-tokens); "
             "this server does no OAuth")
_HEADER_HINT = "send Authorization: Bearer <token> (the server's token); this server does no OAuth"
#: Seconds a client is told to wait before trying a draining server again.
RETRY_AFTER = 1


class Drain:
    """The requests to the MCP path in flight (a GET, an event stream, is not
    counted), and whether the server drains."""

    def __init__(self, metrics: Metrics | None = None) -> None:
        self.in_flight = 0
        self.draining = False
        self.metrics = metrics

    def enter(self) -> None:
        self.in_flight += 1
        if self.metrics is not None:
            self.metrics.in_flight.inc()

    def leave(self) -> None:
        self.in_flight -= 1
        if self.metrics is not None:
            self.metrics.in_flight.dec()


def _route(path: str, mcp_path: str) -> str:
    if path in PROBES:
        return path[1:]
    return "mcp" if path == mcp_path else "other"


async def _reply(send: Send, status: int, body: bytes, content_type: str, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store"), *headers]})
    await send({"type": "http.response.body", "body": body})


def _json(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode()


def _sent_token(scope: Scope) -> bool:
    for key, value in scope.get("headers", []):
        if key.lower() == b"authorization":
            return bool(value[:7].lower() == b"bearer " and value[7:].strip())
    return False


def unauthorized(token_sent: bool) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The body and headers of a 401: which header to send."""
    what = "the bearer token sent is not valid here" if token_sent else "no bearer token"
    body = {"error": "invalid_token" if token_sent else "unauthorized",
            "error_description": f"{PREFIX}{what}: {AUTH_HINT}"}
    challenge = 'Bearer realm="ctxgraph"' + (', error="invalid_token"' if token_sent else "")
    challenge += f', error_description="{what}: {_HEADER_HINT}"'
    return _json(body), [(b"www-authenticate", challenge.encode())]


class Front:
    """The ASGI app in front of the MCP transport (see the module)."""

    def __init__(self, app: ASGIApp, *, mcp_path: str, readiness: Readiness, drain: Drain,
                 metrics: Metrics | None) -> None:
        self.app = app
        self.mcp_path = mcp_path
        self.readiness = readiness
        self.drain = drain
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        path, method = str(scope.get("path", "")), str(scope.get("method", ""))
        status = [0]

        async def sent(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            if path in PROBES and method in ("GET", "HEAD"):
                await self.probe(path, sent)
            elif path == self.mcp_path and self.drain.draining:
                await self.refuse_draining(sent)
            elif path == self.mcp_path:
                await self.mcp(scope, receive, sent)
            else:
                await self.app(scope, receive, sent)
        finally:
            self.record(method, path, status[0], time.perf_counter() - began)

    async def probe(self, path: str, send: Send) -> None:
        if path == "/metrics":
            body = self.metrics.render() if self.metrics is not None else b""
            await _reply(send, 200, body, CONTENT_TYPE, [])
            return
        if path == "/healthz":
            code, document = 200, {"status": "alive"}
        elif self.drain.draining:
            code, document = 503, {"status": "shutting down", "reason": "the server is shutting down"}
        else:
            code, document = await self.readiness.answer()
        await _reply(send, code, _json(document), "application/json", [])

    async def refuse_draining(self, send: Send) -> None:
        body = {"error": "shutting_down",
                "error_description": f"{PREFIX}the server is shutting down: send the request to another "
                                     "replica or try again once it is back"}
        await _reply(send, 503, _json(body), "application/json",
                     [(b"retry-after", str(RETRY_AFTER).encode()), (b"connection", b"close")])

    async def mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The MCP transport, its 401 replaced by ours; a request counted in flight
        (not a GET: a client's event stream, open while its session is)."""
        held = [False]

        async def hinted(message: Message) -> None:
            if message["type"] == "http.response.start" and int(message["status"]) == 401:
                held[0] = True
                body, headers = unauthorized(_sent_token(scope))
                await _reply(send, 401, body, "application/json", headers)
                return
            if held[0]:  # the SDK's own 401 body: replaced
                return
            await send(message)

        if scope.get("method") == "GET":
            await self.app(scope, receive, hinted)
            return
        self.drain.enter()
        try:
            await self.app(scope, receive, hinted)
        finally:
            self.drain.leave()

    def record(self, method: str, path: str, code: int, seconds: float) -> None:
        route = _route(path, self.mcp_path)
        if self.metrics is not None:
            self.metrics.http_responses.labels(route, str(code)).inc()
        quiet = code < 400 and (route in ("healthz", "readyz", "metrics") or (route == "mcp" and method == "POST"))
        if quiet or not requests_log.isEnabledFor(logging.INFO):
            return
        shown = path if route != "other" else path[:100]
        requests_log.info("%s %s %d", method[:16], shown, code,
                          extra={"event": "http_request", "method": method[:16], "path": shown, "code": code,
                                 "status": "ok" if code < 400 else "error",
                                 "duration_ms": round(seconds * 1000, 1)})
