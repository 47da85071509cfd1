"""Cypher lives in ctxgraph/cypher/*.cypher: every file is used, every name used exists,
and no Python module builds a statement from pieces."""

from __future__ import annotations

import re
from pathlib import Path

from ctxgraph import cypher

PACKAGE = Path(__file__).resolve().parents[2] / "ctxgraph"
CYPHER_WORDS = re.compile(r"\b(MATCH|MERGE|UNWIND|DETACH DELETE|RETURN)\b")


def _python_sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}


def _names_used() -> set[str]:
    used: set[str] = set()
    for text in _python_sources().values():
        used.update(re.findall(r'cypher\.(?:load|statements)\(\s*"([a-z_]+)"', text))
        used.update(re.findall(r'(?:self\._rows|\b_run)\(\s*tx,\s*"([a-z_]+)"', text))
    return used


def test_every_statement_file_is_used_and_every_used_name_exists() -> None:
    shipped = set(cypher.names())
    used = _names_used()
    assert used - shipped == set(), "code asks for statements that do not exist"
    assert shipped - used == set(), "statement files no code loads"


def test_statements_are_parameterized_files_not_python_strings() -> None:
    for path, text in _python_sources().items():
        if path.parent.name == "local" and path.name == "sql.py":
            continue  # SQL for the embedded store, not Cypher
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith(("#", '"', "'")) or not CYPHER_WORDS.search(stripped):
                continue
            assert "f\"" not in stripped and ".format(" not in stripped, f"{path.name}: {stripped}"


def test_schema_statements_are_idempotent() -> None:
    for statement in cypher.statements("schema"):
        assert "IF NOT EXISTS" in statement
