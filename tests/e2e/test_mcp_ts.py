"""`ctxgraph mcp` driven by the TypeScript MCP SDK's client (1.x, as Claude
Code, Cursor and the MCP Inspector use it), over stdio (started as the JSON
of `ctxgraph mcp --print-config` says, outside the venv) and streamable HTTP:
the tools listed, a context, and each kind of error shown as ctxgraph's own
line with ``isError`` — the client checks every result's structured content
against the tool's output schema, so an error carrying content of another
shape is thrown as a schema violation instead.

Needs Node (>= 20) and ``npm ci`` in tests/e2e/ts_client (scripts/check.sh
runs it). Without them the tests are skipped, except under ``CI=true``, where
they fail."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _mcp_client import HttpServer, clean_env, small_store

TS_CLIENT = Path(__file__).parent / "ts_client"
TOKEN = "mcp-ts-test-" + os.urandom(12).hex()

#: The calls each client makes (after listing the tools), and what each must give.
STEPS: list[tuple[str, dict[str, Any]]] = [
    ("context", {"callTool": {"name": "compute_context", "arguments": {"task_id": "t-refresh"}}}),
    ("task", {"callTool": {"name": "get_task", "arguments": {"task_id": "t-auth"}}}),
    ("unknown_task", {"callTool": {"name": "compute_context", "arguments": {"task_id": "nope"}}}),
    ("no_task", {"callTool": {"name": "compute_context", "arguments": {}}}),
    ("invalid_handoff", {"callTool": {"name": "ingest_handoff", "arguments": {"handoff": "- just\n- a list\n"}}}),
    ("get_unknown", {"callTool": {"name": "get_task", "arguments": {"task_id": "nope"}}}),
    ("too_long", {"callTool": {"name": "compute_context", "arguments": {"task_id": "t" * 100_000}}}),
    ("wrong_type", {"callTool": {"name": "compute_context", "arguments": {"task_id": "t-refresh", "budget": "100"}}}),
    ("unknown_argument", {"callTool": {"name": "get_task", "arguments": {"task_id": "t-auth", "verbose": True}}}),
    ("resource", {"readResource": "ctxgraph://context/t-refresh"}),
]

#: The line each error must be (exactly, or its start when it ends with "...").
ERRORS = {
    "unknown_task": "ctxgraph: error: unknown task: 'nope'",
    "no_task": "ctxgraph: error: give a task_id or a task (one of them)",
    "invalid_handoff": "ctxgraph: error: <handoff>: invalid document...",
    "get_unknown": "ctxgraph: error: unknown task: 'nope'",
    "too_long": "ctxgraph: error: compute_context: argument 'task_id' is 100,000 characters long; the limit is 200",
    "wrong_type": "ctxgraph: error: compute_context: argument 'budget': input should be a valid integer, "
                  "got the string '100'",
    "unknown_argument": "ctxgraph: error: get_task: unknown argument 'verbose'...",
}


def node_or_fail() -> str:
    """The node executable; skipped without it (or the client's packages) — failed under CI."""
    node = shutil.which("node")
    missing = "node is not on PATH" if node is None else (
        None if (TS_CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir()
        else f"the TypeScript client's packages are not installed (npm ci in {TS_CLIENT})")
    if missing is None and node is not None:
        return node
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI: {missing}; scripts/check.sh installs them", pytrace=False)
    pytest.skip(missing)


def run_client(node: str, plan: dict[str, Any], cwd: Path,
               env: dict[str, str] | None = None) -> tuple[list[dict[str, Any]], str]:
    """The client's step results, and its standard error (a stdio server's log)."""
    plan = {**plan, "steps": [{"listTools": True}, *(step for _, step in STEPS)]}
    proc = subprocess.run([node, str(TS_CLIENT / "client.mjs")], input=json.dumps(plan).encode(), cwd=cwd,
                          capture_output=True, timeout=300, env=env or clean_env())
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)["steps"], proc.stderr.decode()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_store(tmp_path_factory.mktemp("mcp-ts") / "graph.db")


def printed_config(store: Path) -> dict[str, Any]:
    """Claude Code's entry as `ctxgraph mcp --print-config` prints it (the console script when installed)."""
    script = Path(sys.executable).parent / "ctxgraph"
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "ctxgraph"]
    proc = subprocess.run([*command, "mcp", "--print-config", "--store", store.name], cwd=store.parent,
                          capture_output=True, env=clean_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    entry: dict[str, Any] = json.loads(proc.stdout)["mcpServers"]["ctxgraph"]
    assert entry["type"] == "stdio" and Path(entry["command"]).is_absolute()
    assert entry["args"][-2:] == ["--store", str(store.resolve())]
    return entry


@pytest.fixture(scope="module", params=["stdio", "http"])
def answers(request: pytest.FixtureRequest, store: Path) -> Iterator[dict[str, Any]]:
    """What the TypeScript client got for each step, over one transport."""
    node = node_or_fail()
    args = ["--store", str(store)]
    if request.param == "stdio":
        # as a user would: the JSON `--print-config` prints, run by a client whose PATH lacks this Python's bin
        entry = printed_config(store)
        elsewhere = store.parent / "elsewhere"
        elsewhere.mkdir(exist_ok=True)
        env = clean_env({"PATH": os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                                 if p and Path(p).resolve() != Path(sys.executable).parent.resolve())})
        plan = {"stdio": {"command": entry["command"], "args": entry["args"], "env": {}, "cwd": str(elsewhere)}}
        steps, log = run_client(node, plan, elsewhere, env)
    else:
        server = HttpServer(args, cwd=store.parent, env={"CTXGRAPH_MCP_TOKEN": TOKEN},
                            log=store.parent / "http.log")
        try:
            steps, _ = run_client(node, {"http": {"url": server.url, "token": TOKEN}}, store.parent)
        finally:
            assert server.stop() == 0
        log = server.log.read_text(encoding="utf-8")
    assert "Traceback" not in log
    yield {"tools": steps[0], **{name: steps[i + 1] for i, (name, _) in enumerate(STEPS)}}


def test_tools_listed(answers: dict[str, Any]) -> None:
    tools = {t["name"]: t for t in answers["tools"]["result"]["tools"]}
    assert {"compute_context", "get_task", "ingest_handoff", "list_tasks"} <= set(tools)
    assert all(t["outputSchema"]["type"] == "object" for t in tools.values())
    assert tools["compute_context"]["inputSchema"]["additionalProperties"] is False


def test_context_checked_against_its_schema(answers: dict[str, Any]) -> None:
    got = answers["context"]
    assert "thrown" not in got, got
    result = got["result"]
    assert not result.get("isError")
    context = result["structuredContent"]["context"]
    assert context["task_id"] == "t-refresh" and "Wrap handlers with requireAuth()" in context["markdown"]
    assert result["content"][-1]["text"] == context["markdown"]
    assert answers["task"]["result"]["structuredContent"]["task"]["status"] == "completed"
    assert answers["resource"]["result"]["contents"][0]["text"] == context["markdown"]


@pytest.mark.parametrize("kind", sorted(ERRORS))
def test_errors_are_ctxgraph_lines(answers: dict[str, Any], kind: str) -> None:
    got = answers[kind]
    assert "thrown" not in got, got  # (the client throws a result that breaks the output schema)
    result = got["result"]
    assert result["isError"] is True and "structuredContent" not in result
    [block] = result["content"]
    expected = ERRORS[kind]
    if expected.endswith("..."):
        assert block["text"].startswith(expected[:-3]), block["text"]
    else:
        assert block["text"] == expected
    assert "\n" not in block["text"] and len(block["text"]) < 1_000
    assert result["_meta"]["ctxgraph/exit_code"] in (1, 2, 3)
