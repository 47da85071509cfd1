"""The readiness probe of `ctxgraph mcp --http` looks for every index and
constraint the schema creates, by name (ctxgraph/service/readiness.py)."""

from __future__ import annotations

from ctxgraph import cypher
from ctxgraph.service.readiness import schema_names


def test_every_schema_statement_names_what_the_probe_looks_for() -> None:
    statements = cypher.statements("schema")
    names = schema_names()
    assert len(names) == len(statements) == len(set(names))
    assert {"task_id", "handoff_id", "chunk_embedding", "file_text"} <= set(names)
    assert all(name.isidentifier() for name in names)
