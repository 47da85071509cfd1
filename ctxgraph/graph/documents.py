"""Reading user documents: handoffs, task files and context maps (YAML or JSON).

Every failure becomes an :class:`InvalidDocumentError` naming the source, the
field path and the reason. Nothing here touches a store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ctxgraph.errors import InvalidDocumentError
from ctxgraph.graph.models import (
    ContextMapDoc,
    ContextMapEntryDoc,
    FileEntry,
    HandoffDoc,
    TasksDoc,
)

#: Documents larger than this are refused before parsing.
MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
#: YAML aliases beyond this count are refused (guards against alias bombs).
MAX_YAML_ALIASES = 100
DOCUMENT_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")

M = TypeVar("M", bound=BaseModel)


def _field_path(loc: Iterable[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _problems(exc: ValidationError) -> list[tuple[str, str]]:
    problems = []
    for err in exc.errors(include_url=False):
        loc = [p for p in err["loc"] if p not in ("function-before", "function-after")]
        problems.append((_field_path(loc), err["msg"]))
    return problems


def decode(data: bytes, source: str) -> str:
    """Check size and encoding of a document's bytes and return its text."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise InvalidDocumentError(
            source, [("", f"document is {len(data):,} bytes; the limit is {MAX_DOCUMENT_BYTES:,}")]
        )
    if b"\x00" in data:
        raise InvalidDocumentError(source, [("", "binary content (NUL bytes); expected YAML or JSON")])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidDocumentError(
            source, [("", f"not UTF-8 text (byte {exc.start}); expected YAML or JSON")]
        ) from None


class _GuardedLoader(yaml.SafeLoader):
    """A safe loader that refuses documents with too many aliases (alias bombs)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases = getattr(self, "_aliases", 0) + 1
            if self._aliases > MAX_YAML_ALIASES:
                raise yaml.YAMLError(f"more than {MAX_YAML_ALIASES} aliases")
        return super().compose_node(parent, index)


def parse_structured(text: str, source: str) -> Any:
    """Parse YAML (JSON is a subset) into plain Python values."""
    try:
        return yaml.load(text, Loader=_GuardedLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InvalidDocumentError(source, [("", f"not valid YAML/JSON: {where}{problem}")]) from None
    except RecursionError:
        raise InvalidDocumentError(source, [("", "document nested too deeply")]) from None


def validate(model: type[M], data: Any, source: str) -> M:
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        raise InvalidDocumentError(source, [("", f"expected a mapping at the top, got {kind}")])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InvalidDocumentError(source, _problems(exc)) from None
    except RecursionError:
        raise InvalidDocumentError(source, [("", "document nested too deeply")]) from None


def load_handoff(data: bytes, source: str) -> tuple[HandoffDoc, dict[str, Any]]:
    """Parse and validate one handoff; returns the model and the raw mapping."""
    raw = parse_structured(decode(data, source), source)
    doc = validate(HandoffDoc, raw, source)
    return doc, raw


def load_tasks(data: bytes, source: str) -> TasksDoc:
    """A tasks file: ``{tasks: [...]}`` in YAML/JSON, or JSON lines of tasks."""
    text = decode(data, source)
    if source.endswith(".jsonl"):
        rows = _json_lines(text, source)
        return validate(TasksDoc, {"tasks": rows}, source)
    raw = parse_structured(text, source)
    if isinstance(raw, list):
        raw = {"tasks": raw}
    return validate(TasksDoc, raw, source)


def load_context_map(data: bytes, source: str) -> list[FileEntry]:
    """A context map: ``{files: [...]}`` in YAML/JSON, or JSON lines of entries."""
    text = decode(data, source)
    if source.endswith(".jsonl"):
        raw: Any = {"files": _json_lines(text, source)}
    else:
        raw = parse_structured(text, source)
        if isinstance(raw, list):
            raw = {"files": raw}
    doc = validate(ContextMapDoc, raw, source)
    return [entry.to_entry() for entry in doc.files]


def _json_lines(text: str, source: str) -> list[Any]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InvalidDocumentError(source, [(f"line {number}", exc.msg)]) from None
    return rows


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files as given, folders as their document files (sorted, recursive)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in DOCUMENT_SUFFIXES)
            )
        else:
            out.append(path)
    return out


__all__ = [
    "ContextMapEntryDoc",
    "decode",
    "expand_paths",
    "load_context_map",
    "load_handoff",
    "load_tasks",
    "parse_structured",
]
