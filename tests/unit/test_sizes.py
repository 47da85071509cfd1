"""No function in ctxgraph/ is over 80 lines and no module over 400 (issue 43),
but for the ones listed below, which wait to be split. The list can only
shrink: an entry that is no longer over its limit, or names nothing, fails
too, so that it is taken off once its split is done.

A function's lines run from its ``def`` to its last line (decorators left
out; nested functions count in their parent too); a module's are its lines."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ctxgraph"
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 400

#: Modules (paths from the repository's root) over MAX_MODULE_LINES today.
MODULES_LEFT: frozenset[str] = frozenset()
#: Functions ("path::Qualified.name") over MAX_FUNCTION_LINES today.
FUNCTIONS_LEFT: frozenset[str] = frozenset()

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, Function]]:
    """Every function of ``tree`` with its qualified name (``Class.method``, ``outer.inner``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name, node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def _sizes() -> tuple[dict[str, int], dict[str, int]]:
    """(lines per module, lines per function), of every module of the package."""
    modules: dict[str, int] = {}
    functions: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        modules[name] = len(text.splitlines())
        for qualname, node in _functions(ast.parse(text, name)):
            assert node.end_lineno is not None
            functions[f"{name}::{qualname}"] = node.end_lineno - node.lineno + 1
    return modules, functions


def _over(sizes: dict[str, int], limit: int) -> dict[str, int]:
    return {name: n for name, n in sizes.items() if n > limit}


def test_no_module_is_over_its_limit() -> None:
    modules, _ = _sizes()
    over = _over(modules, MAX_MODULE_LINES)
    assert {n: k for n, k in over.items() if n not in MODULES_LEFT} == {}, \
        f"modules over {MAX_MODULE_LINES} lines: split them by responsibility"


def test_no_function_is_over_its_limit() -> None:
    _, functions = _sizes()
    over = _over(functions, MAX_FUNCTION_LINES)
    assert {n: k for n, k in over.items() if n not in FUNCTIONS_LEFT} == {}, \
        f"functions over {MAX_FUNCTION_LINES} lines: split them into named helpers"


@pytest.mark.parametrize(("listed", "index", "limit"), [
    (MODULES_LEFT, 0, MAX_MODULE_LINES), (FUNCTIONS_LEFT, 1, MAX_FUNCTION_LINES)])
def test_the_lists_of_what_is_left_only_shrink(listed: frozenset[str], index: int, limit: int) -> None:
    sizes = _sizes()[index]
    assert {name for name in listed if sizes.get(name, 0) <= limit} == set(), \
        "no longer over the limit (or gone): take it off the list"


def test_the_scan_sees_functions_and_their_sizes() -> None:
    tree = ast.parse("class A:\n    def f(self):\n        def g():\n            pass\n\n        return g\n")
    found = {name: node.end_lineno - node.lineno + 1 for name, node in _functions(tree)
             if node.end_lineno is not None}
    assert found == {"A.f": 5, "A.f.g": 2}
    modules, functions = _sizes()
    assert len(modules) > 100 and len(functions) > 1000
    assert max(functions.values()) > MAX_FUNCTION_LINES // 2
