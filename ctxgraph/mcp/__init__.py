"""``ctxgraph mcp``: ctxgraph as a Model Context Protocol server (the official
``mcp`` SDK, 2.x: ``MCPServer``), over stdio or streamable HTTP, for any
orchestrator that speaks MCP.

- :mod:`ctxgraph.mcp.projects`: the served projects, one ``ContextService`` each;
- :mod:`ctxgraph.mcp.tools`: the tools and resources (``build_server``);
- :mod:`ctxgraph.mcp.ops`: contexts within a size cap, and the store warning;
- :mod:`ctxgraph.mcp.responses`: results, errors, the size cap, cursors;
- :mod:`ctxgraph.mcp.transport`: stdio, HTTP, the bearer token.
"""

from ctxgraph.mcp.projects import Project, Projects, ProjectSpec, parse_project, spec_for
from ctxgraph.mcp.responses import DEFAULT_MAX_TOKENS
from ctxgraph.mcp.tools import build_server

__all__ = ["DEFAULT_MAX_TOKENS", "Project", "ProjectSpec", "Projects", "build_server", "parse_project", "spec_for"]
