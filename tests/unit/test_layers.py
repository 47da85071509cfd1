"""The import graph holds the layering: cli -> mcp/evaluation/demo -> service
-> memory -> graph -> outcomes -> compute -> core (with errors, signals and
cypher beside it, and files, the atomic write, for the parts that do IO:
core and compute do none). graph and compute never import each other: the
stores take only the outcome records from outcomes/, which reach no compute
module, and compute's models and record types are core's. Every import counts, at module level or inside a
function (a lazy import is no way around a layer); only ``if TYPE_CHECKING:``
imports, which never run, are left out."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ctxgraph"

#: What each part of the package may not import (the parts above it).
FORBIDDEN: dict[str, set[str]] = {
    "core": {"files", "graph", "compute", "memory", "outcomes", "service", "settings", "evaluation", "mcp",
             "demo", "cli"},
    "signals": {"core", "graph", "compute", "memory", "outcomes", "service", "settings", "evaluation", "mcp",
                "demo", "cli"},
    "cypher": {"core", "graph", "compute", "memory", "outcomes", "service", "settings", "evaluation", "mcp",
               "demo", "cli"},
    "errors": {"core", "signals", "graph", "compute", "memory", "outcomes", "service", "settings", "evaluation",
               "mcp", "demo", "cli"},
    "files": {"core", "signals", "cypher", "errors", "graph", "compute", "memory", "outcomes", "service", "settings",
              "evaluation", "mcp", "demo", "cli"},
    "graph": {"compute", "memory", "service", "settings", "evaluation", "mcp", "demo", "cli"},
    "compute": {"files", "graph", "memory", "outcomes", "service", "settings", "evaluation", "mcp", "demo", "cli"},
    "memory": {"service", "settings", "evaluation", "mcp", "demo", "cli"},
    "sources": {"service", "settings", "evaluation", "mcp", "demo", "cli"},
    "settings": {"graph", "memory", "outcomes", "service", "evaluation", "mcp", "demo", "cli"},
    "outcomes": {"files", "graph", "memory", "service", "settings", "evaluation", "mcp", "demo", "cli"},
    # the graph a page draws of a computed context: pure, beside compute
    "view": {"files", "graph", "memory", "outcomes", "service", "settings", "evaluation", "mcp", "demo", "cli"},
    "service": {"evaluation", "mcp", "demo", "cli"},
    "evaluation": {"mcp", "demo", "cli"},
    "demo": {"evaluation", "mcp", "cli"},
    "mcp": {"evaluation", "demo", "cli"},
}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _part(module: str) -> str:
    return module.split(".")[1] if module.count(".") else "ctxgraph"


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skipped


def imports() -> dict[str, set[str]]:
    """Each ctxgraph module and the ctxgraph modules it imports."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_only(tree)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.startswith("ctxgraph"))
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ctxgraph"):
                for alias in node.names:  # `from pkg import submodule` imports the submodule, else pkg
                    sub = f"{node.module}.{alias.name}"
                    targets.add(sub if _exists(sub) else node.module)
        found[module] = {t for t in targets if _exists(t)}
    return found


def _exists(module: str) -> bool:
    base = PACKAGE.parent / module.replace(".", "/")
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


GRAPH = imports()


def test_the_scan_sees_the_package() -> None:
    assert len(GRAPH) > 60
    assert "ctxgraph.core.evidence" in GRAPH["ctxgraph.compute.ranking"]


@pytest.mark.parametrize("part", sorted(FORBIDDEN))
def test_no_part_imports_a_part_above_it(part: str) -> None:
    wrong = sorted(f"{module} imports {target}" for module, targets in GRAPH.items() if _part(module) == part
                   for target in targets if _part(target) in FORBIDDEN[part])
    assert wrong == []


def test_no_import_cycle() -> None:
    # The command modules import their helpers from cli/_common.py and
    # cli/_stores.py, and the cli package imports the commands: no loop.
    graph = nx.DiGraph((m, t) for m, ts in GRAPH.items() for t in ts
                       if m != "ctxgraph" and t != "ctxgraph")
    assert list(nx.simple_cycles(graph)) == []


def _reached_from(part: str) -> set[str]:
    """Every module a module of ``part`` imports, directly or through others."""
    edges = nx.DiGraph((m, t) for m, ts in GRAPH.items() for t in ts)
    return set().union(*(nx.descendants(edges, m) for m in GRAPH if _part(m) == part and m in edges))


def test_compute_reaches_no_store() -> None:
    # compute/ is pure: its models and record types come from core/; it
    # reaches nothing of graph/, not even through another module.
    assert sorted(m for m in _reached_from("compute") if _part(m) == "graph") == []


def test_the_stores_reach_no_compute() -> None:
    # graph/ imports outcomes.records (the delivery records the stores keep),
    # and nothing that leads from there to the pipeline.
    assert sorted(m for m in _reached_from("graph") if _part(m) == "compute") == []


def test_the_models_live_in_core() -> None:
    assert "ctxgraph.core.models" in GRAPH["ctxgraph.compute.context"]
    assert not (PACKAGE / "graph" / "models.py").exists()


def _reaches_past_the_service(path: Path) -> list[str]:
    """What a module does that only the service may: import ``ctxgraph.graph``
    (even under ``TYPE_CHECKING``) or touch a ``.store`` attribute."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Attribute) and node.attr == "store":
            found.append(f"line {node.lineno}: .store")
        found += [f"line {node.lineno}: imports {n}" for n in names
                  if n == "ctxgraph.graph" or n.startswith("ctxgraph.graph.")]
    return found


@pytest.mark.parametrize("part", ["cli", "mcp"])
def test_the_cli_and_the_mcp_server_go_through_the_service(part: str) -> None:
    # Rule of the house: cli/ holds no logic beyond parsing and printing; the
    # store and the graph package are the service's (ContextService), so
    # neither front end imports ctxgraph.graph nor reaches for `svc.store`.
    files = sorted((PACKAGE / part).rglob("*.py"))
    assert files
    wrong = [f"{path.relative_to(PACKAGE.parent)} {what}" for path in files for what in _reaches_past_the_service(path)]
    assert wrong == []
