"""What ``ctxgraph mcp --http`` counts, served at ``/metrics`` in Prometheus'
text format (the official ``prometheus-client``).

Every metric lives in the server's own :class:`~prometheus_client.CollectorRegistry`
(never the library's global one), so two servers in one process, or the tests,
never share a count. Labels take few values: a tool's name (a name no tool has
is counted as ``unknown``), an error kind, a served project's name, an HTTP
route and status code; never a task id, an argument or a token.

- per tool: ``ctxgraph_mcp_tool_calls_total{tool}``,
  ``ctxgraph_mcp_tool_errors_total{tool,kind}`` and the latency histogram
  ``ctxgraph_mcp_tool_duration_seconds{tool}``;
- ``ctxgraph_mcp_requests_in_flight`` (HTTP requests to the MCP path being
  served) and ``ctxgraph_http_responses_total{route,code}``;
- ``ctxgraph_contexts_computed_total{project}``,
  ``ctxgraph_context_tokens_delivered_total{project}``,
  ``ctxgraph_handoffs_ingested_total{project,result}`` (``written`` or
  ``unchanged``);
- the background index, read when scraped: ``ctxgraph_memory_files_indexed``,
  ``ctxgraph_memory_files_found`` and ``ctxgraph_memory_index_runs``
  (0 while the first index is under way), each ``{project}``;
- the store as the readiness check finds it: ``ctxgraph_store_up{project}``
  and ``ctxgraph_store_check_duration_seconds{project}``;
- ``ctxgraph_build_info{version,python,mcp}``.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

#: Seconds: from a cached read (a few ms) to a first context on a cold process (tens of seconds).
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
#: A store's round trip: a query of the schema's indexes.
STORE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
#: The label a tool name no tool has is counted under.
UNKNOWN_TOOL = "unknown"
CONTENT_TYPE = CONTENT_TYPE_LATEST


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


class MemoryCollector(Collector):
    """The background index's progress of each project, read from its status when scraped."""

    def __init__(self, statuses: Callable[[], Mapping[str, Mapping[str, Any]]]) -> None:
        self._statuses = statuses

    def collect(self) -> Iterable[Metric]:
        indexed = GaugeMetricFamily("ctxgraph_memory_files_indexed",
                                    "Files of the project's root indexed in the latest index run", labels=["project"])
        found = GaugeMetricFamily("ctxgraph_memory_files_found",
                                  "Files found in the project's root in the latest index run", labels=["project"])
        runs = GaugeMetricFamily("ctxgraph_memory_index_runs",
                                 "Index runs completed since the server started (0: the first is under way)",
                                 labels=["project"])
        for project, status in sorted(self._statuses().items()):
            if status.get("state") == "off":
                continue
            indexed.add_metric([project], float(status.get("files_indexed", 0)))
            found.add_metric([project], float(status.get("files", 0)))
            runs.add_metric([project], float(status.get("runs", 0)))
        return [indexed, found, runs]

    def describe(self) -> Iterable[Metric]:
        return []


class Metrics:
    """The counters of one server (see the module)."""

    def __init__(self, tools: Iterable[str] = (),
                 memory: Callable[[], Mapping[str, Mapping[str, Any]]] | None = None) -> None:
        disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series beside each counter
        self.tools = frozenset(tools)
        self.registry = r = CollectorRegistry()
        self.tool_calls = Counter("ctxgraph_mcp_tool_calls", "Tool calls, by tool", ["tool"], registry=r)
        self.tool_errors = Counter("ctxgraph_mcp_tool_errors", "Tool calls that ended in an error, by tool and kind",
                                   ["tool", "kind"], registry=r)
        self.tool_seconds = Histogram("ctxgraph_mcp_tool_duration_seconds", "Seconds a tool call took, by tool",
                                      ["tool"], buckets=LATENCY_BUCKETS, registry=r)
        self.in_flight = Gauge("ctxgraph_mcp_requests_in_flight",
                               "HTTP requests to the MCP path being served (not counting event streams)", registry=r)
        self.http_responses = Counter("ctxgraph_http_responses", "HTTP responses, by route and status code",
                                      ["route", "code"], registry=r)
        self.contexts = Counter("ctxgraph_contexts_computed", "Contexts computed and delivered by compute_context",
                                ["project"], registry=r)
        self.tokens = Counter("ctxgraph_context_tokens_delivered", "Tokens of the contexts delivered",
                              ["project"], registry=r)
        self.ingests = Counter("ctxgraph_handoffs_ingested", "Handoffs ingested, by result (written, unchanged)",
                               ["project", "result"], registry=r)
        self.store_up = Gauge("ctxgraph_store_up", "1 when the project's store passed the latest readiness check",
                              ["project"], registry=r)
        self.store_seconds = Histogram("ctxgraph_store_check_duration_seconds",
                                       "Seconds the readiness check's round trip to the store took",
                                       ["project"], buckets=STORE_BUCKETS, registry=r)
        Info("ctxgraph_build", "The ctxgraph serving", registry=r).info(
            {"version": _version("ctxgraph"), "python": platform.python_version(), "mcp": _version("mcp")})
        if memory is not None:
            r.register(MemoryCollector(memory))

    def tool(self, name: str) -> str:
        """The label of tool ``name``: itself when a tool has it, else :data:`UNKNOWN_TOOL`."""
        return name if name in self.tools else UNKNOWN_TOOL

    def observe_call(self, tool: str, seconds: float, error_kind: str | None) -> None:
        label = self.tool(tool)
        self.tool_calls.labels(label).inc()
        self.tool_seconds.labels(label).observe(seconds)
        if error_kind is not None:
            self.tool_errors.labels(label, error_kind).inc()

    def render(self) -> bytes:
        """The registry in Prometheus' text format."""
        return bytes(generate_latest(self.registry))
