"""Transports of ``ctxgraph mcp``: stdio, and streamable HTTP behind a bearer token.

Over HTTP every request must carry ``Authorization: Bearer TOKEN``; the SDK's
bearer middleware asks :class:`StaticTokenVerifier`, which compares digests
of the token with each known one in constant time. A token is a pre-shared
secret (from the environment, standard input or a tokens file); no OAuth
discovery is advertised. The server's token reaches every project; a
project's token (``--project-tokens``) reaches that project only, and the
SDK binds each session to the token that opened it.

On a loopback address (127.0.0.0/8, ::1, localhost) only requests whose
``Host`` (and ``Origin``, when sent) name the address the server listens on
are served (:func:`rebinding_protection`): a page from another site cannot
reach it by DNS rebinding, token or not. ``--no-auth`` is refused on any
address that is not loopback. The error replies the SDK's transport makes
itself (a body that is not one JSON-RPC message) are ctxgraph's line
(:class:`~ctxgraph.mcp.replies.ClippedErrorReplies`).
"""

from __future__ import annotations

import hashlib
import hmac
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from ctxgraph.errors import ConfigurationError, CtxgraphError
from ctxgraph.mcp.front import Drain, Front
from ctxgraph.mcp.metrics import Metrics
from ctxgraph.mcp.observe import observe
from ctxgraph.mcp.probes import Readiness
from ctxgraph.mcp.projects import PROJECT_CLIENT, Projects
from ctxgraph.mcp.replies import ClippedErrorReplies
from ctxgraph.mcp.server import CtxgraphServer
from ctxgraph.mcp.shutdown import STREAM_SECONDS, DrainingServer
from ctxgraph.mcp.startup import DEFAULT_SHUTDOWN_SECONDS, check_token, is_loopback, say
from ctxgraph.service import MAX_DOCUMENT_BYTES

HTTP_PATH = "/mcp"
#: Request bodies up to this size reach ctxgraph, so that a handoff over the
#: document limit (5 MB) gets ctxgraph's own refusal rather than HTTP 413.
HTTP_BODY_LIMIT = 2 * MAX_DOCUMENT_BYTES + 1024 * 1024


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


#: What the request's auth state holds in place of the bearer token itself.
_WITHHELD = "<pre-shared>"
#: The client id of the server's token (every project).
SERVER_CLIENT = "ctxgraph-bearer"


class StaticTokenVerifier:
    """Accepts pre-shared bearer tokens (an ``mcp`` ``TokenVerifier``): the
    server's (every project) and projects' (one each, client id
    ``ctxgraph-project:NAME``, see :mod:`ctxgraph.mcp.server`).

    The digest of the token sent is compared with every known digest with
    ``hmac.compare_digest``, so the time taken says nothing about the tokens,
    not even their length."""

    def __init__(self, token: str | None, project_tokens: dict[str, str] | None = None) -> None:
        self._known: list[tuple[bytes, str]] = []
        if token is not None:
            self._known.append((_digest(check_token(token)), SERVER_CLIENT))
        for name, secret in sorted((project_tokens or {}).items()):
            self._known.append((_digest(check_token(secret)), PROJECT_CLIENT + name))
        if len({d for d, _ in self._known}) != len(self._known):
            raise ConfigurationError("two of the bearer tokens are the same: each project needs its own")
        if not self._known:
            raise ConfigurationError("no bearer token")

    async def verify_token(self, token: str) -> AccessToken | None:
        sent = _digest(token)
        found = None
        for known, client in self._known:
            if hmac.compare_digest(sent, known):
                found = client
        if found is None:
            return None
        # The token itself is not kept in the request's auth state.
        return AccessToken(token=_WITHHELD, client_id=found, scopes=[])


def auth_settings(host: str, port: int) -> AuthSettings:
    """Settings of a resource server that advertises no authorization server:
    ``issuer_url`` (required by the SDK) is this server itself and unused;
    without ``resource_server_url`` no discovery route is added."""
    shown = f"[{host}]" if ":" in host else host
    return AuthSettings(issuer_url=f"http://{shown}:{port}", resource_server_url=None)  # type: ignore[arg-type]


def rebinding_protection(host: str, port: int) -> TransportSecuritySettings | None:
    """On a loopback address, the ``Host`` and ``Origin`` headers accepted: the
    address served (and ``localhost`` on 127.0.0.1 and ::1) with its port; off
    loopback None (a server reachable by any name; the token protects it)."""
    if not is_loopback(host):
        return None
    names = {f"[{host}]" if ":" in host else host}
    if host in ("127.0.0.1", "::1", "localhost"):
        names.add("localhost")
    hosts = sorted(f"{name}:{port}" for name in names)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=[f"http://{h}" for h in hosts])


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (connections queue until the server accepts them)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise CtxgraphError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise CtxgraphError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{HTTP_PATH}"


@contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """SIGTERM ends the server like SIGINT does: by unwinding (so the stores are
    closed), then returning normally; uvicorn re-raises a signal it handled."""
    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except KeyboardInterrupt:
        say("stopped")
    finally:
        signal.signal(signal.SIGTERM, previous)


def serve_stdio(server: MCPServer) -> None:
    """Serve one client on standard input and output until it closes them."""
    with _stopped_by_signals():
        anyio.run(server.run_stdio_async)


def serve_http(server: CtxgraphServer, sock: socket.socket, projects: Projects, *, access_log: bool = False,
               shutdown_seconds: float = DEFAULT_SHUTDOWN_SECONDS) -> None:
    """Serve streamable HTTP on ``sock`` (at :data:`HTTP_PATH`, behind
    :class:`~ctxgraph.mcp.front.Front`: the probes and metrics of ``projects``,
    the 401's hint, the drain) until a signal stops it (:mod:`ctxgraph.mcp.shutdown`)."""
    import uvicorn

    metrics = Metrics(server.tool_names, memory=lambda: {p.name: p.memory_status() for p in projects.by_name.values()})
    observe(server, metrics)
    readiness = Readiness(projects, metrics)
    host, port = sock.getsockname()[:2]
    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host,
                                     transport_security=rebinding_protection(host, port),
                                     max_request_body_size=HTTP_BODY_LIMIT)
    drain = Drain(metrics)
    front = Front(ClippedErrorReplies(app), mcp_path=HTTP_PATH, readiness=readiness, drain=drain, metrics=metrics)
    config = uvicorn.Config(front, log_level="warning", access_log=access_log, lifespan="on",
                            timeout_graceful_shutdown=int(STREAM_SECONDS))
    uv = DrainingServer(config, drain, shutdown_seconds)

    async def run() -> None:
        await uv.serve(sockets=[sock])

    try:
        with _stopped_by_signals():
            anyio.run(run)
    finally:
        readiness.close()
    if uv.signal is not None:
        say("stopped" if uv.drained else "stopped (requests still in flight were cut off)")
