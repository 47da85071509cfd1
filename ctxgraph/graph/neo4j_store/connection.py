"""Settings, the driver, error translation and the managed transactions every
other part of the Neo4j store runs its statements in.

Writes run in managed write transactions (retried by the driver on transient
errors — a deadlock, a leader switch, a server that went away and came back —
for up to ``Neo4jSettings.max_retry_time`` seconds) and reads in managed read
transactions (routed to readers on a cluster). A store opened read-only opens
every session with READ access: the server itself refuses a write in it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Self, TypeVar

import neo4j
from neo4j import Driver, GraphDatabase, ManagedTransaction
from neo4j import exceptions as neo4j_errors

from ctxgraph import cypher
from ctxgraph.core.neo4j_uri import NEO4J_SCHEMES
from ctxgraph.errors import AuthenticationError, ConfigurationError, StoreUnavailableError

#: The package's logger: log lines keep the name they had before the store was split.
log = logging.getLogger(__package__)

T = TypeVar("T")

_SCHEMES = NEO4J_SCHEMES


#: Default for how long the driver retries a transaction that failed transiently.
DEFAULT_MAX_RETRY_TIME = 15.0
RETRY_TIME_ENV = "CTXGRAPH_NEO4J_RETRY_SECONDS"
#: Threads a store runs reads on beside the calling thread's (``_pool``).
WORKERS = 2


@dataclass(frozen=True)
class Neo4jSettings:
    """Where and how to connect. ``from_env`` reads ``NEO4J_*`` variables.

    The password is never part of ``repr`` or ``str``; it comes from the
    caller, ``NEO4J_PASSWORD`` or the file named by ``NEO4J_PASSWORD_FILE`` —
    there is no default.
    """

    uri: str
    user: str = "neo4j"
    password: str | None = field(default=None, repr=False)
    database: str | None = None
    max_retry_time: float = DEFAULT_MAX_RETRY_TIME

    @classmethod
    def from_env(
        cls,
        uri: str | None = None,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        env: dict[str, str] | None = None,
    ) -> Neo4jSettings:
        env = dict(os.environ) if env is None else env
        uri = uri or env.get("NEO4J_URI")
        if not uri:
            raise ConfigurationError("no Neo4j URI: pass --neo4j URI or set NEO4J_URI")
        if "@" in urllib.parse.urlsplit(uri).netloc:
            # Never echo the URI: it may hold a password.
            raise ConfigurationError(
                "the Neo4j URI must not contain credentials (user:password@): "
                "set NEO4J_USER and NEO4J_PASSWORD or NEO4J_PASSWORD_FILE instead"
            )
        if not password:
            password = env.get("NEO4J_PASSWORD") or None
        if password is None and env.get("NEO4J_PASSWORD_FILE"):
            path = env["NEO4J_PASSWORD_FILE"]
            try:
                with open(path, encoding="utf-8") as fh:
                    password = fh.read().strip() or None
            except OSError as exc:
                raise ConfigurationError(
                    f"cannot read NEO4J_PASSWORD_FILE {path}: {exc.strerror}"
                ) from None
            if password is None:
                raise ConfigurationError(f"NEO4J_PASSWORD_FILE {path} is empty")
        retry = env.get(RETRY_TIME_ENV)
        try:
            max_retry_time = float(retry) if retry else DEFAULT_MAX_RETRY_TIME
        except ValueError:
            raise ConfigurationError(f"{RETRY_TIME_ENV} must be a number of seconds, not {retry!r}") from None
        return cls(
            uri=uri,
            user=user or env.get("NEO4J_USER") or env.get("NEO4J_USERNAME") or "neo4j",
            password=password,
            database=database or env.get("NEO4J_DATABASE") or None,
            max_retry_time=max(0.0, max_retry_time),
        )

    def __repr__(self) -> str:  # never show the password
        return f"Neo4jSettings(uri={self.uri!r}, user={self.user!r}, database={self.database!r})"

    __str__ = __repr__


def make_driver(settings: Neo4jSettings) -> Driver:
    """The driver for ``settings``, without connecting (the first query does).

    TLS comes from the URI scheme alone: ``neo4j+s``/``bolt+s`` verify the
    server's certificate, ``+ssc`` accepts a self-signed one.
    """
    scheme = settings.uri.split("://", 1)[0].lower()
    if scheme not in _SCHEMES:
        raise ConfigurationError(
            f"unsupported Neo4j URI scheme {scheme!r}: use one of {', '.join(_SCHEMES)}"
        )
    auth = (settings.user, settings.password) if settings.password is not None else None
    try:
        return GraphDatabase.driver(
            settings.uri, auth=auth, connection_timeout=10.0,
            max_transaction_retry_time=settings.max_retry_time,
            notifications_min_severity="OFF",
        )
    except (neo4j_errors.ConfigurationError, ValueError) as exc:
        raise ConfigurationError(f"bad Neo4j settings for {settings.uri}: {_first_line(exc)}") from None


def verified_driver(settings: Neo4jSettings) -> Driver:
    """The driver for ``settings``, its connectivity and credentials checked
    (closed again, and the failure translated, when the check fails)."""
    driver = make_driver(settings)
    try:
        driver.verify_connectivity()
    except neo4j_errors.AuthError:
        driver.close()
        if settings.password is None:
            raise AuthenticationError(
                f"Neo4j at {settings.uri} needs a password for user {settings.user!r}: set "
                "NEO4J_PASSWORD or NEO4J_PASSWORD_FILE, or use --password-stdin"
            ) from None
        raise AuthenticationError(
            f"Neo4j at {settings.uri} refused the credentials of user {settings.user!r} "
            "(check NEO4J_USER / NEO4J_PASSWORD)"
        ) from None
    except neo4j_errors.ClientError as exc:
        driver.close()
        if exc.code == _RATE_LIMITED:
            raise AuthenticationError(_rate_limited(settings.uri, settings.user)) from None
        raise
    except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, OSError) as exc:
        driver.close()
        raise StoreUnavailableError(
            f"cannot reach Neo4j at {settings.uri}: {_first_line(exc)}"
        ) from None
    except (neo4j_errors.ConfigurationError, ValueError) as exc:
        driver.close()
        raise ConfigurationError(f"bad Neo4j settings for {settings.uri}: {_first_line(exc)}") from None
    return driver


def _row(record: neo4j.Record) -> dict[str, Any]:
    return dict(record)


class Neo4jConnection:
    """The driver and the transactions on it; every part of ``Neo4jStore`` is one of these."""

    def __init__(
        self, driver: Driver, *, database: str | None = None, location: str = "neo4j", read_only: bool = False
    ) -> None:
        self._driver = driver
        self._database = database
        self.location = location
        self.read_only = read_only
        #: Statements sent through ``_rows`` (each one round trip), for tests and benchmarks.
        self.statements_run = 0
        #: Managed transactions started, by kind ("read", "write", "schema"), for tests.
        self.transactions: Counter[str] = Counter()
        #: Seconds a write is re-run after a connection lost during its commit.
        self.max_retry_time = DEFAULT_MAX_RETRY_TIME
        #: The read transaction this thread's work runs in (``_read`` joins it).
        self._open_read = threading.local()
        self._lock = threading.Lock()  # the counters and the worker
        self._workers: ThreadPoolExecutor | None = None

    def _pool(self) -> ThreadPoolExecutor:
        """Threads for reads that run beside another (made on first use): a
        context's files ranked by text, its neighbours by vector and its gather."""
        with self._lock:
            if self._workers is None:
                self._workers = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="ctxgraph-neo4j")
            return self._workers

    def close(self) -> None:
        with self._lock:
            workers, self._workers = self._workers, None
        if workers is not None:
            workers.shutdown(wait=True)
        self._driver.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _session(self, access: str = neo4j.WRITE_ACCESS) -> neo4j.Session:
        if self.read_only:
            access = neo4j.READ_ACCESS
        return self._driver.session(database=self._database, default_access_mode=access)

    def _call(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except neo4j_errors.AuthError:
            raise AuthenticationError(f"Neo4j at {self.location} refused the credentials") from None
        except neo4j_errors.ClientError as exc:
            if exc.code == _RATE_LIMITED:
                raise AuthenticationError(_rate_limited(self.location, None)) from None
            raise
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired) as exc:
            raise StoreUnavailableError(f"Neo4j at {self.location} is unavailable: {_first_line(exc)}") from None
        except neo4j_errors.TransientError as exc:  # still failing when the retry time ran out
            raise StoreUnavailableError(
                f"Neo4j at {self.location} kept failing transiently: {exc.code or _first_line(exc)}"
            ) from None

    def _read(self, work: Callable[[ManagedTransaction], T]) -> T:
        """Run ``work`` in a managed read transaction; a read made inside another
        one's work joins that transaction (so several reads can share one)."""
        joined: ManagedTransaction | None = getattr(self._open_read, "tx", None)
        if joined is not None:
            return work(joined)

        def in_tx(tx: ManagedTransaction) -> T:
            self._open_read.tx = tx
            try:
                return work(tx)
            finally:
                self._open_read.tx = None

        def run() -> T:
            with self._lock:
                self.transactions["read"] += 1
            with self._session(neo4j.READ_ACCESS) as session:
                return session.execute_read(in_tx)

        return self._call(run)

    def _refuse_write(self, what: str) -> None:
        if self.read_only:
            raise StoreUnavailableError(f"Neo4j at {self.location} was opened read-only; {what} needs write access")

    def _write(self, work: Callable[[ManagedTransaction], T]) -> T:
        self._refuse_write("this command")

        def run() -> T:
            # The driver retries a transaction that failed before its commit; a
            # connection lost *during* the commit (IncompleteCommit) it does not,
            # as it cannot know whether the commit landed. Every write ctxgraph
            # makes is idempotent, so running it again is safe either way.
            deadline = time.monotonic() + self.max_retry_time
            delay = 0.5
            while True:
                self.transactions["write"] += 1
                try:
                    with self._session() as session:
                        return session.execute_write(work)
                except neo4j_errors.IncompleteCommit:
                    if time.monotonic() + delay > deadline:
                        raise
                    log.info("Neo4j at %s: connection lost during a commit; writing again in %.1fs",
                                self.location, delay)
                    time.sleep(delay)
                    delay = min(delay * 2, 4.0)

        return self._call(run)

    def _rows(self, tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
        with self._lock:
            self.statements_run += 1
        return [_row(r) for r in tx.run(cypher.load(name), params)]


_RATE_LIMITED = "Neo.ClientError.Security.AuthenticationRateLimit"


def _rate_limited(uri: str, user: str | None) -> str:
    who = f" user {user!r}" if user else ""
    return (f"Neo4j at {uri} refuses to log in{who} for now: too many wrong passwords in a row "
            "(check NEO4J_USER / NEO4J_PASSWORD, then retry in a few seconds)")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
