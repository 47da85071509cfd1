"""The embedded store's SQL lives in ctxgraph/graph/local/sql.py (and
sql_schema.py, which it re-exports, and, for what imports write,
sql_imports.py): every statement there is used, every
statement the code names exists, and no other module of the store writes SQL
of its own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ctxgraph.graph.local import sql, sql_imports

PACKAGE = Path(sql.__file__).parent
SQL_MODULES = ("sql.py", "sql_schema.py", "sql_imports.py")
SQL_START = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|PRAGMA|BEGIN|COMMIT|ROLLBACK)\b")


def _modules() -> dict[str, ast.Module]:
    return {p.name: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.glob("*.py"))
            if p.name not in SQL_MODULES}


def _statements() -> set[str]:
    return {name for module in (sql, sql_imports) for name, value in vars(module).items()
            if name.isupper() and not name.startswith("_") and isinstance(value, str)
            and (module is sql or name not in vars(sql))}


def _names_used() -> set[str]:
    return {node.attr for tree in _modules().values() for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in ("sql", "sql_imports")}


def test_the_package_has_its_statements() -> None:
    assert len(_statements()) > 60
    assert "SCHEMA" in _statements() and "gather" not in _statements()


def test_every_statement_is_used_and_every_used_name_exists() -> None:
    used = _names_used()
    assert used - set(vars(sql)) - set(vars(sql_imports)) == set(), "code asks for statements that do not exist"
    assert _statements() - used == set(), "statements no code runs"


def test_no_module_but_sql_writes_sql() -> None:
    found = [f"{name}:{node.lineno}: {node.value.strip()[:60]}" for name, tree in _modules().items()
             for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_START.match(node.value)]
    assert found == []
