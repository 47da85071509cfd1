"""The SDK's ``MCPServer`` with ctxgraph's own handling of what callers send.

- ``tools/call``: the arguments are checked strictly (:mod:`ctxgraph.mcp.arguments`)
  before the tool runs; a refused argument is a tool error with ctxgraph's
  line, like every other error (never the SDK's ``Error executing tool ...``
  with the caller's input repeated), so that the model can correct it; an
  unknown tool is a JSON-RPC error (-32602) with ctxgraph's line. The tool runs on a
  worker thread; a success is still checked against its output schema.
- ``tools/list``: each tool's input schema is the strict model's
  (``additionalProperties: false``, the length limits).
- ``resources/read``: a URI over :data:`~ctxgraph.mcp.limits.MAX_URI_CHARS`
  characters is refused before the SDK matches it; an unknown one is
  ctxgraph's line, quoting it clipped (the SDK's repeats it whole).
- A request made with a project's bearer token sees that project only
  (:data:`ctxgraph.mcp.projects.ALLOWED`).
- Every other error a request ends in (an unknown method, parameters the
  SDK refuses) is ctxgraph's line too (:mod:`ctxgraph.mcp.replies`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import anyio.to_thread
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, InputRequiredResult, ToolAnnotations
from mcp_types import Tool as MCPTool
from pydantic import AnyUrl

from ctxgraph.mcp.arguments import ArgumentError, StrictTool
from ctxgraph.mcp.limits import MAX_URI_CHARS
from ctxgraph.mcp.projects import ALLOWED, PROJECT_CLIENT
from ctxgraph.mcp.replies import clip_errors
from ctxgraph.mcp.responses import clip, error, error_line


def allowed_projects() -> frozenset[str] | None:
    """The projects the current request's bearer token reaches (None: every one)."""
    token = get_access_token()
    if token is None or not token.client_id.startswith(PROJECT_CLIENT):
        return None
    return frozenset({token.client_id.removeprefix(PROJECT_CLIENT)})


class CtxgraphServer(MCPServer):
    """An ``MCPServer`` whose tools take strictly checked arguments (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._strict: dict[str, StrictTool] = {}
        self.middleware.insert(0, clip_errors)  # outermost: it sees every error of every request

    @property
    def tool_names(self) -> frozenset[str]:
        """The names of the tools served."""
        return frozenset(self._strict)

    def add_strict_tool(self, fn: Callable[..., CallToolResult], annotations: ToolAnnotations) -> None:
        self.add_tool(fn, annotations=annotations)
        self._strict[fn.__name__] = StrictTool(fn)

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        return [t.model_copy(update={"input_schema": self._strict[t.name].schema}) if t.name in self._strict else t
                for t in tools]

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> CallToolResult | InputRequiredResult:
        tool = self._strict.get(name)
        if tool is None:  # a protocol error, as the specification's example has it (JSON-RPC -32602)
            raise MCPError(code=INVALID_PARAMS,
                           message=error_line(f"unknown tool: {clip(name)!r} (tools/list names them)"))
        try:
            kwargs = tool.validate(arguments)
        except ArgumentError as exc:
            return error(str(exc), exc.exit_code)
        scope = ALLOWED.set(allowed_projects())
        try:
            result = await anyio.to_thread.run_sync(functools.partial(tool.fn, **kwargs))
        finally:
            ALLOWED.reset(scope)
        return tool.metadata.convert_result(result)

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        text = str(uri)
        if len(text) > MAX_URI_CHARS:
            raise MCPError(code=INVALID_PARAMS, message=error_line(
                f"the resource URI is {len(text):,} characters long; the limit is {MAX_URI_CHARS:,}"))
        scope = ALLOWED.set(allowed_projects())
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError:
            raise MCPError(code=INVALID_PARAMS, message=error_line(
                f"unknown resource: {clip(text)!r} (resources/templates/list names them)")) from None
        finally:
            ALLOWED.reset(scope)
