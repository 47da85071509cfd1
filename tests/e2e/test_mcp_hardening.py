"""`ctxgraph mcp` against hostile callers, run for real:

- fuzzing: every tool and resource with over-long, wrongly typed and unknown
  arguments; each answer is one ctxgraph error line within the response cap,
  the server logs no traceback and the store is unchanged;
- DNS rebinding: on every kind of loopback address `--no-auth` accepts, a
  request whose Host or Origin names another site is refused;
- per-project tokens: a project's token reaches that project only.

One server per purpose, shared by the module (the HTTP ones start together)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

import pytest
from _mcp_client import SMALL_HANDOFF, HttpServer, McpClient, clean_env, http, small_store, stdio

from ctxgraph.core.documents import MAX_DOCUMENT_BYTES
from ctxgraph.mcp.responses import wire_tokens
from ctxgraph.service import ContextService

CAP = 1_000  # the smallest --max-response-tokens: every answer must fit it
LONG = 300_000  # characters of an over-long string (above every limit but the handoff's)
TOOLS = ["compute_context", "explain_context", "search_knowledge", "get_task", "list_tasks", "graph_stats",
         "list_projects", "list_conflicts", "add_task", "ingest_handoff", "block_task", "unblock_task", "sync"]
#: Valid values of the required arguments (so that the one bad value is what is refused).
REQUIRED = {"task_id": "t-auth", "text": "jwt", "handoff": SMALL_HANDOFF, "reason": "waiting"}
#: Loopback addresses of each kind --no-auth accepts: localhost (listening on 127.0.0.1, which it names
#: too), another 127.0.0.0/8 address (beyond the SDK's own list of three) and IPv6's.
LOOPBACKS = ["localhost", "127.0.0.2", "[::1]"]
TOKENS = {"all": "all-" + os.urandom(12).hex(), "a": "proj-a-" + os.urandom(12).hex(),
          "b": "proj-b-" + os.urandom(12).hex()}


def export(store: Path, to: Path) -> str:
    svc = ContextService.open(store, read_only=True)
    try:
        svc.export_to(to)
    finally:
        svc.close()
    return to.read_text(encoding="utf-8")


@dataclass
class Fuzzed:
    client: McpClient
    store: Path
    log: Path
    before: str
    schemas: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    folder = tmp_path_factory.mktemp("mcp-fuzz")
    store = small_store(folder / "graph.db")
    before = export(store, folder / "before.jsonl")
    log = folder / "stdio.log"
    with log.open("w", encoding="utf-8") as errlog:
        c = stdio(["--store", str(store), "--max-response-tokens", str(CAP)], cwd=folder, errlog=errlog)
        try:
            yield Fuzzed(c, store, log, before, {t.name: t.input_schema for t in c.tools()})
        finally:
            c.close()


def kinds_of(schema: dict[str, Any]) -> set[str]:
    return {s["type"] for s in schema.get("anyOf", [schema]) if "type" in s}


def bad_values(name: str, schema: dict[str, Any]) -> list[tuple[str, Any]]:
    """(what, value) pairs the argument ``name`` must refuse."""
    kinds = kinds_of(schema)
    cases: list[tuple[str, Any]] = []
    if "string" in kinds:
        cases += [("over-long", "x" * (MAX_DOCUMENT_BYTES + 1 if name == "handoff" else LONG)), ("a number", 12345)]
    if "integer" in kinds:
        cases += [("a string number", "100"), ("a float", 1.5)]
    if "boolean" in kinds:
        cases += [("a string boolean", "yes"), ("a number boolean", 1)]
    if "array" in kinds:
        cases += [("a list as JSON text", '["a"]'), ("too many items", ["t-auth"] * 1_000)]
    if "object" in kinds:
        cases += [("an object as JSON text", '{"id": "x"}'), ("an over-long field", {"id": "x", "objective": "o" * LONG}),
                  ("an unknown field", {"id": "x", "owner": "me"})]
    return cases


def check_refused(f: Fuzzed, tool: str, arguments: dict[str, Any], names: str) -> str:
    result = f.client.call(tool, arguments)
    assert result.is_error, (tool, names)
    assert result.structured_content is None and len(result.content) == 1
    line = result.content[0].text  # type: ignore[union-attr]
    assert line.startswith("ctxgraph: error: ") and "\n" not in line, line
    assert len(line) <= 2_100 and "x" * 201 not in line and "o" * 201 not in line, line[:300]
    assert wire_tokens(result) <= CAP
    return str(line)


@pytest.mark.parametrize("tool", TOOLS)
def test_fuzz_tool_arguments(fuzzed: Fuzzed, tool: str) -> None:
    schema = fuzzed.schemas[tool]
    assert schema["additionalProperties"] is False
    required = {k: REQUIRED[k] for k in schema.get("required", [])}
    for name, prop in schema["properties"].items():
        for what, value in bad_values(name, prop):
            line = check_refused(fuzzed, tool, {**required, name: value}, f"{name}: {what}")
            if name == "handoff" and what == "over-long":  # the CLI's document limit, in bytes
                assert line.endswith(f"the limit is {MAX_DOCUMENT_BYTES:,}"), line
            else:
                assert line.startswith(f"ctxgraph: error: {tool}: ") and repr(name) in line, line
    unknown = check_refused(fuzzed, tool, {**required, "x" * LONG: 1}, "an unknown argument")
    assert unknown.startswith(f"ctxgraph: error: {tool}: unknown argument 'xxx"), unknown


def test_fuzz_unknown_tool_and_resources(fuzzed: Fuzzed) -> None:
    with pytest.raises(Exception) as unknown:  # (a JSON-RPC error, as the specification has it)
        fuzzed.client.call("x" * LONG, {})
    assert str(unknown.value).startswith("ctxgraph: error: unknown tool: 'xxx") and len(str(unknown.value)) < 2_100
    for uri in ("ctxgraph://context/" + "x" * LONG, "ctxgraph://projects/" + "x" * LONG + "/stats",
                "ctxgraph://context/" + "x" * 900, "ctxgraph://projects/" + "x" * 900 + "/context/t-auth",
                "ctxgraph://projects/" + "x" * 900 + "/stats", "ctxgraph://" + "x" * 900):
        with pytest.raises(Exception) as refused:  # (the SDK's MCPError: a JSON-RPC error)
            fuzzed.client.read(uri)
        message = str(refused.value)
        assert message.startswith("ctxgraph: error: "), message[:300]
        assert len(message) <= 2_100 and "x" * 201 not in message, message[:300]


def test_fuzz_left_no_trace(fuzzed: Fuzzed, tmp_path: Path) -> None:
    """(After the fuzzing tests above, in this module's order.) The store is
    unchanged and the server, still serving, logged no traceback."""
    assert fuzzed.client.ok("get_task", {"task_id": "t-auth"})["task"]["status"] == "completed"
    assert export(fuzzed.store, tmp_path / "after.jsonl") == fuzzed.before
    log = fuzzed.log.read_text(encoding="utf-8")
    assert "Traceback" not in log and "unexpected" not in log, log[-2_000:]


# --------------------------------------------------------------- HTTP servers


@dataclass
class Servers:
    no_auth: dict[str, HttpServer]
    tokens: HttpServer


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    folder = tmp_path_factory.mktemp("mcp-http")
    a = small_store(folder / "a.db")
    (folder / "tokens").write_text(f"# per-project tokens\na={TOKENS['a']}\nb = {TOKENS['b']}\n")
    started: list[HttpServer] = []
    try:
        for n, host in enumerate(LOOPBACKS):
            started.append(HttpServer(["--no-auth", "--store", str(a)], cwd=folder, env={},
                                      log=folder / f"no-auth-{n}.log", address=f"{host}:0", wait=False))
        started.append(HttpServer(["--project", f"a={a}", "--project", f"b={folder / 'b.db'}", "--create",
                                   "--project-tokens", str(folder / "tokens")], cwd=folder,
                                  env={"CTXGRAPH_MCP_TOKEN": TOKENS["all"]}, log=folder / "tokens.log", wait=False))
        for server in started:
            server.wait()
        yield Servers(dict(zip(LOOPBACKS, started, strict=False)), started[-1])
    finally:
        for server in started:  # (stopped together: each waits for its open sessions)
            if server.proc.poll() is None:
                server.proc.terminate()
        for server in started:
            server.stop()
    for server in started:
        log = server.log.read_text(encoding="utf-8")
        assert "Traceback" not in log and not any(t in log for t in TOKENS.values())


INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}})


def post(url: str, headers: dict[str, str]) -> int:
    """The status of an `initialize` POSTed to the server at ``url`` with these headers."""
    address = url.split("//", 1)[1].split("/", 1)[0]
    host, port = address.rsplit(":", 1)
    conn = HTTPConnection(host.strip("[]"), int(port), timeout=30)
    try:
        conn.request("POST", "/mcp", INITIALIZE, headers={
            "Accept": "application/json, text/event-stream", "Content-Type": "application/json", **headers})
        response = conn.getresponse()
        response.read()
        return int(response.status)
    finally:
        conn.close()


@pytest.mark.parametrize("loopback", LOOPBACKS)
def test_dns_rebinding_refused(servers: Servers, loopback: str) -> None:
    server = servers.no_auth[loopback]
    served = server.url.split("//", 1)[1].split("/", 1)[0]  # the address it listens on, as HOST:PORT
    port = served.rsplit(":", 1)[1]
    assert post(server.url, {"Host": served}) == 200
    assert post(server.url, {"Host": served, "Origin": f"http://{served}"}) == 200
    if loopback == "localhost":
        assert served.startswith("127.0.0.1:")
        assert post(server.url, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}) == 200
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.3:{port}",
                 *([f"localhost:{port}"] if loopback == "127.0.0.2" else [])):
        assert post(server.url, {"Host": host}) == 421, host
    assert post(server.url, {"Host": served, "Origin": "http://evil.example"}) == 403
    assert post(server.url, {"Host": served, "Origin": f"http://evil.example:{port}"}) == 403


def test_project_tokens_reach_their_project_only(servers: Servers) -> None:
    url = servers.tokens.url
    clients = {name: http(url, token) for name, token in TOKENS.items()}
    try:
        a, b, every = clients["a"], clients["b"], clients["all"]
        assert [p["name"] for p in every.ok("list_projects")["projects"]] == ["a", "b"]
        assert [(p["name"], p["default"]) for p in a.ok("list_projects")["projects"]] == [("a", True)]
        assert [p["name"] for p in b.ok("list_projects")["projects"]] == ["b"]
        assert a.ok("get_task", {"task_id": "t-auth"})["project"] == "a"  # its project without naming it
        assert b.fail("get_task", {"task_id": "t-auth"})[0] == 3  # b's (new, empty) store
        for tool, args in (("get_task", {"task_id": "t-auth"}), ("graph_stats", {}),
                           ("add_task", {"task_id": "t-intruder"})):
            _code, line = b.fail(tool, {**args, "project": "a"})
            assert line == "ctxgraph: error: unknown project: 'a' (served: b)", line
        with pytest.raises(Exception, match="unknown project: 'a'"):
            b.read("ctxgraph://projects/a/stats")
        assert "several projects are served" in every.fail("get_task", {"task_id": "t-auth"})[1]
        assert every.ok("get_task", {"task_id": "t-auth", "project": "a"})["task"]["id"] == "t-auth"
        with pytest.raises(BaseException):  # noqa: B017 (the SDK's client raises an exception group)
            http(url, "wrong-" + TOKENS["a"])
    finally:
        for c in clients.values():
            c.close()


# ------------------------------------------------- the SDK's own error replies


def rpc(url: str, body: bytes, session: str | None = None) -> tuple[int, dict[str, str], Any]:
    """POST ``body`` to the server at ``url``: the status, the headers and the JSON-RPC reply (None without one)."""
    address = url.split("//", 1)[1].split("/", 1)[0]
    host, port = address.rsplit(":", 1)
    conn = HTTPConnection(host.strip("[]"), int(port), timeout=60)
    try:
        conn.request("POST", "/mcp", body, headers={
            "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
            **({"Mcp-Session-Id": session} if session else {})})
        response = conn.getresponse()
        text = response.read().decode("utf-8")
        headers = {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()
    if headers.get("content-type", "").startswith("text/event-stream"):
        text = next((line[5:] for line in text.splitlines() if line.startswith("data:")), "")
    return int(response.status), headers, json.loads(text) if text.strip() else None


def check_error_reply(reply: Any, code: int) -> str:
    """The message of a JSON-RPC error reply that must be ctxgraph's: one line, bounded, no long run of input."""
    assert reply["jsonrpc"] == "2.0" and reply["error"]["code"] == code, str(reply)[:500]
    message = reply["error"]["message"]
    assert message.startswith("ctxgraph: error: ") and "\n" not in message, message[:500]
    assert len(json.dumps(reply)) <= 3_000 and not any(c * 201 in json.dumps(reply) for c in "xn["), str(reply)[:500]
    return str(message)


def test_protocol_errors_over_http_are_one_clipped_line(servers: Servers) -> None:
    url = servers.no_auth["localhost"].url
    status, headers, _ = rpc(url, INITIALIZE.encode())
    session = headers["mcp-session-id"]
    assert status == 200
    rpc(url, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(), session)
    batch = json.dumps([{"jsonrpc": "2.0", "id": n, "method": "tools/list"} for n in range(1_000)]).encode()
    status, _, reply = rpc(url, batch, session)  # (pydantic's 12-line report before)
    assert status == 400
    assert check_error_reply(reply, -32602) == ("ctxgraph: error: a JSON-RPC batch (an array of messages) is not "
                                                "served: send one message per request")
    status, _, reply = rpc(url, json.dumps({"id": 3, "method": "tools/list", "x": "x" * LONG}).encode(), session)
    assert status == 400 and "not one JSON-RPC 2.0 message" in check_error_reply(reply, -32602)
    status, _, reply = rpc(url, b"{" + b"x" * LONG, session)
    assert status == 400 and check_error_reply(reply, -32700).startswith("ctxgraph: error: the body is not JSON")
    _, _, reply = rpc(url, json.dumps({"jsonrpc": "2.0", "id": 4, "method": "x" * 1_000_000}).encode(), session)
    message = check_error_reply(reply, -32601)  # (the method was echoed whole in data before)
    assert message.startswith("ctxgraph: error: method not found: 'xxx") and "(999,800 characters left out)" in message
    assert reply["id"] == 4 and len(reply["error"]["data"]) < 300
    _, _, reply = rpc(url, json.dumps({"jsonrpc": "2.0", "id": 5, "method": "prompts/get",
                                       "params": {"name": "n" * LONG}}).encode(), session)
    assert check_error_reply(reply, 0).startswith("ctxgraph: error: unknown prompt: nnn")
    _, _, reply = rpc(url, json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                                       "params": {"name": 5, "arguments": "x" * LONG}}).encode(), session)
    assert check_error_reply(reply, -32602).startswith("ctxgraph: error: invalid parameters of 'tools/call': ")
    _, _, reply = rpc(url, json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                       "params": {"name": "get_task", "arguments": {"task_id": "t-auth"}}}).encode(),
                      session)
    assert reply["result"]["structuredContent"]["task"]["id"] == "t-auth"  # the session still serves
    status, _, reply = rpc(url, json.dumps({"jsonrpc": "2.0", "id": 8, "method": "ping"}).encode(), "nope")
    assert status == 404 and check_error_reply(reply, -32600) == "ctxgraph: error: session not found"


def test_protocol_errors_over_stdio_are_one_clipped_line(tmp_path: Path) -> None:
    store = small_store(tmp_path / "graph.db")
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "x" * 1_000_000},
             [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(1_000)],  # no reply (dropped by the SDK)
             {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    with (tmp_path / "stderr.log").open("w+b") as errors, subprocess.Popen(
            [sys.executable, "-m", "ctxgraph", "mcp", "--store", str(store)], cwd=tmp_path, env=clean_env(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        proc.stdin.flush()
        first, second = json.loads(proc.stdout.readline()), json.loads(proc.stdout.readline())
        proc.stdin.close()
        assert proc.wait(60) == 0
    assert first["id"] == 1 and check_error_reply(first, -32601).startswith("ctxgraph: error: method not found: 'x")
    assert second == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(encoding="utf-8")


# ------------------------------------------ listings of items stored before the limits


def legacy_store(path: Path) -> Path:
    """The small store plus what `knowledge add` and `task add` accepted before they had limits (written
    through the store): a pattern of 1,000,000 characters with 10,000 tags, two decisions of 400,000
    characters that conflict, and a task with an objective of 1,000,000."""
    from ctxgraph.core.models import KnowledgeItem, Task

    small_store(path)
    svc = ContextService.open(path)
    try:
        words = " ".join(f"jwt token{i}" for i in range(100_000))[:1_000_000]
        tags = ("jwt", "signing", "keys")
        svc.store.upsert_knowledge([
            KnowledgeItem(id="pattern:huge", kind="pattern", summary=words, rationale="r" * 300_000,
                          tags=(*tags, *(f"tag{i}" for i in range(10_000))), token_estimate=325_000),
            *(KnowledgeItem(id=f"decision:{alg}", kind="decision", status="active", tags=tags,
                            summary=" ".join(f"{alg}{i}" for i in range(50_000)), token_estimate=100_000)
              for alg in ("hs", "rs"))])
        svc.store.upsert_tasks([Task(id="t-huge", name="n" * 100_000, objective=words,
                                     acceptance_criteria=tuple(f"criterion {i}" for i in range(5_000)))])
    finally:
        svc.close()
    return path


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpClient]:
    folder = tmp_path_factory.mktemp("mcp-legacy")
    store = legacy_store(folder / "graph.db")
    with (folder / "stdio.log").open("w", encoding="utf-8") as errlog:
        c = stdio(["--store", str(store), "--max-response-tokens", str(CAP)], cwd=folder, errlog=errlog)
        try:
            yield c
        finally:
            c.close()


def pages(c: McpClient, tool: str, arguments: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """Every entry of a paginated listing, each page within the cap."""
    found: list[dict[str, Any]] = []
    cursor = None
    while True:
        result = c.call(tool, {**arguments, **({"cursor": cursor} if cursor else {})})
        assert not result.is_error, result.content
        assert wire_tokens(result) <= CAP and isinstance(result.structured_content, dict)
        found += result.structured_content[key]
        cursor = result.structured_content["next_cursor"]
        if cursor is None:
            return found


@pytest.mark.parametrize("limit", [1, 50])
def test_a_huge_item_is_listed_shortened(legacy: McpClient, limit: int) -> None:
    """(search_knowledge failed with `response (94,813 tokens) exceeds the cap` before, even with limit 1.)"""
    found = {m["item"]["id"]: m for m in pages(legacy, "search_knowledge", {"text": "jwt signing", "limit": limit},
                                               "items")}
    assert {"pattern:huge", "decision:hs", "decision:rs"} <= set(found)
    huge = found["pattern:huge"]
    assert {"item.summary", "item.rationale", "item.tags"} <= set(huge["clipped"])
    assert huge["item"]["summary"].startswith("jwt token0 ") and "characters left out)…" in huge["item"]["summary"]
    assert huge["item"]["tags"][:3] == ["jwt", "signing", "keys"] and len(huge["item"]["tags"]) < 100
    gotcha = next(m for m in found.values() if m["item"]["kind"] == "gotcha")
    assert gotcha["item"]["summary"] == "Clock skew breaks exp checks"  # what fits is listed whole
    [conflict] = pages(legacy, "list_conflicts", {"limit": limit}, "conflicts")
    assert (conflict["first_id"], conflict["second_id"]) == ("decision:hs", "decision:rs")
    assert {"first", "second"} <= set(conflict["clipped"]) and conflict["first"].startswith("hs0 hs1 ")


def test_a_huge_task_is_listed_shortened(legacy: McpClient) -> None:
    tasks = {t["id"]: t for t in pages(legacy, "list_tasks", {"limit": 50}, "tasks")}
    assert set(tasks) == {"t-auth", "t-huge", "t-refresh"}
    huge = tasks["t-huge"]
    assert {"name", "objective", "acceptance_criteria"} <= set(huge["clipped"])
    assert huge["objective"].startswith("jwt token0 ") and "characters left out)…" in huge["objective"]
    assert "clipped" not in tasks["t-auth"] and tasks["t-auth"]["name"] == "Add JWT validation middleware"
