"""`ctxgraph mcp` indexes its projects' roots in the background and watches
them: a context computed before the first index is complete says `partial`,
then the full index is used; a saved file is re-indexed (SDK client, real server)."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from _mcp_client import McpClient, clean_env, stdio

from ctxgraph.graph.local import LocalStore
from ctxgraph.memory.index import index_project

TASK = {"id": "t-tax", "name": "Fix compute_invoice_total",
        "objective": "compute_invoice_total ignores the tax_rate of the invoice lines"}
BILLING = "def compute_invoice_total(lines, tax_rate):\n    return sum(lines) * (1 + tax_rate)\n"


def shop(root: Path, files: int) -> Path:
    root.mkdir(parents=True)
    for i in range(files):
        (root / f"handler_{i:03d}.py").write_text(
            f'def handle_{i}(request):\n    """Handle request kind {i}."""\n    return request.kind_{i}\n',
            encoding="utf-8")
    (root / "zz_billing.py").write_text(BILLING, encoding="utf-8")
    return root


def memory_note(c: McpClient) -> tuple[str, set[str]]:
    """(the context's `_computed.memory`, the files it names)."""
    ctx: dict[str, Any] = c.ok("compute_context", {"task": TASK})["context"]
    files = {r["file"] for r in ctx.get("code_references", ())} | {s["path"] for s in ctx.get("codebase_context", ())}
    return str(ctx["_computed"]["memory"]), files


def until_watching(c: McpClient, seconds: float = 180.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        memory: dict[str, Any] = c.ok("graph_stats")["memory"]
        if memory["state"] == "watching":
            return memory
        time.sleep(0.2)
    raise AssertionError(f"the background index did not finish: {memory}")


def test_a_context_before_the_index_is_complete_says_partial(tmp_path: Path) -> None:
    root = shop(tmp_path / "shop", 30)
    db = root / ".ctxgraph" / "graph.db"
    # A first run cut short (as by --time-limit): one file of 31 indexed.
    with LocalStore.open(db) as store:
        cut = index_project(store, root, embeddings=False, time_limit=0.000001)
    assert not cut.complete and cut.indexed == 1
    with (tmp_path / "server.log").open("w", encoding="utf-8") as errlog:
        c = stdio(["--project", f"shop={root}"], cwd=tmp_path, env=clean_env(), errlog=errlog)
        try:
            # Hold the store's write lock: the server's background run (with embeddings, a few
            # seconds) can write nothing meanwhile, so the context reads the partial index.
            lock = sqlite3.connect(db, isolation_level=None)
            lock.execute("BEGIN IMMEDIATE")
            try:
                note, _ = memory_note(c)
                status = c.ok("graph_stats")["memory"]
            finally:
                lock.execute("ROLLBACK")
                lock.close()
            # 1/31 (the cut run's file) or, when the server's rebuild (another kind of index: with
            # embeddings) wrote its full-text pass before the lock was taken, 0/31: partial either way.
            assert re.search(r"associative memory: partial \([01]/31 files", note), note
            assert status["state"] in {"scanning", "indexing"} and status["root"] == str(root)

            done = until_watching(c)
            assert done["files_indexed"] == done["files"] == 31 and done["percent"] == 100.0
            assert done["embeddings"] is True and done["runs"] >= 1
            note, files = memory_note(c)
            assert "partial" not in note and "zz_billing.py" in files, (note, files)
        finally:
            c.close()
    log = (tmp_path / "server.log").read_text(encoding="utf-8")
    assert f"project shop: indexing {root}" in log and "memory index 100 % (31/31 files" in log
    tenths = [int(t) for t in re.findall(r"memory index (\d+) % \(", log)]
    assert tenths == sorted(set(tenths)) and tenths[-1] == 100, tenths  # the tenths crossed, in order
    assert "Traceback" not in log


@pytest.mark.parametrize("kind", ["local", "neo4j"])
def test_the_server_indexes_the_work_tree_and_reindexes_a_saved_file(
        tmp_path: Path, kind: str, request: pytest.FixtureRequest) -> None:
    tree = shop(tmp_path / "tree", 2)
    (tree / ".git").mkdir()  # a git work tree: the store's root
    env = {"CTXGRAPH_EMBEDDING_MODEL": str(tmp_path / "no-model")}  # the lightweight index: no ML here
    args = ["--create", "--store", str(tree / ".ctxgraph" / "graph.db")]
    if kind == "neo4j":
        settings: Any = request.getfixturevalue("neo4j_settings")
        request.getfixturevalue("neo4j_store").clear()
        env |= {"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user, "NEO4J_PASSWORD": settings.password or ""}
        args = []  # the root: the work tree around the current folder
    with (tmp_path / "server.log").open("w", encoding="utf-8") as errlog:
        c = stdio(args, cwd=tree, env=clean_env(env), errlog=errlog)
        try:
            first = until_watching(c, 120)
            assert first["embeddings"] is False and first["project"] == "tree" and first["files"] == 3
            _, files = memory_note(c)
            assert "zz_billing.py" in files
            (tree / "handler_000.py").write_text("def compute_invoice_total_v2(lines):\n    return 0\n",
                                                 encoding="utf-8")
            deadline = time.monotonic() + 60
            while c.ok("graph_stats")["memory"]["runs"] < first["runs"] + 1 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert c.ok("graph_stats")["memory"]["last_run"]["indexed"] == 1
        finally:
            c.close()
            if kind == "neo4j":
                request.getfixturevalue("neo4j_store").clear()


def test_a_folder_project_is_printed_as_its_folder(tmp_path: Path) -> None:
    from _mcp_client import as_json, cli_ok

    root = shop(tmp_path / "shop", 0)
    out = cli_ok("mcp", "--print-config", "--project", f"shop={root}", "--create", "--no-index", cwd=tmp_path)
    args = as_json(out)["mcpServers"]["ctxgraph"]["args"]
    assert args[args.index("--project") + 1] == f"shop={root}" and "--no-index" in args, args


def test_a_neo4j_project_is_indexed_at_the_root_given(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """`--root NAME=FOLDER` gives a Neo4j project (one of several) its root; the
    other project, a store file outside any work tree, has none (not the
    current folder's)."""
    settings: Any = request.getfixturevalue("neo4j_settings")
    request.getfixturevalue("neo4j_store").clear()
    tree = shop(tmp_path / "api-code", 2)  # no .git: the root comes from --root alone
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    (cwd / ".git").mkdir()  # a work tree around the current folder, which neither project may take
    env = {"CTXGRAPH_EMBEDDING_MODEL": str(tmp_path / "no-model"), "NEO4J_USER": settings.user,
           "NEO4J_PASSWORD": settings.password or ""}
    args = ["--project", f"api={settings.uri}", "--project", f"web={tmp_path / 'web.db'}", "--create",
            "--root", f"api={tree}"]
    with (tmp_path / "server.log").open("w", encoding="utf-8") as errlog:
        c = stdio(args, cwd=cwd, env=clean_env(env), errlog=errlog)
        try:
            deadline = time.monotonic() + 120
            while (memory := c.ok("graph_stats", {"project": "api"})["memory"])["state"] != "watching":
                assert time.monotonic() < deadline, memory
                time.sleep(0.2)
            assert memory["root"] == str(tree) and memory["files"] == 3, memory
            assert c.ok("graph_stats", {"project": "web"})["memory"]["state"] == "off"
        finally:
            c.close()
            request.getfixturevalue("neo4j_store").clear()
    assert "project web: associative memory not indexed here: no root known" in (tmp_path / "server.log").read_text()


def test_root_mistakes_are_refused_and_a_root_is_printed(tmp_path: Path) -> None:
    from _mcp_client import as_json, cli_error, cli_ok

    def cli_fail(*args: str, cwd: Path) -> str:
        code, line = cli_error(*args, cwd=cwd)
        assert code == 2 and line.startswith("ctxgraph: error: --root"), line
        return line

    root = shop(tmp_path / "shop", 0)
    db = tmp_path / "x.db"
    given = ("mcp", "--project", f"shop={root}", "--project", f"x={db}", "--create", "--print-config")
    assert "'nope' is not a served project" in cli_fail(*given, "--root", f"nope={root}", cwd=tmp_path)
    assert "project folder, its own root" in cli_fail(*given, "--root", f"shop={root}", cwd=tmp_path)
    assert "give NAME=FOLDER" in cli_fail(*given, "--root", str(root), cwd=tmp_path)
    assert "is not a folder" in cli_fail(*given, "--root", f"x={tmp_path / 'missing'}", cwd=tmp_path)
    args = as_json(cli_ok(*given, "--root", f"x={root}", cwd=tmp_path))["mcpServers"]["ctxgraph"]["args"]
    assert args[args.index("--root") + 1] == f"x={root}" and f"x={db}" in args, args
    one = as_json(cli_ok("mcp", "--store", str(db), "--create", "--print-config", "--root", str(root),
                         cwd=tmp_path))["mcpServers"]["ctxgraph"]["args"]
    assert one[one.index("--root") + 1] == str(root), one
