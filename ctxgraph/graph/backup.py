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
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ctxgraph.errors import InvalidDocumentError
from ctxgraph.files import atomic_write
from ctxgraph.graph.backup_rows import (
    DERIVED_LABELS,
    DROPPED_REL_TYPES,
    KEY_PROPERTY,
    KNOWLEDGE_LABELS,
    NODE_LABELS,
    REL_TYPES,
    UNEXPORTED_LABELS,
    Row,
    check_row,
    encode_row,
    node_key,
    node_row,
    rel_key,
    rel_row,
    row_problem,
    shown,
    sorted_rows,
)
from ctxgraph.graph.store import KnowledgeStore

FORMAT = "ctxgraph-export"
VERSION = 1
HEADER: dict[str, Any] = {"format": FORMAT, "version": VERSION}
#: Rows per write transaction on import.
BATCH_SIZE = 1000


# ---------------------------------------------------------------- batches


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
            raise self._fail(number, f"unsupported export version {shown(version)} (this ctxgraph reads {VERSION})")

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
                    raise self._fail(number, f"node {shown(list(key))} given twice")
                if key[0] in KNOWLEDGE_LABELS:
                    other = knowledge_ids.setdefault(key[1], key[0])
                    if other != key[0]:
                        raise self._fail(number, f"knowledge id {shown(key[1])} is both {other} and {key[0]}")
                nodes.add(key)
            else:
                for end in ("src", "dst"):
                    if (row[end][0], row[end][1]) not in nodes:
                        raise self._fail(number, f"{end} {shown(row[end])} is not a node of this file")
                rkey = rel_key(row)
                if rkey in rels:
                    raise self._fail(number, f"relationship {shown(list(rkey))} given twice")
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
    "DERIVED_LABELS",
    "DROPPED_REL_TYPES",
    "FORMAT",
    "HEADER",
    "KEY_PROPERTY",
    "KNOWLEDGE_LABELS",
    "NODE_LABELS",
    "REL_TYPES",
    "UNEXPORTED_LABELS",
    "VERSION",
    "ExportReader",
    "ExportSummary",
    "Row",
    "batches",
    "check_row",
    "encode_row",
    "export_to_path",
    "import_rows_into",
    "node_key",
    "node_row",
    "rel_key",
    "rel_row",
    "row_problem",
    "sorted_rows",
    "write_export",
]
