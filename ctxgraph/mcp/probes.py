"""Readiness of ``ctxgraph mcp --http`` (``/readyz``): every project's store
reachable, with its schema applied.

- A project whose store is not open yet (it was down when the server
  started) is opened by the check, which applies its schema: a replica
  started before Neo4j becomes ready by itself once Neo4j answers, without
  waiting for a call that a load balancer would not send it.
- A Neo4j project is then asked, on a driver of the check's own (never a
  connection a tool call is using), which of the schema's indexes and
  constraints exist (:class:`ctxgraph.service.readiness.Neo4jProbe`): one
  round trip, timed into ``ctxgraph_store_check_duration_seconds``. Any missing one, or one whose
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
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ctxgraph.errors import CtxgraphError
from ctxgraph.mcp.metrics import Metrics
from ctxgraph.mcp.projects import Project, Projects

if TYPE_CHECKING:
    from ctxgraph.service.readiness import Neo4jProbe

#: A readiness check that has not answered after this many seconds is "not ready".
CHECK_SECONDS = 5.0
#: The memory status fields a readiness answer shows (not the root, a path of the server's).
MEMORY_FIELDS = ("state", "files_indexed", "files", "percent", "runs")


class Readiness:
    """The readiness of ``projects`` (see the module)."""

    def __init__(self, projects: Projects, metrics: Metrics | None = None, timeout: float = CHECK_SECONDS) -> None:
        self.projects = projects
        self.metrics = metrics
        self.timeout = timeout
        self._probes: dict[str, Neo4jProbe] = {}
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

    def _neo4j(self, project: Project) -> str | None:
        probe = self._probes.get(project.name)
        if probe is None:
            try:
                probe = self._probes[project.name] = project.neo4j_probe(self.timeout)
            except CtxgraphError as exc:  # a password file that cannot be read
                return str(exc)
        reason, seconds = probe.check()
        if reason is None and self.metrics is not None:
            self.metrics.store_seconds.labels(project.name).observe(seconds)
        return reason

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        for probe in self._probes.values():
            probe.close()
        self._probes.clear()


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
