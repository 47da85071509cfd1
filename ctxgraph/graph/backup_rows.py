"""The rows of an export (:mod:`ctxgraph.graph.backup`): the labels and
relationship types of the schema they may name, how a row is built and
encoded as a line, and the check of one row (its kind, keys, label or type,
and property values that both stores can hold)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

from ctxgraph.core.models import KIND_LABELS
from ctxgraph.errors import InvalidDocumentError

KNOWLEDGE_LABELS: tuple[str, ...] = tuple(KIND_LABELS.values())
#: Every node label of the schema (knowledge nodes by their specific label).
#: A label or type added to the schema must be added here and to the
#: import_*.cypher statements too (tests/reliability/test_backup_schema.py checks).
NODE_LABELS: tuple[str, ...] = ("Chunk", "File", "Handoff", *KNOWLEDGE_LABELS, "Project", "Tag", "Task", "Term")
#: Every relationship type of the schema (IN_FILE: a memory chunk's file).
REL_TYPES: tuple[str, ...] = (
    "CREATED", "DEPENDS_ON", "DISCOVERED", "HANDED_OFF", "IN_FILE", "MODIFIED", "READ_NEXT", "SUPERSEDES", "TAGGED",
)
#: Relationship types of older ctxgraph versions an import accepts and leaves
#: out (MENTIONS: a task or file to its full-text terms, which nothing read).
DROPPED_REL_TYPES: tuple[str, ...] = ("MENTIONS",)
#: Labels of the schema that are not part of an export: the deliveries log
#: (``ctxgraph.outcomes.records``), an operational record, not knowledge;
#: Neo4j's full-text statistics (``Corpus``: recounted by an import), and the
#: code anchors and the state of an import of the project's files (``Anchor``,
#: ``ImportedFile``: they describe one work tree; docs/freshness.md), and the
#: records of imported histories (``HistorySource``: where one checkout's last
#: import stopped; docs/history.md).
UNEXPORTED_LABELS: tuple[str, ...] = ("Delivery", "Corpus", "Anchor", "ImportedFile", "HistorySource")
#: Labels a Neo4j graph derives from a node's properties (a finished task's
#: ``Completed``, counted by the server's count store): left out of an export
#: (``export_nodes.cypher``) and set again by an import.
DERIVED_LABELS: tuple[str, ...] = ("Completed",)
#: The property that keys a label on Neo4j when it is not ``id`` (``id`` holds the same value).
KEY_PROPERTY: dict[str, str] = {"File": "path", "Tag": "name", "Term": "name"}

_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1

Row = dict[str, Any]


# ---------------------------------------------------------------------- rows


def node_row(label: str, node_id: str, props: dict[str, Any]) -> Row:
    return {"kind": "node", "label": label, "id": node_id, "props": props}


def rel_row(rel_type: str, src: tuple[str, str], dst: tuple[str, str], props: dict[str, Any]) -> Row:
    return {"kind": "rel", "type": rel_type, "src": [src[0], src[1]], "dst": [dst[0], dst[1]], "props": props}


def node_key(row: Row) -> tuple[str, str]:
    return (row["label"], row["id"])


def rel_key(row: Row) -> tuple[str, str, str, str, str]:
    return (row["type"], row["src"][0], row["src"][1], row["dst"][0], row["dst"][1])


def sorted_rows(nodes: Iterable[Row], rels: Iterable[Row]) -> Iterator[Row]:
    """Nodes by (label, id), then relationships by (type, src, dst), in code-point
    order (Python's, and SQLite's for UTF-8 text — not Neo4j's UTF-16 order)."""
    yield from sorted(nodes, key=node_key)
    yield from sorted(rels, key=rel_key)


def encode_row(row: Row) -> str:
    """One line of the file (no newline): the row's keys in format order,
    properties sorted, non-ASCII text kept as UTF-8."""
    ordered: Row = {k: row[k] for k in (("kind", "label", "id") if row["kind"] == "node"
                                         else ("kind", "type", "src", "dst"))}
    ordered["props"] = {k: row["props"][k] for k in sorted(row["props"])}
    return json.dumps(ordered, ensure_ascii=False, allow_nan=False)


# ---------------------------------------------------------------- validation


def shown(value: Any) -> str:
    """``value`` as a message shows it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _scalar_kind(value: Any) -> str | None:
    """The property type of a scalar value, or None when no store can hold it."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if _INT_MIN <= value <= _INT_MAX else None
    if isinstance(value, float):
        return "float" if math.isfinite(value) else None
    if isinstance(value, str):
        return "str" if _valid_text(value) else None
    return None


def _valid_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def _text_ok(value: Any) -> bool:
    return isinstance(value, str) and value != "" and _valid_text(value)


def _props_problem(props: Any) -> str | None:
    if not isinstance(props, dict):
        return "props must be an object"
    for key, value in props.items():
        if not _text_ok(key):
            return f"property name {shown(key)} is not valid"
        if isinstance(value, list):
            kinds = {_scalar_kind(v) for v in value}
            if None in kinds:
                bad = next(v for v in value if _scalar_kind(v) is None)
                return f"property {shown(key)}: list holds {shown(bad)}, not text, a number or a boolean"
            if len(kinds) > 1:
                return f"property {shown(key)}: list mixes {', '.join(sorted(k for k in kinds if k))}"
        elif _scalar_kind(value) is None:
            return (f"property {shown(key)}: {shown(value)} is not text, a 64-bit integer, "
                    "a finite number, a boolean or a list of one of those")
    return None


def row_problem(row: Any) -> str | None:
    """Why a row is not a valid node or relationship row (None when it is).
    Checks the row alone; :class:`ExportReader` also checks the rows together."""
    if not isinstance(row, dict):
        return "expected a JSON object"
    kind = row.get("kind")
    if kind == "node":
        if set(row) != {"kind", "label", "id", "props"}:
            return f"a node row has exactly kind, label, id and props (got {', '.join(sorted(map(str, row)))})"
        label, node_id, props = row["label"], row["id"], row["props"]
        if label not in NODE_LABELS:
            return f"unknown node label {shown(label)} (expected one of {', '.join(NODE_LABELS)})"
        if not _text_ok(node_id):
            return f"node id {shown(node_id)} is not non-empty text"
        problem = _props_problem(props)
        if problem:
            return problem
        if props.get("id") != node_id:
            return f"props.id must equal the node id {shown(node_id)}"
        key = KEY_PROPERTY.get(label)
        if key is not None and props.get(key) != node_id:
            return f"a {label} node needs props.{key} equal to its id {shown(node_id)}"
        return None
    if kind == "rel":
        if set(row) != {"kind", "type", "src", "dst", "props"}:
            return f"a rel row has exactly kind, type, src, dst and props (got {', '.join(sorted(map(str, row)))})"
        if row["type"] not in REL_TYPES and row["type"] not in DROPPED_REL_TYPES:
            return f"unknown relationship type {shown(row['type'])} (expected one of {', '.join(REL_TYPES)})"
        for end in ("src", "dst"):
            value = row[end]
            if not (isinstance(value, list) and len(value) == 2 and value[0] in NODE_LABELS
                    and _text_ok(value[1])):
                return f"{end} must be [label, id] with a known label (got {shown(value)})"
        return _props_problem(row["props"])
    return f"unknown row kind {shown(kind)} (expected 'node' or 'rel')"


def check_row(row: Any, where: str = "<rows>", number: int = 0) -> Row:
    """``row`` if valid, else an :class:`InvalidDocumentError` (stores call this per row)."""
    problem = row_problem(row)
    if problem is not None:
        raise InvalidDocumentError(where, [(f"row {number}" if number else "", problem)])
    assert isinstance(row, dict)
    return row
