"""Export and import of a whole graph as JSON lines (``ctxgraph export`` / ``import``).

The format, version 1 — one JSON object per line, UTF-8, lines ending in ``\\n``:

* a header ``{"format": "ctxgraph-export", "version": 1}``;
* nodes ``{"kind": "node", "label": L, "id": ID, "props": {...}}`` sorted by
  (label, id), ``L`` the node's specific label (never the shared ``Knowledge``);
* relationships ``{"kind": "rel", "type": T, "src": [L, ID], "dst": [L, ID],
  "props": {...}}`` sorted by (type, src, dst).

Properties are written with sorted keys, so the same graph gives the same
bytes on either store. Property values are what both stores can hold: text,
integers (64-bit), finite floats, booleans, and lists of one of those.

An import is validated whole before anything is written (a bad file writes
nothing), then written in batches of :data:`BATCH_SIZE` rows, one transaction
each, with MERGE semantics: nodes by (label, id), relationships by (type, src,
dst), properties replaced by the file's. Importing the same file twice changes
nothing.
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ctxgraph.core.models import KIND_LABELS
from ctxgraph.errors import InvalidDocumentError
from ctxgraph.files import atomic_write
from ctxgraph.graph.store import KnowledgeStore

FORMAT = "ctxgraph-export"
VERSION = 1
HEADER: dict[str, Any] = {"format": FORMAT, "version": VERSION}
#: Rows per write transaction on import.
BATCH_SIZE = 1000

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


def _show(value: Any) -> str:
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
            return f"property name {_show(key)} is not valid"
        if isinstance(value, list):
            kinds = {_scalar_kind(v) for v in value}
            if None in kinds:
                bad = next(v for v in value if _scalar_kind(v) is None)
                return f"property {_show(key)}: list holds {_show(bad)}, not text, a number or a boolean"
            if len(kinds) > 1:
                return f"property {_show(key)}: list mixes {', '.join(sorted(k for k in kinds if k))}"
        elif _scalar_kind(value) is None:
            return (f"property {_show(key)}: {_show(value)} is not text, a 64-bit integer, "
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
            return f"unknown node label {_show(label)} (expected one of {', '.join(NODE_LABELS)})"
        if not _text_ok(node_id):
            return f"node id {_show(node_id)} is not non-empty text"
        problem = _props_problem(props)
        if problem:
            return problem
        if props.get("id") != node_id:
            return f"props.id must equal the node id {_show(node_id)}"
        key = KEY_PROPERTY.get(label)
        if key is not None and props.get(key) != node_id:
            return f"a {label} node needs props.{key} equal to its id {_show(node_id)}"
        return None
    if kind == "rel":
        if set(row) != {"kind", "type", "src", "dst", "props"}:
            return f"a rel row has exactly kind, type, src, dst and props (got {', '.join(sorted(map(str, row)))})"
        if row["type"] not in REL_TYPES and row["type"] not in DROPPED_REL_TYPES:
            return f"unknown relationship type {_show(row['type'])} (expected one of {', '.join(REL_TYPES)})"
        for end in ("src", "dst"):
            value = row[end]
            if not (isinstance(value, list) and len(value) == 2 and value[0] in NODE_LABELS
                    and _text_ok(value[1])):
                return f"{end} must be [label, id] with a known label (got {_show(value)})"
        return _props_problem(row["props"])
    return f"unknown row kind {_show(kind)} (expected 'node' or 'rel')"


def check_row(row: Any, where: str = "<rows>", number: int = 0) -> Row:
    """``row`` if valid, else an :class:`InvalidDocumentError` (stores call this per row)."""
    problem = row_problem(row)
    if problem is not None:
        raise InvalidDocumentError(where, [(f"row {number}" if number else "", problem)])
    assert isinstance(row, dict)
    return row


def batches(rows: Iterable[Row], size: int = BATCH_SIZE) -> Iterator[tuple[str, list[Row]]]:
    """Consecutive rows of one kind, at most ``size`` at a time, each row
    checked; relationships of a type no longer kept (:data:`DROPPED_REL_TYPES`) left out."""
    kind: str | None = None
    batch: list[Row] = []
    for number, row in enumerate(rows, start=1):
        check_row(row, number=number)
        if row["kind"] == "rel" and row["type"] in DROPPED_REL_TYPES:
            continue
        if batch and (row["kind"] != kind or len(batch) >= size):
            assert kind is not None
            yield kind, batch
            batch = []
        kind = row["kind"]
        batch.append(row)
    if batch:
        assert kind is not None
        yield kind, batch


# ----------------------------------------------------------------- the file


@dataclass(frozen=True)
class ExportSummary:
    nodes: int
    relationships: int

    @property
    def rows(self) -> int:
        return self.nodes + self.relationships


def write_export(store: KnowledgeStore, out: IO[str]) -> ExportSummary:
    """Write the store's whole graph to a text stream."""
    nodes = rels = 0
    out.write(json.dumps(HEADER) + "\n")
    for row in store.export_rows():
        out.write(encode_row(row) + "\n")
        if row["kind"] == "node":
            nodes += 1
        else:
            rels += 1
    return ExportSummary(nodes, rels)


def export_to_path(store: KnowledgeStore, path: str | os.PathLike[str]) -> ExportSummary:
    """Export to a file, written whole or not at all (a temporary file renamed
    into place), or to standard output when ``path`` is ``-``."""
    if str(path) == "-":
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:  # a text-only stream (some test runners)
            return write_export(store, sys.stdout)
        sys.stdout.flush()
        out = io.TextIOWrapper(buffer, encoding="utf-8", newline="\n")  # UTF-8 whatever the locale
        try:
            return write_export(store, out)
        finally:
            out.flush()
            out.detach()  # leave sys.stdout open
    with atomic_write(Path(path), text=True) as handle:
        return write_export(store, handle)


class ExportReader:
    """Reads an export: :meth:`validate` checks every line, :meth:`rows` yields
    them again for writing. ``open_binary`` opens the data anew on each call."""

    def __init__(self, source: str, open_binary: Callable[[], IO[bytes]]) -> None:
        self.source = source
        self._open = open_binary

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> ExportReader:
        p = Path(path)
        return cls(str(p), lambda: open(p, "rb"))

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "<stdin>") -> ExportReader:
        return cls(source, lambda: io.BytesIO(data))

    def _fail(self, number: int, reason: str) -> InvalidDocumentError:
        return InvalidDocumentError(self.source, [(f"line {number}", reason)])

    def _lines(self) -> Iterator[tuple[int, Any]]:
        """(line number, parsed value) of every non-blank line."""
        with self._open() as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise self._fail(number, f"not UTF-8 text (byte {exc.start})") from None
                if not text.strip():
                    continue
                try:
                    value = json.loads(text, parse_constant=_no_constant)
                except json.JSONDecodeError as exc:
                    raise self._fail(number, f"not JSON: {exc.msg} (column {exc.colno})") from None
                except (ValueError, RecursionError) as exc:
                    raise self._fail(number, f"not JSON: {' '.join(str(exc).splitlines())[:200]}") from None
                yield number, value

    def _header(self, lines: Iterator[tuple[int, Any]]) -> None:
        first = next(lines, None)
        if first is None:
            raise InvalidDocumentError(self.source, [("", f"empty file; expected a {FORMAT} header")])
        number, header = first
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise self._fail(number, f'not a ctxgraph export (the first line must be {json.dumps(HEADER)})')
        version = header.get("version")
        if type(version) is not int or version != VERSION:
            raise self._fail(number, f"unsupported export version {_show(version)} (this ctxgraph reads {VERSION})")

    def validate(self) -> ExportSummary:
        """Check the whole file: header, every row, no duplicates, every
        relationship's ends declared by an earlier node row."""
        lines = self._lines()
        self._header(lines)
        nodes: set[tuple[str, str]] = set()
        knowledge_ids: dict[str, str] = {}
        rels: set[tuple[str, str, str, str, str]] = set()
        for number, row in lines:
            problem = row_problem(row)
            if problem is not None:
                raise self._fail(number, problem)
            if row["kind"] == "node":
                if rels:
                    raise self._fail(number, "a node row after relationship rows (nodes come first)")
                key = node_key(row)
                if key in nodes:
                    raise self._fail(number, f"node {_show(list(key))} given twice")
                if key[0] in KNOWLEDGE_LABELS:
                    other = knowledge_ids.setdefault(key[1], key[0])
                    if other != key[0]:
                        raise self._fail(number, f"knowledge id {_show(key[1])} is both {other} and {key[0]}")
                nodes.add(key)
            else:
                for end in ("src", "dst"):
                    if (row[end][0], row[end][1]) not in nodes:
                        raise self._fail(number, f"{end} {_show(row[end])} is not a node of this file")
                rkey = rel_key(row)
                if rkey in rels:
                    raise self._fail(number, f"relationship {_show(list(rkey))} given twice")
                rels.add(rkey)
        return ExportSummary(len(nodes), len(rels))

    def rows(self) -> Iterator[Row]:
        """Every row after the header (call :meth:`validate` first)."""
        lines = self._lines()
        self._header(lines)
        for number, row in lines:
            problem = row_problem(row)
            if problem is not None:  # the file changed since it was validated
                raise self._fail(number, problem)
            yield row


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid property value")


def import_rows_into(
    store: KnowledgeStore,
    reader: ExportReader,
    progress: Callable[[int], None] | None = None,
    *,
    validated: ExportSummary | None = None,
) -> ExportSummary:
    """Validate the whole export (unless ``validated`` says it was), then write
    it into ``store`` (idempotent). ``progress(1)`` is called per row handed on."""
    summary = validated if validated is not None else reader.validate()

    def counted() -> Iterator[Row]:
        for row in reader.rows():
            yield row
            if progress is not None:
                progress(1)

    store.import_rows(counted())
    return summary


__all__ = [
    "BATCH_SIZE",
    "DROPPED_REL_TYPES",
    "FORMAT",
    "HEADER",
    "NODE_LABELS",
    "REL_TYPES",
    "VERSION",
    "ExportReader",
    "ExportSummary",
    "batches",
    "check_row",
    "encode_row",
    "export_to_path",
    "import_rows_into",
    "node_row",
    "rel_row",
    "row_problem",
    "sorted_rows",
    "write_export",
]
