"""Plain HTTP against `ctxgraph mcp --http` (imported as ``_mcp_service``): the
probes, the metrics parsed with prometheus-client's own parser, and a raw MCP
session (initialize, then requests) for the tests that must hold a request in
flight by sending its body in two parts."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from prometheus_client.parser import text_string_to_metric_families

PROTOCOL = "2025-06-18"
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy for loopback


def base_of(mcp_url: str) -> str:
    return mcp_url.removesuffix("/mcp")


def request(url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None,
            method: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """The status, headers (lower-case names) and body of one HTTP request (an error status too)."""
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with _OPENER.open(req, timeout=60) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def get_json(url: str) -> tuple[int, Any]:
    code, _, body = request(url)
    return code, json.loads(body)


def samples(mcp_url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics``: (name, sorted labels) -> value."""
    code, headers, body = request(base_of(mcp_url) + "/metrics")
    assert code == 200 and headers["content-type"].startswith("text/plain"), (code, headers)
    found = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            found[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return found


def value(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def wait_for(predicate: Any, what: str, seconds: float = 120) -> None:
    """Until ``predicate()`` holds (an AssertionError naming ``what`` after ``seconds``: a hang, not a timing)."""
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        time.sleep(0.05)


class RawSession:
    """An MCP session over plain HTTP: ``initialize`` done, requests sent by hand."""

    def __init__(self, mcp_url: str, token: str) -> None:
        self.url = mcp_url
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        code, headers, _ = request(mcp_url, data=json.dumps(init).encode(), headers=self.headers)
        assert code == 200, code
        self.headers |= {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
        code, _, _ = request(mcp_url, data=b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                             headers=self.headers)
        assert code == 202, code

    def call_body(self, tool: str, arguments: dict[str, Any], call_id: int = 1) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                           "params": {"name": tool, "arguments": arguments}}).encode()

    def begin(self, body: bytes, sent: int) -> socket.socket:
        """A POST of ``body`` whose first ``sent`` bytes only are sent: the request is in flight."""
        parts = urlsplit(self.url)
        sock = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=120)
        head = [f"POST {parts.path} HTTP/1.1", f"Host: {parts.netloc}", f"Content-Length: {len(body)}",
                "Connection: close", *(f"{k}: {v}" for k, v in self.headers.items()), "", ""]
        sock.sendall("\r\n".join(head).encode() + body[:sent])
        return sock


def finish(sock: socket.socket, rest: bytes) -> tuple[int, dict[str, Any]]:
    """Send the rest of a request begun by :meth:`RawSession.begin`; its status and JSON-RPC reply."""
    sock.sendall(rest)
    chunks = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
    sock.close()
    raw = b"".join(chunks).decode()
    head, _, body = raw.partition("\r\n\r\n")
    status = int(head.split()[1])
    data = [line[len("data: "):] for line in body.splitlines() if line.startswith("data: ")]
    return status, json.loads(data[-1]) if data else {}
