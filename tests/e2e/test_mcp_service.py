"""`ctxgraph mcp --http` as a service (a real subprocess, the embedded store):
`/healthz`, `/readyz` and `/metrics` without the token, the 401 that names the
header to send, the JSON request log, and a graceful SIGTERM. The clients are
the MCP SDK's own and plain HTTP (urllib); the metrics are read with
prometheus-client's parser. Readiness while Neo4j is down:
tests/reliability/test_mcp_readiness_neo4j.py."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
from _mcp_client import SMALL_HANDOFF, HttpServer, McpClient, cli_ok, http, small_store
from _mcp_service import RawSession, base_of, finish, get_json, request, samples, value, wait_for

from tests._git_repo import make_repo

TOKEN = "svc-test-" + os.urandom(12).hex()
#: An argument value no log line may hold.
SECRET_ARGUMENT = "t-never-logged-" + os.urandom(4).hex()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpServer, McpClient]]:
    folder = tmp_path_factory.mktemp("mcp-service")
    small_store(folder / "graph.db")
    server = HttpServer(["--store", str(folder / "graph.db"), "--no-index", "--log-format", "json"], cwd=folder,
                        env={"CTXGRAPH_MCP_TOKEN": TOKEN}, log=folder / "http.log")
    client = http(server.url, TOKEN)
    try:
        yield server, client
    finally:
        client.close()
        assert server.stop() == 0


def test_liveness_and_readiness_need_no_token(served: tuple[HttpServer, McpClient]) -> None:
    base = base_of(served[0].url)
    assert get_json(base + "/healthz") == (200, {"status": "alive"})
    code, body = get_json(base + "/readyz")
    assert code == 200, body
    assert body == {"status": "ready", "projects": {"default": {"store": "ok", "memory": {"state": "off"}}}}
    code, headers, _ = request(base + "/readyz", method="HEAD")
    assert code == 200 and headers["content-type"] == "application/json"
    code, _, _ = request(base + "/nowhere")
    assert code == 404


def test_metrics_count_calls_errors_contexts_and_ingests(served: tuple[HttpServer, McpClient]) -> None:
    server, client = served
    before = samples(server.url)
    context = client.ok("compute_context", {"task_id": "t-refresh"})["context"]
    assert client.fail("get_task", {"task_id": SECRET_ARGUMENT})[0] == 3
    assert client.fail("list_tasks", {"status": "nonsense"})[0] == 2
    ingested = client.ok("ingest_handoff", {"handoff": SMALL_HANDOFF, "embed": False})["result"]
    assert ingested["written"] is False  # the store holds it already
    with pytest.raises(Exception, match="unknown tool"):
        client.call("no_such_tool_" + SECRET_ARGUMENT)
    after = samples(server.url)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    for tool in ("compute_context", "get_task", "list_tasks", "ingest_handoff"):
        assert delta("ctxgraph_mcp_tool_calls_total", tool=tool) == 1, tool
        assert delta("ctxgraph_mcp_tool_duration_seconds_count", tool=tool) == 1, tool
    assert delta("ctxgraph_mcp_tool_errors_total", tool="get_task", kind="not_found") == 1
    assert delta("ctxgraph_mcp_tool_errors_total", tool="list_tasks", kind="invalid") == 1
    assert delta("ctxgraph_mcp_tool_errors_total", tool="unknown", kind="protocol") == 1
    assert delta("ctxgraph_mcp_tool_errors_total", tool="compute_context", kind="not_found") == 0
    assert delta("ctxgraph_contexts_computed_total", project="default") == 1
    assert delta("ctxgraph_context_tokens_delivered_total", project="default") == context["tokens"] > 0
    assert delta("ctxgraph_handoffs_ingested_total", project="default", result="unchanged") == 1
    assert value(after, "ctxgraph_mcp_requests_in_flight") == 0
    assert value(after, "ctxgraph_store_up", project="default") == 1
    assert delta("ctxgraph_http_responses_total", route="mcp", code="200") >= 5
    build = [labels for (name, labels) in after if name == "ctxgraph_build_info"]
    assert build and dict(build[0])["version"] == version("ctxgraph")
    assert not any(SECRET_ARGUMENT in name + repr(labels) for name, labels in after)


def test_a_refused_token_is_told_which_header_to_send(served: tuple[HttpServer, McpClient]) -> None:
    server = served[0]
    call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    for auth, sent in (({}, False), ({"Authorization": "Bearer wrong-" + TOKEN}, True), ({"Authorization": TOKEN}, False)):
        code, got, body = request(server.url, data=call, headers={**headers, **auth})
        assert code == 401
        reply = json.loads(body)
        assert reply["error"] == ("invalid_token" if sent else "unauthorized")
        assert reply["error_description"].startswith("ctxgraph: error: ")
        assert "send the header `Authorization: Bearer <token>`" in reply["error_description"]
        challenge = got["www-authenticate"]
        assert challenge.startswith('Bearer realm="ctxgraph"'), challenge
        assert "send Authorization: Bearer <token>" in challenge
        assert ('error="invalid_token"' in challenge) == sent
        assert TOKEN not in body.decode() + challenge
    with pytest.raises(BaseException):  # noqa: B017 (the SDK's client raises an exception group)
        http(server.url, None)


def test_the_json_log_has_one_line_per_request_and_no_secret(served: tuple[HttpServer, McpClient]) -> None:
    server, client = served
    client.ok("get_task", {"task_id": "t-auth"})
    request(server.url, data=b"{}", headers={"Content-Type": "application/json"})  # a 401
    text = server.log.read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.splitlines()]  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    assert any(line["message"].startswith("serving http://") for line in lines)
    calls = [line for line in lines if line.get("event") == "mcp_request" and line.get("tool") == "get_task"]
    assert calls and calls[-1]["status"] == "ok" and calls[-1]["project"] == "default"
    assert isinstance(calls[-1]["duration_ms"], float) and calls[-1]["method"] == "tools/call"
    assert any(line.get("error_kind") == "not_found" for line in calls)
    refused = [line for line in lines if line.get("event") == "http_request" and line.get("code") == 401]
    assert refused and refused[-1]["path"] == "/mcp"
    assert TOKEN not in text and SECRET_ARGUMENT not in text and "Bearer" not in text


def test_readiness_and_metrics_show_the_index_and_history_progress(tmp_path: Path) -> None:
    """A project folder (a git work tree) indexed in the background: /readyz
    reports the index (never as a reason), /metrics its files and runs and the
    history's imports."""
    root = tmp_path / "shop"
    make_repo(root)
    server = HttpServer(["--project", f"shop={root}", "--create"], cwd=tmp_path, env={"CTXGRAPH_MCP_TOKEN": TOKEN},
                        log=tmp_path / "http.log")
    try:
        base = base_of(server.url)
        code, body = get_json(base + "/readyz")
        assert code == 200 and body["projects"]["shop"]["store"] == "ok", body
        memory = body["projects"]["shop"]["memory"]
        assert memory["state"] != "off" and "root" not in memory
        assert ("first_index" in memory) == (memory["runs"] == 0), memory

        def indexed() -> bool:
            found = samples(server.url)
            return (value(found, "ctxgraph_memory_index_runs", project="shop") >= 1
                    and value(found, "ctxgraph_history_runs", project="shop") >= 1)
        wait_for(indexed, "a first index and a history import")
        found = samples(server.url)
        assert value(found, "ctxgraph_memory_files_found", project="shop") == 4  # make_repo's files
        assert value(found, "ctxgraph_memory_files_indexed", project="shop") == 4
        assert value(found, "ctxgraph_history_partial", project="shop") == 0
        code, body = get_json(base + "/readyz")
        assert code == 200 and "first_index" not in body["projects"]["shop"]["memory"], body
    finally:
        assert server.stop() == 0


def _server(folder: Path, *args: str) -> HttpServer:
    small_store(folder / "graph.db")
    return HttpServer(["--store", str(folder / "graph.db"), "--no-index", *args], cwd=folder,
                      env={"CTXGRAPH_MCP_TOKEN": TOKEN}, log=folder / "http.log")


def test_sigterm_refuses_new_requests_and_lets_the_one_in_flight_finish(tmp_path: Path) -> None:
    """A request whose body is still arriving is in flight: after SIGTERM the
    server waits for it (its handoff is ingested, its client gets the result),
    while /readyz and every new MCP request get 503; then it exits 0."""
    server = _server(tmp_path, "--shutdown-timeout", "120")
    try:
        session = RawSession(server.url, TOKEN)
        body = session.call_body("ingest_handoff", {"handoff": SMALL_HANDOFF.replace("t-auth", "t-refresh"),
                                                    "embed": False})
        held = session.begin(body, len(body) // 2)
        wait_for(lambda: value(samples(server.url), "ctxgraph_mcp_requests_in_flight") == 1, "the request in flight")
        server.proc.send_signal(signal.SIGTERM)
        base = base_of(server.url)
        wait_for(lambda: get_json(base + "/readyz")[0] == 503, "/readyz 503")
        assert get_json(base + "/readyz")[1] == {"status": "shutting down", "reason": "the server is shutting down"}
        code, headers, refused = request(server.url, data=session.call_body("list_tasks", {}), headers=session.headers)
        assert code == 503 and headers["retry-after"] == "1"
        assert json.loads(refused)["error_description"].startswith("ctxgraph: error: the server is shutting down")
        assert get_json(base + "/healthz")[0] == 200
        status, reply = finish(held, body[len(body) // 2:])
        assert status == 200 and reply["result"]["isError"] is False, reply
        assert reply["result"]["structuredContent"]["result"]["task_id"] == "t-refresh"
        assert server.proc.wait(120) == 0
    finally:
        server.stop()
    log = server.log.read_text(encoding="utf-8")
    assert "SIGTERM: shutting down (1 request(s) in flight" in log and log.rstrip().endswith("stopped"), log
    shown = json.loads(cli_ok("task", "show", "t-refresh", "--format", "json", "--store", str(tmp_path / "graph.db"),
                              cwd=tmp_path))
    assert shown["status"] == "completed" and shown["outcome_summary"] == "Added JWT validation middleware", shown


def test_sigterm_cuts_off_what_is_still_in_flight_at_the_bound(tmp_path: Path) -> None:
    """A request that never completes is cut off once --shutdown-timeout is
    near; the server says so and exits; nothing it held is written."""
    server = _server(tmp_path, "--shutdown-timeout", "6")
    try:
        session = RawSession(server.url, TOKEN)
        body = session.call_body("add_task", {"task_id": "t-cut"})
        held = session.begin(body, 5)
        wait_for(lambda: value(samples(server.url), "ctxgraph_mcp_requests_in_flight") == 1, "the request in flight")
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(120) == 0
        held.close()
    finally:
        server.stop()
    log = server.log.read_text(encoding="utf-8")
    assert log.rstrip().endswith("stopped (requests still in flight were cut off)"), log
    assert "Traceback" not in log
    listed = cli_ok("task", "list", "--format", "json", "--store", str(tmp_path / "graph.db"), cwd=tmp_path)
    assert "t-cut" not in listed
