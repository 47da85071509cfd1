"""``ctxgraph mcp``: ctxgraph as a Model Context Protocol server (the official
``mcp`` SDK, 2.x: ``MCPServer``), over stdio or streamable HTTP, for any
orchestrator that speaks MCP.

- :mod:`ctxgraph.mcp.projects`: the served projects, one ``ContextService`` each;
- :mod:`ctxgraph.mcp.tools`: the tools and resources (``build_server``);
- :mod:`ctxgraph.mcp.ops`: contexts within a size cap;
- :mod:`ctxgraph.mcp.responses`: results, errors, the size cap, cursors;
- :mod:`ctxgraph.mcp.transport`: stdio, HTTP, the bearer tokens, DNS-rebinding protection;
- :mod:`ctxgraph.mcp.startup`: the command line's checks, before the SDK is imported;
- :mod:`ctxgraph.mcp.server`, :mod:`ctxgraph.mcp.arguments`: strict arguments, project scopes;
- :mod:`ctxgraph.mcp.limits`: the settings the command line names;
- the HTTP server as a service: :mod:`ctxgraph.mcp.front` (``/healthz``, ``/readyz``,
  ``/metrics``, the 401's hint, the drain), :mod:`ctxgraph.mcp.probes` (readiness),
  :mod:`ctxgraph.mcp.metrics` (Prometheus), :mod:`ctxgraph.mcp.observe` and
  :mod:`ctxgraph.mcp.logs` (each request counted and logged, JSON lines),
  :mod:`ctxgraph.mcp.shutdown` (a graceful SIGTERM within a bound).

The package imports nothing itself: the SDK costs ~0.9 s to import, which
every other ``ctxgraph`` command would pay.
"""
