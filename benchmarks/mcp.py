"""What the MCP server adds to a context: compute over stdio and over HTTP
against the same call in process.

For each store and size, a seeded synthetic project (``benchmarks.generator``,
loaded through the API as the suite loads it) is computed for its stored
query tasks, in turn, ``--calls`` times per mode after ``--warmup`` untimed
calls:

- ``inproc``: ``ContextService.compute(task_id)`` in this process;
- ``tool``: the ``compute_context`` tool's own function in this process (the
  compute plus the result it builds: JSON, size measure);
- ``stdio``: a ``compute_context`` tool call from the SDK's client to
  ``ctxgraph mcp`` started as a subprocess (newline-delimited JSON-RPC on a pipe);
- ``http``: the same call to ``ctxgraph mcp --http 127.0.0.1:0`` with a
  bearer token (streamable HTTP, one session);
- ``client_schema_check``: of the stdio and HTTP times, what the SDK's
  client spends checking each result against the tool's output schema
  (``jsonschema``, in Python), timed again on its own.

Client-side times: the SDK client's ``call_tool`` from request to parsed and
schema-validated result. The servers open the same embedded file (or Neo4j
database) the in-process service loaded, one after the other.

    python -m benchmarks.mcp [--sizes 1000,10000] [--stores local,neo4j] [--calls 200] [--json]

Neo4j runs only with ``--stores`` naming it and ``NEO4J_URI`` set; its database is EMPTIED.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from benchmarks.generator import generate
from benchmarks.suite import load, log, machine, open_service, percentile, reset, stores_of, timing_parser
from ctxgraph.mcp.limits import DEFAULT_MAX_TOKENS
from ctxgraph.mcp.projects import Project, Projects, spec_for
from ctxgraph.mcp.responses import wire_tokens
from ctxgraph.mcp.tools import CtxgraphTools


def stats(times: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(times, 50), 2), "p95_ms": round(percentile(times, 95), 2)}


def timed(call: Callable[[str], Any], tasks: list[str], warmup: int, calls: int) -> list[float]:
    for n in range(warmup):
        call(tasks[n % len(tasks)])
    out = []
    for n in range(calls):
        t = time.perf_counter()
        call(tasks[n % len(tasks)])
        out.append((time.perf_counter() - t) * 1000)
    return out


async def client_times(connect: Callable[[], AbstractAsyncContextManager[Client]], tasks: list[str],
                       warmup: int, calls: int) -> tuple[list[float], list[float]]:
    """Times of ``calls`` tool calls, and of the client's own output-schema check of each result."""
    async with connect() as client:
        async def one(task: str) -> CallToolResult:
            result = await client.call_tool("compute_context", {"task_id": task})
            if result.is_error:
                raise SystemExit(f"compute_context {task} failed: {result.content}")
            return result

        for n in range(warmup):
            await one(tasks[n % len(tasks)])
        out, checks = [], []
        for n in range(calls):
            t = time.perf_counter()
            result = await one(tasks[n % len(tasks)])
            out.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            await client.session.validate_tool_result("compute_context", result)
            checks.append((time.perf_counter() - t) * 1000)
        return out, checks


def server_env(store: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTXGRAPH_", "NEO4J_"))}
    if store == "neo4j":
        env.update({k: v for k, v in os.environ.items() if k.startswith("NEO4J_")})
    return env


def over_stdio(args: list[str], env: dict[str, str], tasks: list[str], warmup: int,
               calls: int) -> tuple[list[float], list[float]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "ctxgraph", "mcp", *args], env=env)
    with open(os.devnull, "w", encoding="utf-8") as quiet:
        return anyio.run(client_times, lambda: Client(stdio_client(params, errlog=quiet)), tasks, warmup, calls)


def over_http(args: list[str], env: dict[str, str], tasks: list[str], warmup: int, calls: int,
              folder: Path) -> tuple[list[float], list[float]]:
    token = secrets.token_urlsafe(32)
    log_path = folder / "mcp-http.log"
    with log_path.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen([sys.executable, "-m", "ctxgraph", "mcp", "--http", "127.0.0.1:0", *args],
                                env={**env, "CTXGRAPH_MCP_TOKEN": token}, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 120
            while not (found := re.search(r"serving (http://\S+/mcp)", log_path.read_text(encoding="utf-8"))):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"ctxgraph mcp --http did not start: {log_path.read_text(encoding='utf-8')}")
                time.sleep(0.1)
            url = found.group(1)

            @asynccontextmanager
            async def connect() -> Any:
                async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                              timeout=httpx2.Timeout(30, read=300)) as http, \
                        Client(streamable_http_client(url, http_client=http)) as client:
                    yield client

            return anyio.run(client_times, connect, tasks, warmup, calls)
        finally:
            proc.terminate()
            proc.wait(30)


def run(store: str, nodes: int, seed: int, warmup: int, calls: int) -> dict[str, Any]:
    def say(message: str) -> None:
        log(f"[mcp {store} {nodes:,}] {message}")

    ds = generate(nodes, seed)
    tasks = list(ds.queries)
    row: dict[str, Any] = {"store": store, "nodes": nodes, "queries": len(tasks), "calls": calls}
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-mcp-") as tmp:
        folder = Path(tmp)
        svc = open_service(store, folder)
        try:
            reset(svc, store, say)
            load(svc, ds, len(ds.handoffs), say)
            row["graph_nodes"] = sum(svc.stats()["labels"].values())
            say("in process")
            row["inproc"] = stats(timed(lambda t: svc.compute(t), tasks, warmup, calls))
        finally:
            svc.close()
        where = os.environ["NEO4J_URI"] if store == "neo4j" else str(folder / "bench.db")
        projects = Projects([Project(spec_for("default", where))])
        try:
            tools = CtxgraphTools(projects, DEFAULT_MAX_TOKENS)
            sizes = [wire_tokens(tools.compute_context(task_id=t)) for t in tasks]
            row["response_tokens"] = round(sum(sizes) / len(sizes))
            say("the tool's function in process")
            row["tool"] = stats(timed(lambda t: tools.compute_context(task_id=t), tasks, warmup, calls))
        finally:
            projects.close()
        # --no-index: the rows time requests; a Neo4j server's root would be the work tree
        # around the current folder (this repository), indexed in the background meanwhile
        args = ["--no-index"] + ([] if store == "neo4j" else ["--store", where])
        env = server_env(store)
        say("over stdio")
        times, checks = over_stdio(args, env, tasks, warmup, calls)
        row["stdio"] = stats(times)
        say("over streamable HTTP")
        times, more_checks = over_http(args, env, tasks, warmup, calls, folder)
        row["http"] = stats(times)
        row["client_schema_check"] = stats(checks + more_checks)
        if store == "neo4j":
            svc = open_service(store, folder)
            try:
                reset(svc, store, say)
            finally:
                svc.close()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = timing_parser("python -m benchmarks.mcp", __doc__, sizes="1000,10000")
    args = parser.parse_args(argv)
    stores = stores_of(parser, args)
    rows = [run(store, int(size), args.seed, args.warmup, args.calls)
            for size in args.sizes.split(",") if size.strip() for store in stores]
    if args.json:
        print(json.dumps({"rows": rows, "machine": machine()}, indent=2))
        return 0
    print("| store | nodes | graph | in-process p50 / p95 ms | tool fn p50 / p95 | stdio p50 / p95 | "
          "HTTP p50 / p95 | client schema check p50 / p95 | stdio − in-process (p50) | HTTP − in-process (p50) "
          "| response tokens |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [f"{r[m]['p50_ms']:.2f} / {r[m]['p95_ms']:.2f}"
                 for m in ("inproc", "tool", "stdio", "http", "client_schema_check")]
        extra = [f"{r[m]['p50_ms'] - r['inproc']['p50_ms']:+.2f}" for m in ("stdio", "http")]
        print(f"| {r['store']} | {r['nodes']:,} | {r['graph_nodes']:,} | {' | '.join(cells)} | {' | '.join(extra)} | "
              f"{r['response_tokens']:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
