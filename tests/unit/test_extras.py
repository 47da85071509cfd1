"""``pip install ctxgraph`` is the embedded store, the CLI and the memory; the
Neo4j driver is the ``neo4j`` extra, the MCP SDK the ``mcp`` one (issue 43).
Checked in fresh interpreters where those packages cannot be imported (as
without the extra): the embedded path runs, and asking for a server or the
MCP server is one error naming the extra."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NEO4J = ("neo4j", "neo4j_rust_ext")
MCP = ("mcp", "prometheus_client")

#: Runs the command line with argv[2:], the packages named in argv[1] made
#: unimportable first; prints the exit code on the last line of stderr.
_BLOCKED = """\
import json, sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # `import name` now fails as when it is not installed
from ctxgraph.cli import main
try:
    main(sys.argv[2:], prog_name="ctxgraph")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({"code": code}), file=sys.stderr)
"""


def _run(blocked: tuple[str, ...], *args: str, cwd: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    proc = subprocess.run([sys.executable, "-c", _BLOCKED, ",".join(blocked), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    lines = proc.stderr.strip().splitlines()
    return int(json.loads(lines[-1])["code"] or 0), proc.stdout, "\n".join(lines[:-1])


def test_the_plain_install_has_neither_the_driver_nor_the_mcp_sdk() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = {d.split(">")[0].split("=")[0].split("<")[0].strip() for d in project["dependencies"]}
    extras = project["optional-dependencies"]
    assert not base & {"neo4j", "neo4j-rust-ext", "mcp", "prometheus-client"}
    assert {"onnx", "onnxruntime", "numpy", "spacy"} <= base  # the memory's default runtime and the signals
    assert [d.split(">")[0] for d in extras["neo4j"]] == ["neo4j", "neo4j-rust-ext"]
    assert [d.split(">")[0] for d in extras["mcp"]] == ["mcp", "prometheus-client"]
    assert extras["all"] == ["ctxgraph[neo4j,mcp]"]


def test_the_embedded_path_runs_without_the_extras(tmp_path: Path) -> None:
    blocked = (*NEO4J, *MCP)
    code, _, err = _run(blocked, "task", "add", "t-1", "--name", "Add JWT login", "--objective", "Verify tokens",
                        cwd=tmp_path)
    assert code == 0, err
    code, out, err = _run(blocked, "context", "t-1", cwd=tmp_path)
    assert code == 0, err
    assert "## Context" in out
    code, out, err = _run(blocked, "mcp", "--print-config", "claude", cwd=tmp_path)  # no SDK needed to print it
    assert code == 0 and "mcpServers" in out, err


def test_a_missing_extra_is_one_error_naming_it(tmp_path: Path) -> None:
    code, out, err = _run(NEO4J, "stats", "--neo4j", "bolt://127.0.0.1:9", cwd=tmp_path)
    assert (code, out, err) == (2, "", "ctxgraph: error: a Neo4j store needs `pip install 'ctxgraph[neo4j]'`")
    code, out, err = _run(MCP, "mcp", "--store", str(tmp_path / "graph.db"), "--create", cwd=tmp_path)
    assert (code, out, err) == (2, "", "ctxgraph: error: the MCP server needs `pip install 'ctxgraph[mcp]'`")
    code, out, err = _run(("prometheus_client",), "mcp", "--store", str(tmp_path / "graph.db"), "--create",
                          cwd=tmp_path)
    assert (code, err) == (2, "ctxgraph: error: the MCP server needs `pip install 'ctxgraph[mcp]'`")
