"""The log lines of ``ctxgraph mcp``: plain text, or with ``--log-format json``
(``$CTXGRAPH_LOG_FORMAT``) one JSON object per line on standard error.

A JSON line holds the time (UTC, ISO 8601), the level, the logger and the
message, and for a request the fields of :data:`FIELDS` (``event`` is
``mcp_request`` for a JSON-RPC request, ``http_request`` for an HTTP reply
the MCP layer never saw: a refusal, a stream, a probe that failed). No line
holds a tool's arguments, a header or a token. The request lines are logged
at INFO on :data:`requests_log`, which only the JSON format turns on.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

LOG_FORMATS = ("text", "json")
LOG_FORMAT_ENV = "CTXGRAPH_LOG_FORMAT"
#: The logger of the request lines.
requests_log = logging.getLogger("ctxgraph.mcp.requests")
#: A request line's fields (a record's ``extra``), in the order written.
FIELDS = ("event", "method", "tool", "project", "status", "error_kind", "duration_ms", "path", "code")
_FORMAT = {"json": False}


def json_line(level: str, logger: str, message: str, created: float | None = None,
              fields: dict[str, Any] | None = None) -> str:
    when = datetime.fromtimestamp(created, UTC) if created is not None else datetime.now(UTC)
    line = {"time": when.isoformat(timespec="milliseconds"), "level": level, "logger": logger, "message": message}
    return json.dumps({**line, **(fields or {})}, ensure_ascii=False, separators=(",", ":"))


def json_lines() -> bool:
    """Whether lines are written as JSON."""
    return _FORMAT["json"]


class JsonFormatter(logging.Formatter):
    """One JSON object per record (see the module)."""

    def format(self, record: logging.LogRecord) -> str:
        fields = {name: record.__dict__[name] for name in FIELDS if record.__dict__.get(name) is not None}
        if record.exc_info:
            fields["traceback"] = self.formatException(record.exc_info)
        return json_line(record.levelname.lower(), record.name, record.getMessage(), record.created, fields)


def use_log_format(fmt: str) -> None:
    """``json``: every handler of the root logger writes JSON lines, the
    server's own lines too, and the request lines are on; ``text``: the
    lines as they are."""
    if fmt != "json":
        return
    _FORMAT["json"] = True
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler())
    for handler in root.handlers:
        handler.setFormatter(JsonFormatter())
    requests_log.setLevel(logging.INFO)
