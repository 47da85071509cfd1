"""`ctxgraph mcp` run for real (a subprocess) and driven with the MCP SDK's own
client, over stdio and streamable HTTP, on the embedded store and on Neo4j.
Servers are shared per module; answers are compared with the CLI's own."""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _mcp_client import HttpServer, McpClient, cli, cli_error, cli_ok, http, stdio

from ctxgraph.core.documents import MAX_DOCUMENT_BYTES
from ctxgraph.mcp.responses import wire_tokens

TOKEN = "mcp-test-" + os.urandom(12).hex()

HANDOFF = """\
task_id: t-auth
summary: Added JWT validation middleware
success: true
completed_at: "2026-03-01T10:00:00Z"
files_created: [{path: src/auth/jwt.ts, purpose: JWT verify helper}]
dependencies_for_next: [{file: src/auth/jwt.ts, reason: reuse verify()}]
patterns_discovered: [{pattern: Wrap handlers with requireAuth(), applies_to: [auth, api], location: src/auth/middleware.ts}]
gotchas: [{issue: Clock skew breaks exp checks, severity: high, applies_to: [jwt]}]
open_questions: [{question: "Rotate keys how?", blocking: true}]
"""

INJECTION = "'}) MATCH (n) DETACH DELETE n //"

#: Handoffs that must be refused whole, each with the same line as the CLI's.
HOSTILE = {
    "huge": "task_id: t-auth\nsummary: " + "x" * (MAX_DOCUMENT_BYTES + 1) + "\n",
    "binary": "task_id: t-auth\nsummary: half\x00binary\nsuccess: true\n",
    "unknown_task": HANDOFF.replace("task_id: t-auth", "task_id: t-ghost"),
    "cypher_in_task_id": f'task_id: "t-auth{INJECTION}"\nsummary: x\nsuccess: true\n',
    "cypher_in_severity": f'task_id: t-auth\nsummary: x\nsuccess: true\ngotchas: [{{issue: boom, severity: "high{INJECTION}"}}]\n',
    "not_a_mapping": "- just\n- a list\n",
}

#: Refused by validation, before any store is read: the CLI is asked once, not per store.
VALIDATION_REFUSED = {"huge", "binary", "cypher_in_severity", "not_a_mapping"}
_VALIDATION_LINES: dict[str, tuple[int, str]] = {}

TOOLS = {"compute_context", "explain_context", "search_knowledge", "get_task", "list_tasks", "graph_stats", "sync",
         "list_projects", "list_conflicts", "add_task", "ingest_handoff", "block_task", "unblock_task"}


@dataclass
class Graph:
    """A store holding t-auth (finished, with a handoff) and t-refresh (depends on it)."""

    kind: str
    folder: Path
    args: list[str]
    env: dict[str, str]
    #: the CLI's (exit code, stderr line) for calls that fail, by name
    refusals: dict[str, tuple[int, str]] = field(default_factory=dict)

    def ok(self, *args: str, stdin: bytes | None = None) -> str:
        return cli_ok(*args, *self.args, cwd=self.folder, env=self.env, stdin=stdin)

    def error(self, *args: str, stdin: bytes | None = None) -> tuple[int, str]:
        return cli_error(*args, *self.args, cwd=self.folder, env=self.env, stdin=stdin)

    def export(self) -> str:
        return self.ok("export", "-")


def neo4j_env(request: pytest.FixtureRequest) -> dict[str, str]:
    settings: Any = request.getfixturevalue("neo4j_settings")
    return {"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user, "NEO4J_PASSWORD": settings.password or ""}


@dataclass
class Served:
    """One graph served by two `ctxgraph mcp` processes at once: over stdio and over HTTP."""

    graph: Graph
    http_server: HttpServer
    clients: dict[str, McpClient]


def make_graph(request: pytest.FixtureRequest, folder: Path) -> Graph:
    if request.param == "local":
        g = Graph("local", folder, ["--store", str(folder / "graph.db")], {})
    else:
        g = Graph("neo4j", folder, [], neo4j_env(request))
        request.getfixturevalue("neo4j_store").clear()
    g.ok("task", "add", "t-auth", "--name", "Add JWT validation middleware",
         "--objective", "Verify JWT tokens on api routes")
    g.ok("task", "add", "t-refresh", "--name", "Refresh tokens", "--objective",
         "Rotate the JWT on login refresh", "--depends-on", "t-auth")
    g.ok("ingest", "handoff", "-", stdin=HANDOFF.encode())
    for name, doc in HOSTILE.items():
        if name in VALIDATION_REFUSED and name in _VALIDATION_LINES:
            g.refusals[name] = _VALIDATION_LINES[name]
            continue
        g.refusals[name] = g.error("ingest", "handoff", "-", stdin=doc.encode("utf-8"))
        if name in VALIDATION_REFUSED:
            _VALIDATION_LINES[name] = g.refusals[name]
    g.refusals["unknown_context"] = g.error("context", "nope")
    g.refusals["unknown_block"] = g.error("task", "block", "nope", "--reason", "x")
    g.refusals["unknown_dependency"] = g.error("task", "add", "t-x", "--depends-on", "nope")
    return g


@pytest.fixture(scope="module", params=["local", "neo4j"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    g = make_graph(request, tmp_path_factory.mktemp(f"mcp-{request.param}"))
    with ExitStack() as stack:
        errlog = stack.enter_context((g.folder / "stdio.log").open("w", encoding="utf-8"))
        over_stdio = stdio(g.args, cwd=g.folder, env=g.env, errlog=errlog)
        stack.callback(over_stdio.close)
        server = HttpServer(g.args, cwd=g.folder, env={**g.env, "CTXGRAPH_MCP_TOKEN": TOKEN},
                            log=g.folder / "http.log")
        stack.callback(server.stop)
        over_http = http(server.url, TOKEN)
        stack.callback(over_http.close)
        yield Served(g, server, {"stdio": over_stdio, "http": over_http})
    assert server.proc.returncode == 0  # SIGTERM: a clean stop
    assert TOKEN not in server.log.read_text(encoding="utf-8")
    if g.kind == "neo4j":
        request.getfixturevalue("neo4j_store").clear()


def test_lists_typed_tools_and_resources(served: Served) -> None:
    assert [t.name for t in served.clients["stdio"].tools()] == [t.name for t in served.clients["http"].tools()]
    tools = {t.name: t for t in served.clients["http"].tools()}
    assert set(tools) == TOOLS
    compute = tools["compute_context"]
    assert {"task_id", "task", "budget", "complexity", "strategy", "project"} <= set(compute.input_schema["properties"])
    assert compute.input_schema["properties"]["budget"]["anyOf"][0]["minimum"] == 1
    assert "_computed" in json.dumps(compute.output_schema)
    assert tools["search_knowledge"].input_schema["required"] == ["text"]
    assert tools["compute_context"].annotations.read_only_hint is True
    assert tools["ingest_handoff"].annotations.read_only_hint is False


def test_context_is_the_cli_context(served: Served) -> None:
    g = served.graph
    markdown = ""
    for args, flags in (({}, []), ({"complexity": "easy", "budget": 900, "strategy": "recent"},
                                   ["--complexity", "easy", "--budget", "900", "--strategy", "recent"])):
        expected = json.loads(g.ok("context", "t-refresh", "--format", "json", *flags))
        markdown = markdown or expected["markdown"]
        assert "Wrap handlers with requireAuth()" in expected["markdown"]
        for transport, c in served.clients.items():
            result = c.call("compute_context", {"task_id": "t-refresh", **args})
            assert not result.is_error, transport
            assert result.structured_content == {"project": "default", "context": expected, "warning": None,
                                                 "budget_lowered_from": None}, transport
            assert result.content[-1].text == expected["markdown"]  # type: ignore[union-attr]
    # an unsaved task, as `context --task-file`; the resources
    task = {"id": "t-draft", "name": "Log out", "objective": "Revoke the JWT refresh token on logout",
            "depends_on": ["t-auth"]}
    (g.folder / "draft.json").write_text(json.dumps(task))
    expected = json.loads(g.ok("context", "--task-file", "draft.json", "--format", "json"))
    stats = {"project": "default", **json.loads(g.ok("stats", "--format", "json"))}
    for c in served.clients.values():
        assert c.ok("compute_context", {"task": task})["context"] == expected
        assert c.read("ctxgraph://context/t-refresh") == markdown
        found = json.loads(c.read("ctxgraph://stats"))
        assert found.pop("memory")["state"] == "off"  # no root known: the store is in no git work tree
        assert found == stats


def test_explain_and_search(served: Served) -> None:
    for c in served.clients.values():
        explain_and_search(c)


def explain_and_search(c: McpClient) -> None:
    pattern = c.ok("compute_context", {"task_id": "t-refresh"})["context"]["patterns_to_follow"][0]["id"]
    explained = c.ok("explain_context", {"task_id": "t-refresh", "item_id": pattern})
    assert [(e["id"], e["fate"], e["section"]) for e in explained["entries"]] == [(pattern, "kept", "patterns")]
    assert explained["total"] == 1 and explained["next_cursor"] is None
    everything = c.ok("explain_context", {"task_id": "t-refresh", "limit": 1})
    assert len(everything["entries"]) == 1 and everything["total"] > 1 and everything["next_cursor"]
    second = c.ok("explain_context", {"task_id": "t-refresh", "limit": 1, "cursor": everything["next_cursor"]})
    assert second["entries"] != everything["entries"]
    found = c.ok("search_knowledge", {"text": "JWT clock skew on exp"})
    assert "jwt" in found["keywords"]
    assert "Clock skew breaks exp checks" in [m["item"]["summary"] for m in found["items"]]
    gotchas = c.ok("search_knowledge", {"text": "JWT auth api", "kinds": ["gotcha"]})
    assert gotchas["items"] and {m["item"]["kind"] for m in gotchas["items"]} == {"gotcha"}


@pytest.mark.parametrize("t", ["stdio", "http"])
def test_ingest_then_context(served: Served, t: str) -> None:
    g, c = served.graph, served.clients[t]
    keys, rotate = f"t-keys-{t}", f"t-rotate-{t}"
    added = c.ok("add_task", {"task_id": keys, "name": "Sign JWTs with rotating keys", "depends_on": ["t-auth"]})
    assert added["task"]["id"] == keys and added["task"]["depends_on"] == ["t-auth"]
    c.ok("add_task", {"task_id": rotate, "name": "Rotate signing keys", "objective": "JWT key rotation",
                      "depends_on": [keys]})
    pattern = f"Sign every JWT with a kid header ({t}){INJECTION}"
    handoff = json.dumps({"task_id": keys, "summary": "Keys rotate", "success": True,
                          "patterns_discovered": [{"pattern": pattern, "applies_to": ["jwt"]}],
                          "gotchas": [{"issue": f"Old keys must stay valid for a day ({t})", "severity": "high"}]})
    first = c.ok("ingest_handoff", {"handoff": handoff, "source": "keys.json"})
    assert first["result"] == {"source": "keys.json", "task_id": keys, "written": True, "knowledge": 2, "files": 0}
    assert c.ok("ingest_handoff", {"handoff": handoff})["result"]["written"] is False
    context = c.ok("compute_context", {"task_id": rotate})["context"]
    assert pattern in context["markdown"]
    assert [p["pattern"] for p in context["patterns_to_follow"]][:1] == [pattern]
    assert context == json.loads(g.ok("context", rotate, "--format", "json"))
    assert c.ok("get_task", {"task_id": "t-auth"})["task"]["status"] == "completed"  # the injection is text
    blocked = c.ok("block_task", {"task_id": rotate, "reason": "waiting for the KMS"})["task"]
    assert blocked["status"] == "blocked"
    blockers = c.ok("compute_context", {"task_id": "t-refresh"})["context"]["active_blockers"]
    assert {"id": rotate, "reason": "waiting for the KMS"}.items() <= next(b for b in blockers if b["id"] == rotate).items()
    assert c.ok("unblock_task", {"task_id": rotate})["task"]["status"] == "pending"


def test_hostile_handoffs_refused_graph_unchanged(served: Served) -> None:
    g = served.graph
    before = g.export()
    for name, doc in HOSTILE.items():
        for transport, c in served.clients.items():
            refused = c.fail("ingest_handoff", {"handoff": doc, "source": "<stdin>"})
            assert refused == g.refusals[name], (name, transport)
    assert g.refusals["huge"][1].endswith(f"the limit is {MAX_DOCUMENT_BYTES:,}")
    assert "binary content" in g.refusals["binary"][1]
    assert g.export() == before


def test_errors_are_the_cli_errors(served: Served) -> None:
    for c in served.clients.values():
        errors_are_the_cli_errors(served.graph, c)


def errors_are_the_cli_errors(g: Graph, c: McpClient) -> None:
    assert c.fail("compute_context", {"task_id": "nope"}) == g.refusals["unknown_context"] == (
        3, "ctxgraph: error: unknown task: 'nope'")
    assert c.fail("block_task", {"task_id": "nope", "reason": "x"}) == g.refusals["unknown_block"]
    assert c.fail("add_task", {"task_id": "t-x", "depends_on": ["nope"]}) == g.refusals["unknown_dependency"]
    assert c.fail("compute_context", {}) == (1, "ctxgraph: error: give a task_id or a task (one of them)")
    assert c.fail("add_task", {"task_id": "t-auth", "depends_on": ["t-refresh"]})[1].startswith(
        "ctxgraph: error: dependency cycle refused: ")
    assert c.fail("list_tasks", {"cursor": "garbage"})[0] == 2


def test_http_needs_the_token(served: Served) -> None:
    graph, http_server = served.graph, served.http_server
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "add_task", "arguments": {"task_id": "t-intruder"}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    for auth in ({}, {"Authorization": "Bearer wrong-" + TOKEN}, {"Authorization": TOKEN}):
        request = urllib.request.Request(http_server.url, data=json.dumps(call).encode(), method="POST",
                                         headers={**headers, **auth})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 401
        assert refused.value.headers["WWW-Authenticate"].startswith("Bearer ")
        refused.value.close()
    for token in (None, "wrong-" + TOKEN):
        with pytest.raises(BaseException):  # noqa: B017 (the SDK's client raises an exception group)
            http(http_server.url, token)
    assert graph.error("task", "show", "t-intruder")[0] == 3
    assert served.clients["http"].ok("get_task", {"task_id": "t-auth"})["task"]["id"] == "t-auth"


def test_startup_refusals(tmp_path: Path) -> None:
    def refused(*args: str, env: dict[str, str] | None = None) -> str:
        code, line = cli_error("mcp", *args, cwd=tmp_path, env=env)
        assert code == 2
        return line

    assert "loopback addresses only" in refused("--http", "0.0.0.0:0", "--no-auth")
    assert "a bearer token is required" in refused("--http", "127.0.0.1:0")
    assert "16 to 4,096 characters" in refused("--http", "127.0.0.1:0", env={"CTXGRAPH_MCP_TOKEN": "short"})
    assert "needs --http" in refused("--token-stdin")
    assert "the same store" in refused("--project", f"a={tmp_path / 'g.db'}", "--project", f"b={tmp_path / 'g.db'}")
    missing = tmp_path / "no" / "g.db"
    assert refused("--store", str(missing)) == (
        f"ctxgraph: error: no store at {missing}: create it with `ctxgraph init --store PATH` or pass --create")
    assert refused("--project", f"a={missing}", "--print-config").startswith("ctxgraph: error: project a: no store at ")
    assert not (tmp_path / "g.db").exists() and not missing.parent.exists()
    (tmp_path / "tokens").write_text("c=" + "t" * 20 + "\n")
    assert "'c' is not a served project" in refused("--http", "127.0.0.1:0", "--project-tokens", "tokens", "--create")
    (tmp_path / "tokens").write_text(f"default={TOKEN}\n")
    assert "two of the bearer tokens are the same" in refused(
        "--http", "127.0.0.1:0", "--project-tokens", "tokens", "--create", env={"CTXGRAPH_MCP_TOKEN": TOKEN})
    assert "--project-tokens cannot be used with --no-auth" in refused(
        "--http", "127.0.0.1:0", "--project-tokens", "tokens", "--no-auth")



def test_one_store(tmp_path: Path) -> None:
    """As every command: --store and --neo4j together are refused; --store on the command line outranks
    NEO4J_URI from the environment, with a note (the printed setup serves the embedded store)."""
    (tmp_path / "g.db").write_bytes(b"")  # only its existence matters: nothing is opened
    code, line = cli_error("mcp", "--store", "g.db", "--neo4j", "bolt://127.0.0.1:9", "--print-config", cwd=tmp_path)
    assert code == 2 and "--store and --neo4j" in line
    proc = cli("mcp", "--store", "g.db", "--print-config", cwd=tmp_path, env={"NEO4J_URI": "bolt://127.0.0.1:9"})
    assert proc.returncode == 0, proc.stderr.decode()
    assert "NEO4J_URI from the environment is not used" in proc.stderr.decode()
    entry = json.loads(proc.stdout)["mcpServers"]["ctxgraph"]
    assert entry["args"][-2:] == ["--store", str(tmp_path / "g.db")]

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("second", ["local", "neo4j"])
def test_projects_do_not_leak(second: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    env = neo4j_env(request) if second == "neo4j" else {}
    # Neo4j's one database is shared with the other tests: ids and words of this run only
    one, two = (f"t-leak-{n}-{os.urandom(4).hex()}" for n in (1, 2))
    marker = f"kumquat{os.urandom(4).hex()}"
    b_store = env.get("NEO4J_URI") or str(tmp_path / "b.db")
    down = f"neo4j://127.0.0.1:{free_port()}"
    args = ["--project", f"a={tmp_path / 'a.db'}", "--project", f"b={b_store}", "--project", f"down={down}", "--create"]
    b_args = [] if second == "neo4j" else ["--store", b_store]
    with (tmp_path / "stdio.log").open("w", encoding="utf-8") as errlog:
        c = stdio(args, cwd=tmp_path, env=env, errlog=errlog)
        try:
            assert [p["name"] for p in c.ok("list_projects")["projects"]] == ["a", "b", "down"]
            assert c.fail("get_task", {"task_id": one})[1].startswith("ctxgraph: error: several projects are served")
            b_before = cli_ok("export", "-", *b_args, cwd=tmp_path, env=env)
            c.ok("add_task", {"task_id": one, "name": "Secret JWT middleware of a", "project": "a"})
            c.ok("ingest_handoff", {"project": "a", "handoff": json.dumps({
                "task_id": one, "summary": "done", "success": True,
                "gotchas": [{"issue": f"Secret gotcha {marker} of project a about JWT", "severity": "high"}]})})
            assert c.ok("search_knowledge", {"text": marker, "project": "a"})["total"] == 1
            assert c.ok("search_knowledge", {"text": marker, "project": "b"})["total"] == 0
            assert c.fail("get_task", {"task_id": one, "project": "b"})[0] == 3
            inline = {"id": two, "name": f"JWT middleware secret gotcha {marker}"}
            assert marker not in c.ok("compute_context", {"task": inline, "project": "b"})["context"]["markdown"]
            assert marker in c.ok("compute_context", {"task": inline, "project": "a"})["context"]["markdown"]
            assert cli_ok("export", "-", *b_args, cwd=tmp_path, env=env) == b_before
            c.ok("add_task", {"task_id": one, "name": "Another task of b", "project": "b"})
            assert c.ok("get_task", {"task_id": one, "project": "a"})["task"]["name"] == "Secret JWT middleware of a"
            assert marker in c.read(f"ctxgraph://projects/a/context/{one}")
            assert marker not in c.read(f"ctxgraph://projects/b/context/{one}")
            # a store that is down: the degraded context of an unsaved task, as the CLI's
            (tmp_path / "t2.json").write_text(json.dumps(inline))
            cli_run = cli("context", "--task-file", "t2.json", "--neo4j", down, "--format", "json", cwd=tmp_path)
            assert cli_run.returncode == 0
            degraded = c.ok("compute_context", {"task": inline, "project": "down"})
            assert degraded["context"] == json.loads(cli_run.stdout)
            assert cli_run.stderr.decode().strip() == f"ctxgraph: warning: {degraded['warning']}"
            assert c.fail("compute_context", {"task_id": one, "project": "down"}) == cli_error(
                "context", one, "--neo4j", down, cwd=tmp_path)
        finally:
            c.close()
    assert "warning: project down: " in (tmp_path / "stdio.log").read_text(encoding="utf-8")


def test_size_cap_and_pagination(tmp_path: Path) -> None:
    store = ["--store", str(tmp_path / "demo.db")]
    cli_ok("demo", *store, cwd=tmp_path)
    cap = 4_000
    with (tmp_path / "stdio.log").open("w", encoding="utf-8") as errlog:
        c = stdio([*store, "--max-response-tokens", str(cap)], cwd=tmp_path, errlog=errlog)
        try:
            result = c.call("compute_context", {"task_id": "task-015", "complexity": "complex"})
            assert not result.is_error and wire_tokens(result) <= cap
            assert result.structured_content is not None
            assert result.structured_content["budget_lowered_from"] == 16_000
            assert result.structured_content["context"]["budget"] < 16_000
            assert "budget lowered from 16,000" in result.content[0].text  # type: ignore[union-attr]
            ids, cursor, pages = [], None, 0
            while True:
                page = c.call("list_tasks", {"limit": 500, **({"cursor": cursor} if cursor else {})})
                assert not page.is_error and wire_tokens(page) <= cap
                assert page.structured_content is not None
                ids += [t["id"] for t in page.structured_content["tasks"]]
                pages += 1
                cursor = page.structured_content["next_cursor"]
                if cursor is None:
                    break
            assert pages > 1
            assert ids == [t["id"] for t in json.loads(cli_ok("task", "list", "--format", "json", *store, cwd=tmp_path))]
            explained = c.ok("explain_context", {"task_id": "task-015", "limit": 500})
            assert explained["next_cursor"] and len(explained["entries"]) < explained["total"]
        finally:
            c.close()


def test_list_conflicts_is_the_cli_conflicts(served: Served) -> None:
    """(Last of the served tests: it adds two decisions to the module's graph.)"""
    g = served.graph
    g.ok("knowledge", "add", "decision", "Sign JWT access tokens with HS256 and one shared secret", "--tag", "signing")
    g.ok("knowledge", "add", "decision", "Sign JWT access tokens with RS256 and per-service keys", "--tag", "signing")
    expected = json.loads(g.ok("conflicts", "--format", "json"))
    assert len(expected) == 1
    for c in served.clients.values():
        assert c.ok("list_conflicts", {}) == {"project": "default", "total": 1, "conflicts": expected,
                                              "next_cursor": None}


def test_print_config_for_cursor(tmp_path: Path) -> None:
    """(Claude Code's form is run for real by test_mcp_ts.py.) Every project, the serving options given,
    absolute paths, the Neo4j password passed through from the client's environment, never written."""
    (tmp_path / "a.db").write_bytes(b"")  # only its existence matters: nothing is opened
    out = cli_ok("mcp", "--print-config", "cursor", "--project", "a=a.db", "--project", "b=neo4j://db.example:7687#web",
                 "--read-only", "--max-response-tokens", "5000", cwd=tmp_path,
                 env={"NEO4J_PASSWORD": "not-this-" + TOKEN})
    entry = json.loads(out)["mcpServers"]["ctxgraph"]
    assert "type" not in entry and os.path.isabs(entry["command"])
    assert entry["args"] == ["-m", "ctxgraph", "mcp", "--read-only", "--max-response-tokens", "5000",  # (python -m)
                             "--project", f"a={tmp_path / 'a.db'}", "--project", "b=neo4j://db.example:7687#web"]
    assert entry["env"] == {"NEO4J_PASSWORD": "${env:NEO4J_PASSWORD}"} and TOKEN not in out
