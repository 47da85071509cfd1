"""Drive `ctxgraph mcp` (a real subprocess) with the MCP SDK's own client from
synchronous tests: the client lives in a background event loop (an anyio
blocking portal) so one connection can serve a whole test module."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, ExitStack, asynccontextmanager
from pathlib import Path
from typing import IO, Any

import httpx2
from anyio.from_thread import start_blocking_portal
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

SERVING = re.compile(r"serving (http://\S+/mcp)")

SMALL_HANDOFF = """\
task_id: t-auth
summary: Added JWT validation middleware
success: true
patterns_discovered: [{pattern: Wrap handlers with requireAuth(), applies_to: [auth, api]}]
gotchas: [{issue: Clock skew breaks exp checks, severity: high, applies_to: [jwt]}]
"""


def small_store(path: Path) -> Path:
    """An embedded store at ``path`` holding t-auth (finished, with a handoff) and
    t-refresh (depends on it), written in process (the setup, not what is tested)."""
    from ctxgraph.service import ContextService

    svc = ContextService.open(path)
    try:
        svc.add_task({"id": "t-auth", "name": "Add JWT validation middleware",
                      "objective": "Verify JWT tokens on api routes"})
        svc.add_task({"id": "t-refresh", "name": "Refresh tokens", "objective": "Rotate the JWT on login refresh",
                      "depends_on": ["t-auth"]})
        svc.ingest_handoffs([("handoff.yaml", SMALL_HANDOFF.encode())])
    finally:
        svc.close()
    return path


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without ctxgraph's and Neo4j's variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    env.update(extra or {})
    return env


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None,
        stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``python -m ctxgraph ARGS`` (the CLI the server is compared with)."""
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, input=stdin, capture_output=True,
                          env=clean_env(env), timeout=180)


def cli_ok(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: bytes | None = None) -> str:
    proc = cli(*args, cwd=cwd, env=env, stdin=stdin)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


def cli_error(*args: str, cwd: Path, env: dict[str, str] | None = None,
              stdin: bytes | None = None) -> tuple[int, str]:
    """The exit code and the one stderr line of a CLI call that fails."""
    proc = cli(*args, cwd=cwd, env=env, stdin=stdin)
    lines = proc.stderr.decode().strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1, (proc.returncode, lines)
    return proc.returncode, lines[0]


class McpClient:
    """One connected SDK client with blocking methods."""

    def __init__(self, connect: Callable[[], AbstractAsyncContextManager[Client]]) -> None:
        self._stack = ExitStack()
        portal = self._stack.enter_context(start_blocking_portal())
        self._portal = portal
        self.client = self._stack.enter_context(portal.wrap_async_context_manager(connect()))

    def close(self) -> None:
        self._stack.close()

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return self._portal.call(self.client.call_tool, tool, arguments or {})

    def ok(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The structured content of a call that must succeed."""
        result = self.call(tool, arguments)
        assert not result.is_error, result.content
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    def fail(self, tool: str, arguments: dict[str, Any] | None = None) -> tuple[int, str]:
        """The exit code and text of a call that must be a tool error."""
        result = self.call(tool, arguments)
        assert result.is_error, result.structured_content
        assert len(result.content) == 1 and result.structured_content is None
        text = result.content[0].text  # type: ignore[union-attr]
        assert result.meta is not None
        return int(result.meta["ctxgraph/exit_code"]), text

    def read(self, uri: str) -> str:
        found = self._portal.call(self.client.read_resource, uri)
        return str(found.contents[0].text)  # type: ignore[union-attr]

    def tools(self) -> list[Any]:
        return list(self._portal.call(self.client.list_tools).tools)


def stdio(args: list[str], *, cwd: Path, env: dict[str, str] | None = None, errlog: IO[str]) -> McpClient:
    """``ctxgraph mcp ARGS`` over stdio, started by the SDK's stdio client (stderr to ``errlog``).
    The SDK passes on only a few variables of this process's environment; ``PYTHONPATH`` is added,
    so that the server runs the code under test (a work tree's, not an installed copy)."""
    path = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    params = StdioServerParameters(command=sys.executable, args=["-m", "ctxgraph", "mcp", *args],
                                   env={**path, **(env or {})}, cwd=cwd)
    return McpClient(lambda: Client(stdio_client(params, errlog=errlog)))


@asynccontextmanager
async def _http_session(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        yield client


def http(url: str, token: str | None) -> McpClient:
    return McpClient(lambda: _http_session(url, token))


class HttpServer:
    """``ctxgraph mcp --http 127.0.0.1:0 ARGS`` as a subprocess; ``url`` once it serves."""

    def __init__(self, args: list[str], *, cwd: Path, env: dict[str, str], log: Path,
                 address: str = "127.0.0.1:0", wait: bool = True) -> None:
        self.log = log
        self._err = log.open("w", encoding="utf-8")
        self.proc = subprocess.Popen([sys.executable, "-m", "ctxgraph", "mcp", "--http", address, *args],
                                     cwd=cwd, env=clean_env(env), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=self._err)
        if wait:
            self.wait()

    def wait(self) -> None:
        """Until the server says it serves (``url``)."""
        log = self.log
        deadline = time.monotonic() + 90
        while True:
            found = SERVING.search(log.read_text(encoding="utf-8"))
            if found:
                self.url = found.group(1)
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"ctxgraph mcp --http did not start: {log.read_text(encoding='utf-8')}")
            time.sleep(0.1)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._err.close()
        return int(self.proc.returncode)


def as_json(text: str) -> Any:
    return json.loads(text)
