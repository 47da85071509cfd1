"""What the server records of each request it serves: the metrics
(:mod:`ctxgraph.mcp.metrics`) and, with ``--log-format json``, one JSON line
on standard error per request (:mod:`ctxgraph.mcp.logs`).

:class:`Observer` is a server middleware (the SDK's ``Server.middleware``):
it times every JSON-RPC request, and of a ``tools/call`` counts the call, its
error kind, its latency and what it delivered (a context's tokens, an
ingested handoff). Its line holds the method, the tool, the project, the
status, the error kind and the duration; never an argument, a header or a
token.

Error kinds follow the CLI's exit codes: ``invalid`` (2: an argument, a
document or a setting refused), ``not_found`` (3), ``conflict`` (4: a
dependency cycle), ``store_unavailable`` (5), ``internal`` (a bug: the
server's log has the traceback), ``failed`` (any other error of ctxgraph's),
and ``protocol`` (a JSON-RPC error: an unknown tool, parameters the SDK
refuses).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from ctxgraph.mcp.logs import requests_log
from ctxgraph.mcp.metrics import Metrics
from ctxgraph.mcp.replies import PREFIX
from ctxgraph.mcp.responses import EXIT_CODE_META
from ctxgraph.mcp.server import CtxgraphServer

KINDS = {2: "invalid", 3: "not_found", 4: "conflict", 5: "store_unavailable"}


def _as_wire(result: Any) -> dict[str, Any]:
    """A tool's result as the JSON it goes out as (the SDK hands middleware either form)."""
    if isinstance(result, CallToolResult):  # the fields read, not a copy of the whole result
        first = result.content[0] if result.content else None
        return {"isError": result.is_error, "structuredContent": result.structured_content, "_meta": result.meta,
                "content": [{"text": getattr(first, "text", "")}]}
    return result if isinstance(result, dict) else {}


def error_kind(wire: Mapping[str, Any]) -> str | None:
    """The error kind of a tool's result, as sent (None: a success)."""
    if not wire.get("isError"):
        return None
    content = wire.get("content") or [{}]
    text = content[0].get("text", "") if isinstance(content[0], dict) else ""
    if str(text).startswith(PREFIX + "unexpected "):
        return "internal"
    code = (wire.get("_meta") or {}).get(EXIT_CODE_META)
    return KINDS.get(code, "failed") if isinstance(code, int) else "failed"


class Observer:
    """A server middleware recording each request in ``metrics`` and the request log."""

    def __init__(self, metrics: Metrics | None) -> None:
        self.metrics = metrics

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        start = time.perf_counter()
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        tool = str(params.get("name", ""))[:64] if ctx.method == "tools/call" else None
        kind: str | None = "internal"
        wire: dict[str, Any] = {}
        try:
            result = await call_next(ctx)
            if tool is not None:
                wire = _as_wire(result)
                kind = error_kind(wire)
            else:
                kind = None
            return result
        except MCPError:
            kind = "protocol"
            raise
        finally:
            self.record(ctx.method, tool, wire, kind, time.perf_counter() - start)

    def record(self, method: str, tool: str | None, wire: dict[str, Any], kind: str | None, seconds: float) -> None:
        structured = wire.get("structuredContent")
        project = structured.get("project") if isinstance(structured, dict) else None
        if tool is not None and self.metrics is not None:
            self.metrics.observe_call(tool, seconds, kind)
            if kind is None and isinstance(structured, dict) and isinstance(project, str):
                self.delivered(tool, project, structured)
        if requests_log.isEnabledFor(logging.INFO):
            label = self.metrics.tool(tool) if tool is not None and self.metrics is not None else tool
            fields = {"event": "mcp_request", "method": method[:64], "tool": label,
                      "project": project if isinstance(project, str) else None,
                      "status": "ok" if kind is None else "error", "error_kind": kind,
                      "duration_ms": round(seconds * 1000, 1)}
            requests_log.info("%s%s %s", method[:64], f" {label}" if label else "", fields["status"],
                              extra={k: v for k, v in fields.items() if v is not None})

    def delivered(self, tool: str, project: str, structured: dict[str, Any]) -> None:
        """Count what a successful call delivered: a context and its tokens, an ingested handoff."""
        assert self.metrics is not None
        if tool == "compute_context":
            context = structured.get("context")
            tokens = context.get("tokens") if isinstance(context, dict) else None
            self.metrics.contexts.labels(project).inc()
            if isinstance(tokens, int):
                self.metrics.tokens.labels(project).inc(tokens)
        elif tool == "ingest_handoff":
            done = structured.get("result")
            if isinstance(done, dict):
                self.metrics.ingests.labels(project, "written" if done.get("written") else "unchanged").inc()


def observe(server: CtxgraphServer, metrics: Metrics | None) -> None:
    """Record every request ``server`` serves (the outermost of its middleware)."""
    server.middleware.insert(0, Observer(metrics))
