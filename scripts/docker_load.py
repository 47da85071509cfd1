"""The MCP side of scripts/docker_stack.py: calls through the stack's ctxgraph
servers with the official MCP SDK's client (streamable HTTP, bearer token),
and the load run with its faults.

Load: CLIENTS clients for DURATION seconds, each on one replica (alternately);
half add a task and ingest its handoff, over and over, half ask for the
context of an unsaved task. Meanwhile a monitor polls every replica's
``/healthz`` and ``/readyz`` (four times a second), and the faults the caller
gives run at their times (a replica's process killed, Neo4j restarted).
Every call's outcome is recorded with its time, so that the caller can check
that errors fell only in the windows where a replica or Neo4j was down.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK is imported on use: docker_stack.py runs its first steps without it
    import httpx2
    from mcp import Client

CALL_TIMEOUT_S = 60.0


@asynccontextmanager
async def session(base: str, token: str) -> AsyncIterator[Client]:
    """An MCP client session on the server at ``base`` (``http://HOST:PORT``)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=CALL_TIMEOUT_S)) as http, \
            Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
        yield client


class ToolError(Exception):
    """A tool's answer with isError: its text."""


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The structured content of a tool call; a tool error raises :class:`ToolError`."""
    result = await asyncio.wait_for(client.call_tool(tool, arguments), CALL_TIMEOUT_S)
    if result.is_error:
        raise ToolError(" ".join(getattr(block, "text", "") for block in result.content)[:300])
    assert isinstance(result.structured_content, dict), result.content
    return result.structured_content


def handoff(task_id: str, n: int) -> str:
    return json.dumps({
        "task_id": task_id, "summary": f"Load run handoff {n}: rotated the signing keys", "success": True,
        "patterns_discovered": [{"pattern": f"Keep old signing keys valid for a day ({task_id})",
                                 "applies_to": ["jwt", "auth"]}],
        "gotchas": [{"issue": f"Clock skew breaks token expiry checks ({task_id})", "severity": "medium"}],
    })


async def add_and_ingest(client: Client, task_id: str, n: int) -> dict[str, Any]:
    await call(client, "add_task", {"task_id": task_id, "name": f"Rotate the JWT signing keys, step {n}"})
    return await call(client, "ingest_handoff", {"handoff": handoff(task_id, n), "source": f"{task_id}.json"})


async def context_of_unsaved(client: Client, n: int) -> dict[str, Any]:
    task = {"id": f"adhoc-{n}", "name": "Add JWT verification to the login route",
            "objective": "Reject expired tokens; keep the old signing keys valid during rotation"}
    return await call(client, "compute_context", {"task": task})


async def smoke(base: str, token: str, tag: str) -> list[str]:
    """compute_context and ingest_handoff through one replica; what went wrong (nothing: [])."""
    problems = []
    async with session(base, token) as client:
        written = await add_and_ingest(client, f"smoke-{tag}", 0)
        if written.get("result", {}).get("written") is not True:
            problems.append(f"{base}: ingest_handoff did not write: {written}")
        stored = await call(client, "compute_context", {"task_id": f"smoke-{tag}"})
        if stored.get("context", {}).get("task_id") != f"smoke-{tag}":
            problems.append(f"{base}: compute_context of the stored task: {str(stored)[:200]}")
        unsaved = await context_of_unsaved(client, 0)
        if "markdown" not in unsaved.get("context", {}):
            problems.append(f"{base}: compute_context of an unsaved task: {str(unsaved)[:200]}")
    return problems


@dataclass
class Outcome:
    at: float  # when the call began, seconds since the run's start
    end: float  # when its answer (or error) came
    client: int
    replica: int
    op: str
    ok: bool
    ms: float
    error: str = ""


@dataclass
class Run:
    bases: list[str]
    token: str
    clients: int
    duration: float
    started: float = 0.0
    outcomes: list[Outcome] = field(default_factory=list)
    acknowledged: set[str] = field(default_factory=set)
    #: (seconds since start, replica, "healthz"/"readyz", HTTP status or 0)
    probes: list[tuple[float, int, str, int]] = field(default_factory=list)
    #: (seconds since start, what happened)
    events: list[tuple[float, str]] = field(default_factory=list)

    def now(self) -> float:
        return time.monotonic() - self.started

    def note(self, what: str) -> None:
        self.events.append((self.now(), what))
        print(f"  [{self.now():5.1f} s] {what}", flush=True)


async def _client(run: Run, k: int, ingesting: bool, stop: float) -> None:
    replica = k % len(run.bases)
    n = 0
    while time.monotonic() < stop:
        began = time.monotonic()
        op = "ingest" if ingesting else "context"
        try:
            async with session(run.bases[replica], run.token) as client:
                while time.monotonic() < stop:
                    n += 1
                    began = time.monotonic()
                    if ingesting:
                        task_id = f"load-{k}-{n}"
                        answer = await add_and_ingest(client, task_id, n)
                        if answer.get("result", {}).get("task_id") == task_id:
                            run.acknowledged.add(task_id)
                    else:
                        await context_of_unsaved(client, n)
                    run.outcomes.append(Outcome(began - run.started, run.now(), k, replica, op, True,
                                                (time.monotonic() - began) * 1000))
        except Exception as exc:  # the replica or Neo4j is down: recorded, then a new session
            while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
                exc = exc.exceptions[0]
            text = f"{type(exc).__name__}: {exc}"[:300]
            run.outcomes.append(Outcome(began - run.started, run.now(), k, replica, op, False,
                                        (time.monotonic() - began) * 1000, text))
            await asyncio.sleep(0.5)


async def _probe(http: httpx2.AsyncClient, url: str) -> int:
    try:
        return (await http.get(url, timeout=2.0)).status_code
    except Exception:
        return 0


async def _monitor(run: Run, clients_done: float, stop: float) -> None:
    """Probes until ``stop``, or earlier once the clients are done and every replica is ready."""
    import httpx2

    async with httpx2.AsyncClient() as http:
        while time.monotonic() < stop:
            ready = True
            for replica, base in enumerate(run.bases):
                for path in ("healthz", "readyz"):
                    code = await _probe(http, f"{base}/{path}")
                    run.probes.append((run.now(), replica, path, code))
                    ready = ready and code == 200
            if ready and time.monotonic() > clients_done:
                return
            await asyncio.sleep(0.25)


async def _faults(run: Run, faults: list[tuple[float, str, Callable[[], Awaitable[None]]]]) -> None:
    for at, name, action in sorted(faults, key=lambda f: f[0]):
        await asyncio.sleep(max(0.0, at - run.now()))
        run.note(f"{name} ...")
        await action()
        run.note(f"{name}: done")


async def load(run: Run, faults: list[tuple[float, str, Callable[[], Awaitable[None]]]], settle: float) -> None:
    """The load run: clients for ``run.duration`` s with ``faults``; the monitor until every
    replica is ready again, at most ``settle`` s longer."""
    run.started = time.monotonic()
    stop = run.started + run.duration
    tasks = [asyncio.create_task(_client(run, k, k < run.clients // 2, stop)) for k in range(run.clients)]
    tasks.append(asyncio.create_task(_monitor(run, stop, stop + settle)))
    tasks.append(asyncio.create_task(_faults(run, faults)))
    await asyncio.gather(*tasks)


def percentiles(values: list[float]) -> tuple[float, float]:
    """p50 and p95 (nearest rank) of ``values``."""
    ordered = sorted(values)
    if not ordered:
        return float("nan"), float("nan")
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]
