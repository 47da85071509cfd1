"""A quick command line: ``ctxgraph --help``, ``--version`` and the commands
that compute no signals import neither spaCy, numpy, the Neo4j driver nor the
MCP SDK; what a command needs is imported when it runs (issue 28, item 3).
Checked in fresh interpreters, on ``sys.modules``: no timing here (the times
are ``python -m benchmarks.cli``)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxgraph
from ctxgraph.signals import SignalExtractor

#: Never imported by the help, the version or a command computing no signals.
HEAVY = ("spacy", "numpy", "neo4j", "mcp")

#: Runs the ``ctxgraph`` command line with argv[1:], then prints the heavy
#: top-level packages it loaded as JSON on the last line of stderr.
_PROBE = """\
import json, sys
from ctxgraph.cli import main
try:
    main(sys.argv[1:], prog_name="ctxgraph")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(HEAVY)))
print(json.dumps({"code": code, "loaded": heavy}), file=sys.stderr)
"""


def _probe(*args: str, cwd: Path, heavy: tuple[str, ...] = HEAVY, **extra: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))} | extra
    code = _PROBE.replace("HEAVY", repr(json.dumps(list(heavy))))
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, None), proc.stderr
    return list(report["loaded"])


def test_importing_the_cli_loads_nothing_heavy(tmp_path: Path) -> None:
    code = ("import sys, json, ctxgraph.cli\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    loaded = set(json.loads(proc.stdout))
    assert not loaded & {*HEAVY, "pydantic", "networkx", "jinja2"}, sorted(loaded)


def test_help_and_version_load_nothing_heavy(tmp_path: Path) -> None:
    # Not even pydantic: the help is click alone (under 150 ms: benchmarks/cli.py).
    heavy = (*HEAVY, "pydantic", "networkx", "jinja2", "yaml")
    assert _probe("--help", cwd=tmp_path, heavy=heavy) == []
    assert _probe("--version", cwd=tmp_path, heavy=heavy) == []


def test_every_commands_help_loads_nothing_heavy(tmp_path: Path) -> None:
    """One interpreter asks every command and subcommand for its help."""
    import click

    from ctxgraph.cli import main

    paths: list[list[str]] = []

    def walk(group: click.Group, prefix: list[str]) -> None:
        for name, command in group.commands.items():
            paths.append([*prefix, name])
            if isinstance(command, click.Group):
                walk(command, [*prefix, name])

    walk(main, [])
    assert len(paths) > 20
    code = _PROBE.replace(
        "try:\n    main(sys.argv[1:], prog_name=\"ctxgraph\")",
        "try:\n    for path in json.loads(sys.argv[1]):\n"
        "        try:\n            main([*path, '--help'], prog_name='ctxgraph')\n"
        "        except SystemExit as exc:\n            assert not exc.code, (path, exc.code)\n"
        "    main(['--help'], prog_name='ctxgraph')",
    ).replace("HEAVY", repr(json.dumps(list(HEAVY))))
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(paths)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report == {"code": 0, "loaded": []}, proc.stderr[-2000:]


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory, extractor: SignalExtractor) -> Path:
    """A folder whose default embedded store holds two tasks (written here, with signals)."""
    from ctxgraph import ContextService, Task
    from ctxgraph.graph.local import LocalStore

    folder = tmp_path_factory.mktemp("no-signals")
    (folder / ".ctxgraph").mkdir()
    with ContextService(LocalStore.open(folder / ".ctxgraph" / "graph.db"), extractor) as svc:
        svc.initialize()
        svc.add_task(Task(id="t-1", name="Add JWT login", objective="Verify tokens"))
        svc.add_task(Task(id="t-2", name="Refresh tokens", objective="Rotate the JWT"))
    return folder


@pytest.mark.parametrize("args", [
    ["task", "list"],
    ["task", "show", "t-1", "--format", "json"],
    ["stats"],
    ["task", "block", "t-2", "--reason", "keys"],
    ["task", "unblock", "t-2"],
    ["index", "--list"],
    ["outcomes"],
    ["conflicts"],
    ["export", "out.jsonl"],
])
def test_commands_that_need_no_signals_load_nothing_heavy(store_dir: Path, args: list[str]) -> None:
    assert _probe(*args, cwd=store_dir) == []


def test_task_add_loads_no_spacy_once_the_signals_snapshot_is_written(tmp_path: Path) -> None:
    """The first process that computes signals loads spaCy and writes its
    snapshot (docs/concepts.md); every later ``task add`` tags without it."""
    cache = str(tmp_path / "cache")
    heavy = ("spacy", "thinc", "neo4j", "mcp", "yaml")  # (yaml: task add parses no document)
    add = ("task", "add", "--name", "Add JWT login", "--objective", "Verify JWT access tokens")
    first = _probe(add[0], add[1], "t-1", *add[2:], cwd=tmp_path, heavy=heavy, CTXGRAPH_MODEL_CACHE=cache)
    if not list(Path(cache).glob("signals/*.snapshot")):
        pytest.skip("no spaCy pipeline package: no snapshot to write")
    assert "spacy" in first
    assert _probe(add[0], add[1], "t-2", *add[2:], cwd=tmp_path, heavy=heavy, CTXGRAPH_MODEL_CACHE=cache) == []


def test_the_hook_commands_load_nothing_heavy(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for args in (["hooks", "install"], ["hooks", "status"], ["hooks", "uninstall"]):
        assert _probe(*args, "--root", str(tmp_path), cwd=tmp_path) == []


def test_spelled_out_choices_match_the_models() -> None:
    from ctxgraph.cli._common import COMPLEXITIES, STATUSES
    from ctxgraph.cli._ingest import HANDOFF_BATCH
    from ctxgraph.core.models import Complexity, TaskStatus
    from ctxgraph.service import HANDOFF_BATCH as SERVICE_HANDOFF_BATCH

    assert [c.value for c in Complexity] == COMPLEXITIES
    assert [s.value for s in TaskStatus] == STATUSES
    assert HANDOFF_BATCH == SERVICE_HANDOFF_BATCH


def test_the_public_api_still_resolves() -> None:
    for name in ctxgraph.__all__:
        assert getattr(ctxgraph, name) is not None, name
    from ctxgraph.cli import InvalidDocumentError, TaskDoc, UnknownTaskError
    from ctxgraph.core.models import TaskDoc as ModelTaskDoc
    from ctxgraph.errors import InvalidDocumentError as DocError
    from ctxgraph.errors import UnknownTaskError as TaskError

    assert (TaskDoc, InvalidDocumentError, UnknownTaskError) == (ModelTaskDoc, DocError, TaskError)


def _lazy_names(tree: ast.Module) -> set[str]:
    """Names a module imports only for type checking (``if TYPE_CHECKING:``)."""
    runtime: set[str] = set()
    typing_only: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            runtime.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import | ast.ImportFrom):
                    typing_only.update((a.asname or a.name).split(".")[0] for a in sub.names)
    return typing_only - runtime


def test_names_imported_for_type_checking_are_imported_where_they_run() -> None:
    """A module that imports numpy (or another heavy package) only under TYPE_CHECKING must import it in
    each function that uses it at run time; ruff and mypy cannot tell (the name is defined for them)."""
    missing = []
    for path in sorted(Path(ctxgraph.__file__).parent.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy = _lazy_names(tree)
        functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
        for fn in functions:
            local = {(a.asname or a.name).split(".")[0] for sub in ast.walk(fn)
                     if isinstance(sub, ast.Import | ast.ImportFrom) for a in sub.names}
            outer = {(a.asname or a.name).split(".")[0] for f in functions if f is not fn and fn in ast.walk(f)
                     for sub in ast.walk(f) if isinstance(sub, ast.Import | ast.ImportFrom) for a in sub.names}
            annotations = {id(x) for sub in ast.walk(fn) for attr in ("annotation", "returns")
                           if getattr(sub, attr, None) is not None for x in ast.walk(getattr(sub, attr))}
            missing += [f"{path.name}:{node.lineno} {fn.name} uses {node.id}" for node in ast.walk(fn)
                        if isinstance(node, ast.Name) and node.id in lazy and id(node) not in annotations
                        and node.id not in local | outer]
    assert missing == []
