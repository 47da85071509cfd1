"""``ctxgraph search`` and ``ctxgraph knowledge list`` on the demo store find
what the MCP server finds (the official SDK's client, over stdio): the
knowledge of a query as the tool search_knowledge ranks it, item for item;
the tasks and code as compute_context shows them for the query as an unsaved
task; every knowledge node the server counts, listed with an id that
`knowledge show` takes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _mcp_client import McpClient, cli_error, cli_ok, stdio

QUERIES = ["refresh token rotation", "postgres migrations for the users table", "admin UI login page"]
KNOWLEDGE_LABELS = ("Pattern", "Gotcha", "Decision", "OpenQuestion", "ADR", "Plan", "ModuleMemory", "ChangelogEntry")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("search-demo")
    cli_ok("demo", "--store", str(folder / "demo.db"), cwd=folder)
    return folder


@pytest.fixture(scope="module")
def server(demo: Path) -> Iterator[McpClient]:
    with (demo / "stdio.log").open("w", encoding="utf-8") as errlog:
        client = stdio(["--store", str(demo / "demo.db"), "--max-response-tokens", "500000"], cwd=demo,
                       errlog=errlog)
        try:
            yield client
        finally:
            client.close()


def run(demo: Path, *args: str) -> Any:
    return json.loads(cli_ok(*args, "--store", str(demo / "demo.db"), "--format", "json", cwd=demo))


@pytest.mark.parametrize("query", QUERIES)
def test_search_finds_what_the_mcp_tools_find(demo: Path, server: McpClient, query: str) -> None:
    found = run(demo, "search", query, "--limit", "500")
    tool = server.ok("search_knowledge", {"text": query, "limit": 500})
    assert tool["total"] == len(tool["items"]) > 0 and tool["next_cursor"] is None
    assert found["knowledge"] == tool["items"]  # the same items, ranked alike, field for field
    assert (found["keywords"], found["domains"]) == (tool["keywords"], tool["domains"])
    # the tasks: every stored task the server lists that shares a tag (its signals' keywords and domains)
    # with the text's keywords and domains, ranked as the knowledge is
    wanted = set(tool["keywords"]) | set(tool["domains"])
    listed = server.ok("list_tasks", {"limit": 500})["tasks"]
    sharing = {t["id"]: t for t in listed if wanted & {*t["signals"]["keywords"], *t["signals"]["domains"]}}
    assert [m["task"]["id"] for m in found["tasks"]] and {m["task"]["id"] for m in found["tasks"]} == set(sharing)
    for match in found["tasks"]:
        assert match["task"] == sharing[match["task"]["id"]]
        assert set(match["matched_tags"]) == wanted & {*match["task"]["signals"]["keywords"],
                                                        *match["task"]["signals"]["domains"]}
    # best first: relevance, then the most recently updated, then the id
    expected = sorted(found["tasks"], key=lambda m: m["task"]["id"])
    expected.sort(key=lambda m: m["task"]["updated_at"] or "", reverse=True)
    expected.sort(key=lambda m: m["relevance"], reverse=True)
    assert found["tasks"] == expected
    # the code: what compute_context shows for the text as an unsaved task
    unsaved = {"id": "ctxgraph-search", "objective": query}
    ctx = server.ok("compute_context", {"task": unsaved, "complexity": "complex", "budget": 1_000_000})
    assert ctx["budget_lowered_from"] is None
    assert found["code"] == ctx["context"]["code_references"] and found["code"]
    assert found["snippets"] == ctx["context"]["codebase_context"]  # (the demo has no index: none)

    gotchas = run(demo, "search", *query.split(), "--kind", "gotcha", "--in", "knowledge")
    assert gotchas["knowledge"] == server.ok("search_knowledge", {"text": query, "kinds": ["gotcha"],
                                                                  "limit": 500})["items"]
    assert gotchas["tasks"] == gotchas["code"] == []
    first = run(demo, "search", query, "--limit", "2")
    assert first["knowledge"] == tool["items"][:2]


def test_search_text_output(demo: Path) -> None:
    out = cli_ok("search", "refresh", "token", "--store", str(demo / "demo.db"), "--limit", "3", cwd=demo)
    lines = out.splitlines()
    assert lines[0] == "query: refresh token (keywords: refresh, token; domains: auth)"
    assert lines[1] == "knowledge (3):" and lines[5] == "tasks (3):" and lines[9] == "code (3):"
    assert lines[2].startswith("  gotcha:395a19b161b49f34  2.5  The access token is kept only in memory")
    assert lines[6:8] == [
        "  task-015  2.5  [pending]  Add refresh-token rotation to the login endpoint  [refresh, token, auth]",
        "  task-017  2.5  [pending]  Add silent token refresh to the admin UI API client  [refresh, token, auth]"]
    assert cli_error("search", " ", "--store", str(demo / "demo.db"), cwd=demo)[1] == (
        "ctxgraph: error: search: the query is empty (say what to look for)")


def test_knowledge_list_holds_what_the_server_counts_and_finds(demo: Path, server: McpClient) -> None:
    listed = run(demo, "knowledge", "list")
    ids = [x["item"]["id"] for x in listed]
    labels = server.ok("graph_stats")["labels"]
    assert len(ids) == sum(labels.get(label, 0) for label in KNOWLEDGE_LABELS) == 82
    assert ids == sorted(ids)
    by_id = {x["item"]["id"]: x for x in listed}
    for query in QUERIES:
        for hit in server.ok("search_knowledge", {"text": query, "limit": 500})["items"]:
            assert by_id[hit["item"]["id"]]["item"] == hit["item"]
    # a tag: exactly the items the tool finds matching on that tag
    hits = server.ok("search_knowledge", {"text": "token", "limit": 500})["items"]
    tagged = [x["item"]["id"] for x in run(demo, "knowledge", "list", "--tag", "token")]
    assert sorted(h["item"]["id"] for h in hits if "token" in h["matched_tags"]) == tagged and tagged
    # a kind, a task
    gotchas = run(demo, "knowledge", "list", "--kind", "gotcha")
    assert [x["item"]["id"] for x in gotchas] == [i for i in ids if i.startswith("gotcha:")]
    of_006 = run(demo, "knowledge", "list", "--task", "task-006")
    assert of_006 and all(x["tasks"] == ["task-006"] for x in of_006)
    assert {x["item"]["id"] for x in of_006} < set(ids)
    # the demo has nothing superseded or stale yet
    assert run(demo, "knowledge", "list", "--superseded") == run(demo, "knowledge", "list", "--stale") == []
    # ids that `knowledge show` takes
    shown = cli_ok("knowledge", "show", ids[0], "--store", str(demo / "demo.db"), cwd=demo)
    assert shown.startswith(f"{ids[0]} (")
    assert cli_error("knowledge", "list", "--task", "task-999", "--store", str(demo / "demo.db"),
                     cwd=demo)[1] == "ctxgraph: error: unknown task: 'task-999'"


def test_knowledge_list_text_marks_superseded(demo: Path, tmp_path: Path) -> None:
    store = ["--store", str(tmp_path / "graph.db")]
    old = json.loads(cli_ok("knowledge", "add", "plan", "Split the API into two services", *store, "--format",
                            "json", cwd=tmp_path))["id"]
    new = json.loads(cli_ok("knowledge", "revise", old, "Split the API into three services", *store, "--format",
                            "json", cwd=tmp_path))["id"]
    lines = cli_ok("knowledge", "list", *store, cwd=tmp_path).splitlines()
    assert sorted(lines) == lines and len(lines) == 2
    assert next(line for line in lines if line.startswith(old)).startswith(f"{old} (plan) [superseded 20")
    assert f"{new} (plan): Split the API into three services" in lines
    superseded = json.loads(cli_ok("knowledge", "list", "--superseded", *store, "--format", "json", cwd=tmp_path))
    assert [x["item"]["id"] for x in superseded] == [old]


@pytest.mark.parametrize("command", [["search", "jwt"], ["knowledge", "list"], ["view"], ["view", "task-015"]])
def test_on_a_missing_store_they_fail_and_create_nothing(tmp_path: Path, command: list[str]) -> None:
    code, line = cli_error(*command, cwd=tmp_path)
    assert (code, line) == (5, "ctxgraph: error: no embedded store at .ctxgraph/graph.db (nothing was written there "
                               "yet: check --store / CTXGRAPH_STORE, or create it with `ctxgraph init`)")
    assert list(tmp_path.iterdir()) == []
