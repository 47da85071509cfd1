"""The MCP server's settings that the command line names before the SDK is
imported (``ctxgraph --help`` and every other command stay free of its cost),
and the lengths its arguments may have."""

from __future__ import annotations

from ctxgraph.core.limits import (
    MAX_CRITERIA,
    MAX_CRITERION_CHARS,
    MAX_ID_CHARS,
    MAX_ITEMS,
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
)

#: The default cap on one response, in estimated tokens (clients refuse tool
#: results over 25,000 tokens; Claude Code's MAX_MCP_OUTPUT_TOKENS default).
DEFAULT_MAX_TOKENS = 20_000
#: The smallest cap the server accepts (an error or one small item must fit).
MIN_MAX_TOKENS = 1_000
#: The environment variable the bearer token is read from (unless --token-stdin).
TOKEN_ENV = "CTXGRAPH_MCP_TOKEN"
#: The environment variable naming a file whose first line is the token (a container's secret file).
TOKEN_FILE_ENV = "CTXGRAPH_MCP_TOKEN_FILE"
#: The tools the server registers (``tools.Tools.register`` takes them from
#: here, by name): those that only read, and those that write (left out with --read-only).
READ_TOOLS = ("compute_context", "explain_context", "search_knowledge", "get_task", "list_tasks", "graph_stats",
              "list_projects", "list_conflicts")
WRITE_TOOLS = ("add_task", "ingest_handoff", "block_task", "unblock_task", "sync")

# Lengths, in characters, checked (with the argument types) before a call does
# any work; the input schemas clients see carry them as maxLength / maxItems.
# Those of texts a document may also hold are in ctxgraph.core.limits.
#: A project's name (as ``--project NAME=...`` allows).
MAX_PROJECT_CHARS = 64
#: A cursor (what next_cursor holds is far shorter).
MAX_CURSOR_CHARS = 512
#: A resource URI.
MAX_URI_CHARS = 1_000

__all__ = [
    "DEFAULT_MAX_TOKENS", "MAX_CRITERIA", "MAX_CRITERION_CHARS", "MAX_CURSOR_CHARS", "MAX_ID_CHARS", "MAX_ITEMS",
    "MAX_NAME_CHARS", "MAX_PROJECT_CHARS", "MAX_TEXT_CHARS", "MAX_URI_CHARS", "MIN_MAX_TOKENS", "READ_TOOLS",
    "TOKEN_ENV", "TOKEN_FILE_ENV", "WRITE_TOOLS",
]
