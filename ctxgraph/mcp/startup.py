"""What ``ctxgraph mcp`` checks before it imports the SDK (~1-3 s): the HTTP
address, the bearer tokens and the tokens file, so that a refused command
line is refused at once."""

from __future__ import annotations

import ipaddress
import re
import sys

from ctxgraph.errors import ConfigurationError
from ctxgraph.mcp.logs import json_line, json_lines

#: ``--shutdown-timeout``: on SIGTERM, the process exits within this many seconds.
DEFAULT_SHUTDOWN_SECONDS = 10.0
SHUTDOWN_ENV = "CTXGRAPH_SHUTDOWN_TIMEOUT"
TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9._~+/=-]{16,4096}$")
DEFAULT_HOST = "127.0.0.1"


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT`` or ``PORT`` (host 127.0.0.1); port 0 picks a free one."""
    text = text.strip()
    host, port_text = DEFAULT_HOST, text
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise ConfigurationError(f"--http {text!r}: expected [IPv6]:PORT")
        port_text = rest[1:]
    elif ":" in text:
        host, _, port_text = text.rpartition(":")
        host = host or DEFAULT_HOST
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ConfigurationError(f"--http {text!r}: expected HOST:PORT with a port from 0 to 65535")
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_token(token: str) -> str:
    if not TOKEN_SHAPE.match(token):
        raise ConfigurationError(
            "the bearer token must be 16 to 4,096 characters of A-Z a-z 0-9 - . _ ~ + / = (e.g. from "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`)")
    return token


def read_token_file(path: str) -> str:
    """The bearer token: the first line of the file ``path`` (``$CTXGRAPH_MCP_TOKEN_FILE``)."""
    try:
        with open(path, encoding="utf-8") as handle:
            line = handle.readline(8192).strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"CTXGRAPH_MCP_TOKEN_FILE {path}: cannot read: "
                                 f"{getattr(exc, 'strerror', None) or exc}") from None
    if not line:
        raise ConfigurationError(f"CTXGRAPH_MCP_TOKEN_FILE {path}: the first line is empty")
    return line


def read_project_tokens(path: str) -> dict[str, str]:
    """``NAME=TOKEN`` lines (blank lines and ``#`` comments skipped) of a tokens file."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read(1024 * 1024).splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"--project-tokens {path}: cannot read: {getattr(exc, 'strerror', None) or exc}") \
            from None
    tokens: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, token = line.partition("=")
        name, token = name.strip(), token.strip()
        if not sep or not name or not token:
            raise ConfigurationError(f"--project-tokens {path}, line {number}: expected NAME=TOKEN")
        if name in tokens:
            raise ConfigurationError(f"--project-tokens {path}, line {number}: project {name!r} has a token already")
        tokens[name] = token
    if not tokens:
        raise ConfigurationError(f"--project-tokens {path}: no NAME=TOKEN line")
    return tokens


def check_distinct_tokens(token: str | None, project_tokens: dict[str, str] | None) -> None:
    """Refuse a token given twice (two projects, or a project and the server)."""
    tokens = [check_token(t) for t in [*([token] if token else []), *(project_tokens or {}).values()]]
    if len(set(tokens)) != len(tokens):
        raise ConfigurationError("two of the bearer tokens are the same: each project needs its own")


def say(message: str) -> None:
    """One line on standard error (never standard output: over stdio that is the protocol);
    a JSON object with ``--log-format json``."""
    if json_lines():
        level = "warning" if message.startswith("warning:") else "error" if message.startswith("error:") else "info"
        print(json_line(level, "ctxgraph.mcp", message), file=sys.stderr, flush=True)
        return
    print(f"ctxgraph mcp: {message}", file=sys.stderr, flush=True)
