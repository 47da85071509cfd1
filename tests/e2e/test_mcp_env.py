"""``ctxgraph mcp`` configured by its environment only, as a container runs it
(docs/deploy.md, "Configuration is by environment only"): the token from a
file, projects, root, default project and size cap from ``CTXGRAPH_MCP_*``."""

from __future__ import annotations

from pathlib import Path

import pytest
from _mcp_client import HttpServer, cli_error, http, small_store

TOKEN = "env-token-" + "x" * 24


def test_the_server_takes_its_whole_configuration_from_the_environment(tmp_path: Path) -> None:
    small_store(tmp_path / "web.db")
    small_store(tmp_path / "api.db")
    (tmp_path / "token").write_text(TOKEN + "\nanything after the first line is not read\n")
    env = {"CTXGRAPH_MCP_TOKEN_FILE": str(tmp_path / "token"),
           "CTXGRAPH_MCP_PROJECTS": f"web={tmp_path / 'web.db'} api={tmp_path / 'api.db'}",
           "CTXGRAPH_MCP_DEFAULT_PROJECT": "api", "CTXGRAPH_MCP_NO_INDEX": "1",
           "CTXGRAPH_MCP_MAX_RESPONSE_TOKENS": "3000"}
    server = HttpServer([], cwd=tmp_path, env=env, log=tmp_path / "server.log")
    try:
        client = http(server.url, TOKEN)
        try:
            listed = client.ok("list_projects")
            assert {p["name"] for p in listed["projects"]} == {"web", "api"}
            assert [p["name"] for p in listed["projects"] if p["default"]] == ["api"]
            assert listed["max_response_tokens"] == 3000
            assert client.ok("get_task", {"task_id": "t-auth"})["project"] == "api"
        finally:
            client.close()
        with pytest.raises(BaseException):  # noqa: B017 (the SDK's client raises an exception group)
            http(server.url, "wrong-" + TOKEN)
    finally:
        server.stop()
    assert "indexing" not in server.log.read_text(encoding="utf-8")  # CTXGRAPH_MCP_NO_INDEX


def test_a_token_file_that_cannot_be_used_is_refused_at_start(tmp_path: Path) -> None:
    small_store(tmp_path / "g.db")
    args = ("mcp", "--http", "127.0.0.1:0", "--store", str(tmp_path / "g.db"))
    code, line = cli_error(*args, cwd=tmp_path, env={"CTXGRAPH_MCP_TOKEN_FILE": str(tmp_path / "none")})
    assert code == 2 and line.startswith(f"ctxgraph: error: CTXGRAPH_MCP_TOKEN_FILE {tmp_path / 'none'}: cannot read")
    (tmp_path / "empty").write_text("\n")
    code, line = cli_error(*args, cwd=tmp_path, env={"CTXGRAPH_MCP_TOKEN_FILE": str(tmp_path / "empty")})
    assert code == 2 and line.endswith("the first line is empty")
    (tmp_path / "short").write_text("short\n")
    code, line = cli_error(*args, cwd=tmp_path, env={"CTXGRAPH_MCP_TOKEN_FILE": str(tmp_path / "short")})
    assert code == 2 and "16 to 4,096 characters" in line
