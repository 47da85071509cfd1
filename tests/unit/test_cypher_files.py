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


def _code_lines(text: str) -> list[str]:
    """A statement's lines without comments and blank lines, spaces collapsed."""
    lines = (re.sub(r"//.*", "", line).strip() for line in text.splitlines())
    return [re.sub(r"\s+", " ", line) for line in lines if line]


def test_no_fragment_of_four_lines_is_repeated_across_statement_files() -> None:
    """Each piece of a query exists once: no run of 4 identical lines (comments
    and spacing aside) appears in two statement files (one would drift)."""
    run = 4
    seen: dict[tuple[str, ...], str] = {}
    repeated = []
    for path in sorted((PACKAGE / "cypher").rglob("*.cypher")):
        lines = _code_lines(path.read_text(encoding="utf-8"))
        for i in range(len(lines) - run + 1):
            window = tuple(lines[i:i + run])
            first = seen.setdefault(window, path.name)
            if first != path.name:
                repeated.append((first, path.name, window))
    assert repeated == [], repeated[:3]


def test_every_part_is_included_and_every_statement_expands_whole() -> None:
    parts_dir = PACKAGE / "cypher" / "parts"
    parts = {p.stem for p in parts_dir.glob("*.cypher")}
    included = set()
    for path in (PACKAGE / "cypher").glob("*.cypher"):
        included.update(m.group(2) for m in cypher.INCLUDE.finditer(path.read_text(encoding="utf-8")))
        text = cypher.load(path.stem)
        assert "// include:" not in text and "{{" not in text, path.name
    assert parts and included == parts, "a part no statement includes, or an include without its part"


def test_gather_reads_a_task_as_the_properties_the_task_model_takes() -> None:
    """gather.cypher reads tasks by a map projection (not their vectors, terms
    or documents): it lists exactly what records.task_from_props reads, every
    property a task is stored with but its terms."""
    from ctxgraph.core.models import Task
    from ctxgraph.graph.records import TASK_READ_PROPERTIES, task_props
    from ctxgraph.signals import TaskSignals

    full = Task(id="t", name="n", objective="o", acceptance_criteria=("a",), type="feature", blocked_reason="r",
                blocked_at="2026-01-01T00:00:00Z", outcome_summary="s", success=True,
                completed_at="2026-01-01T00:00:00Z", created_at="2026-01-01T00:00:00Z",
                updated_at="2026-01-01T00:00:00Z",
                signals=TaskSignals(keywords=("k",), domains=("d",), files_mentioned=("f",), task_types=("t",)))
    assert set(task_props(full)) - {"terms", "term_count"} == TASK_READ_PROPERTIES
    text = cypher.load("gather")
    projections = re.findall(r"\b[dt] \{(\.id,[^}]*\.signal_types)\}", text)
    assert len(projections) == 4  # the dependencies, the related tasks, the dated and undated recent ones
    for found in projections:
        assert {k.strip().lstrip(".") for k in found.split(",")} == TASK_READ_PROPERTIES
