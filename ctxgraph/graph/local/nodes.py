"""Nodes and edges on an open cursor: the property graph's reads by key and
its writes, shared by every part of the embedded store (all parameterized).

Nodes are (label, id, JSON props) and edges (source, type, destination,
JSON props), with the same properties the Neo4j store keeps.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from ctxgraph.core.models import KIND_LABELS
from ctxgraph.graph.local import sql

KNOWLEDGE_LABELS = tuple(KIND_LABELS.values())

Edge = tuple[tuple[str, str], str, tuple[str, str], dict[str, Any]]


def loads(text: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(text)
    return value


def dumps(props: dict[str, Any]) -> str:
    return json.dumps(props, sort_keys=True, ensure_ascii=False)


def node(cur: sqlite3.Cursor, label: str, node_id: str) -> dict[str, Any] | None:
    row = cur.execute(sql.NODE, (label, node_id)).fetchone()
    return loads(row[0]) if row else None


def nodes(cur: sqlite3.Cursor, label: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The properties of the ``label`` nodes among ``ids``, by id (one query)."""
    rows = cur.execute(sql.NODES, (label, json.dumps(sorted(set(ids))))).fetchall()
    return {str(i): loads(p) for i, p in rows}


def put_node(cur: sqlite3.Cursor, label: str, props: dict[str, Any]) -> None:
    put_nodes(cur, [(label, props)])


def put_nodes(cur: sqlite3.Cursor, items: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """Create or overwrite (label, props) nodes in one ``executemany``."""
    cur.executemany(sql.PUT_NODES, [(label, props["id"], dumps(props)) for label, props in items])


def put_edge(
    cur: sqlite3.Cursor, src: tuple[str, str], rel: str, dst: tuple[str, str],
    props: dict[str, Any] | None = None,
) -> None:
    put_edges(cur, [(src, rel, dst, props or {})])


def put_edges(cur: sqlite3.Cursor, edges: Iterable[Edge]) -> None:
    """Create or overwrite (src, type, dst, props) edges in one ``executemany``."""
    cur.executemany(
        sql.PUT_EDGES, [(*src, rel, *dst, dumps(props) if props else "{}") for src, rel, dst, props in edges],
    )


def named(cur: sqlite3.Cursor, label: str, names: Iterable[str]) -> None:
    """Create the missing ``Tag``/``Term`` nodes among ``names``."""
    cur.executemany(sql.PUT_NAMED, [(label, name, dumps({"id": name, "name": name})) for name in names])


def mention(cur: sqlite3.Cursor, names: Sequence[str]) -> None:
    """Make the ``Term`` nodes of a task's or a file's full-text terms (as
    Neo4j's graph has them, for its text statistics; nothing links to them)."""
    named(cur, "Term", names)


def tag(cur: sqlite3.Cursor, src: tuple[str, str], names: Sequence[str]) -> None:
    named(cur, "Tag", names)
    put_edges(cur, [(src, "TAGGED", ("Tag", name), {}) for name in names])
