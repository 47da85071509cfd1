"""Readiness of ``ctxgraph mcp --http`` (``/readyz``): every project's store
reachable, with its schema applied.

- A project whose store is not open yet (it was down when the server
  started) is opened by the check, which applies its schema: a replica
  started before Neo4j becomes ready by itself once Neo4j answers, without
  waiting for a call that a load balancer would not send it.
- A Neo4j project is then asked, on a driver of the check's own (never a
  connection a tool call is using), which of the schema's indexes and
  constraints exist (``ready_schema.cypher``): one round trip, timed into
  ``ctxgraph_store_check_duration_seconds``. Any missing one, or one whose
  index failed, is a reason not to be ready. An embedded store is ready once
  open (its schema version was checked then).
- The background index is reported, never a reason: a first index still
  under way (``runs`` 0) answers 200 with its progress, since contexts are
  computed meanwhile from what is indexed.

One check runs at a time (probes arriving meanwhile share its answer), on a
thread of its own; one that takes longer than :data:`CHECK_SECONDS` answers
503. The body never holds a token, a password or a path of the server's.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ctxgraph import cypher
from ctxgraph.errors import CtxgraphError
from ctxgraph.mcp.metrics import Metrics
from ctxgraph.mcp.projects import Project, Projects

if TYPE_CHECKING:
    from neo4j import Driver

#: A readiness check that has not answered after this many seconds is "not ready".
CHECK_SECONDS = 5.0
#: The memory status fields a readiness answer shows (not the root, a path of the server's).
MEMORY_FIELDS = ("state", "files_indexed", "files", "percent", "runs")
_SCHEMA_NAME = re.compile(r"^\s*CREATE\s+(?:[A-Z]+\s+)?(?:CONSTRAINT|INDEX)\s+(\w+)\s+IF NOT EXISTS", re.M)


def schema_names() -> list[str]:
    """The names of the indexes and constraints ``schema.cypher`` creates."""
    names = []
    for statement in cypher.statements("schema"):
        found = _SCHEMA_NAME.search(statement)
        if found:
            names.append(found.group(1))
    return names


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()).rstrip(":")
    return text[:300] if text else type(exc).__name__


class Readiness:
    """The readiness of ``projects`` (see the module)."""

    def __init__(self, projects: Projects, metrics: Metrics | None = None, timeout: float = CHECK_SECONDS) -> None:
        self.projects = projects
        self.metrics = metrics
        self.timeout = timeout
        self._names = schema_names()
        self._drivers: dict[str, Driver] = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxgraph-readyz")
        self._lock = threading.Lock()
        self._pending: Future[tuple[bool, dict[str, Any]]] | None = None

    async def answer(self) -> tuple[int, dict[str, Any]]:
        """The HTTP status and JSON body of ``/readyz``."""
        with self._lock:
            if self._pending is None or self._pending.done():
                self._pending = self._pool.submit(self.check)
            pending = self._pending
        try:
            ready, body = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(pending)), self.timeout)
        except TimeoutError:
            return 503, {"status": "not ready",
                         "reason": f"the stores did not answer the readiness check within {self.timeout:g} s"}
        return (200 if ready else 503), body

    def check(self) -> tuple[bool, dict[str, Any]]:
        """Every project's state; ready when none has a reason."""
        states: dict[str, Any] = {}
        reasons = []
        for project in self.projects.by_name.values():
            reason = self._store(project)
            state: dict[str, Any] = {"store": "ok" if reason is None else "unavailable"}
            if reason is not None:
                state["reason"] = reason
                reasons.append(f"project {project.name}: {reason}")
            state["memory"] = memory_progress(project)
            states[project.name] = state
            if self.metrics is not None:
                self.metrics.store_up.labels(project.name).set(0 if reason else 1)
        body: dict[str, Any] = {"status": "not ready" if reasons else "ready"}
        if reasons:
            body["reason"] = "; ".join(reasons)
        body["projects"] = states
        return not reasons, body

    def _store(self, project: Project) -> str | None:
        """Why ``project``'s store is not ready (None: it is)."""
        if not project.is_open:
            reason = project.try_open()  # applies the schema
            if reason is not None:
                return reason
        if project.spec.kind != "neo4j":
            return None
        return self._neo4j(project)

    def _driver(self, project: Project) -> Driver:
        driver = self._drivers.get(project.name)
        if driver is None:
            from neo4j import GraphDatabase

            settings = project.neo4j_settings()
            auth = (settings.user, settings.password) if settings.password is not None else None
            # every connection checked before use: the first check after a restart of Neo4j is right
            driver = GraphDatabase.driver(settings.uri, auth=auth, connection_timeout=self.timeout,
                                          max_transaction_retry_time=0, liveness_check_timeout=0,
                                          max_connection_pool_size=1, notifications_min_severity="OFF")
            self._drivers[project.name] = driver
        return driver

    def _neo4j(self, project: Project) -> str | None:
        from neo4j import RoutingControl
        from neo4j import exceptions as neo4j_errors

        where = project.spec.location
        began = time.perf_counter()
        try:
            records = self._driver(project).execute_query(
                cypher.load("ready_schema"), names=self._names, database_=project.spec.database,
                routing_=RoutingControl.READ).records
        except neo4j_errors.AuthError:
            return f"Neo4j at {where} refused the credentials"
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError, CtxgraphError) as exc:
            return f"cannot reach Neo4j at {where}: {_one_line(exc)}"
        if self.metrics is not None:
            self.metrics.store_seconds.labels(project.name).observe(time.perf_counter() - began)
        states = {str(r["name"]): str(r["state"]) for r in records}
        missing = [n for n in self._names if n not in states]
        if missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            return (f"the schema is not applied on Neo4j at {where}: {len(missing)} of its {len(self._names)} "
                    f"indexes and constraints are missing ({shown})")
        failed = sorted(n for n, s in states.items() if s == "FAILED")
        if failed:
            return f"indexes failed on Neo4j at {where}: {', '.join(failed[:5])}"
        return None

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        for driver in self._drivers.values():
            driver.close()
        self._drivers.clear()


def memory_progress(project: Project) -> dict[str, Any]:
    """The background index's progress, as a readiness answer shows it (a first
    index under way says so: contexts use what is indexed so far)."""
    status = project.memory_status()
    if status.get("state") == "off":
        return {"state": "off"}
    shown = {k: status[k] for k in MEMORY_FIELDS if k in status}
    if not status.get("runs"):
        shown["first_index"] = "partial: contexts use the files indexed so far"
    return shown
