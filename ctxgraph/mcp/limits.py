"""The MCP server's settings that the command line names before the SDK is
imported (``ctxgraph --help`` and every other command stay free of its cost)."""

from __future__ import annotations

#: The default cap on one response, in estimated tokens (clients refuse tool
#: results over 25,000 tokens; Claude Code's MAX_MCP_OUTPUT_TOKENS default).
DEFAULT_MAX_TOKENS = 20_000
#: The smallest cap the server accepts (an error or one small item must fit).
MIN_MAX_TOKENS = 1_000
#: The environment variable the bearer token is read from (unless --token-stdin).
TOKEN_ENV = "CTXGRAPH_MCP_TOKEN"

__all__ = ["DEFAULT_MAX_TOKENS", "MIN_MAX_TOKENS", "TOKEN_ENV"]
