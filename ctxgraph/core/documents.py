"""Parsing user documents: handoffs, task files and context maps (YAML or JSON),
from their bytes.

Every failure becomes an :class:`InvalidDocumentError` naming the source, the
field path and the reason. Pure: reading the files is ``service.documents``.
"""

from __future__ import annotations

import functools
import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ctxgraph.core.document_checks import (
    MAX_ALIAS_EXPANSION,
    MAX_DOCUMENT_DEPTH,
    MAX_PROBLEM_CHARS,
    check_tree,
    field_path,
    limits,
    one_line,
    timestamps_as_text,
)
from ctxgraph.core.models import (
    ContextMapDoc,
    ContextMapEntryDoc,
    FileEntry,
    HandoffDoc,
    TasksDoc,
)
from ctxgraph.errors import InvalidDocumentError

#: Documents larger than this are refused before parsing.
MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
#: YAML aliases beyond this count are refused (guards against alias bombs).
MAX_YAML_ALIASES = 100
#: Digits an integer may have (Python converts at most 4,300).
MAX_INT_DIGITS = 1_000
DOCUMENT_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")

M = TypeVar("M", bound=BaseModel)


def _problems(exc: ValidationError) -> list[tuple[str, str]]:
    problems = []
    for err in exc.errors(include_url=False):
        loc = [p for p in err["loc"] if p not in ("function-before", "function-after")]
        problems.append((one_line(field_path(loc)), one_line(err["msg"])))
    return problems[:20]


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


@functools.cache
def _guarded_loader() -> Any:
    """The YAML loader class (built on first use: ``task add`` and the other
    commands that parse no document do not import yaml)."""
    import yaml

    class _GuardedLoader(yaml.SafeLoader):
        """A safe loader that refuses alias bombs, recursive aliases, integers too
        long to convert and impossible dates — each as a YAML error."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self._aliases = getattr(self, "_aliases", 0) + 1
                if self._aliases > MAX_YAML_ALIASES:
                    raise yaml.YAMLError(f"more than {MAX_YAML_ALIASES} aliases")
            return super().compose_node(parent, index)

        def construct_document(self, node: Any) -> Any:
            _check_node_graph(node)
            return super().construct_document(node)

        def construct_yaml_int(self, node: Any) -> Any:
            digits = sum(c.isdigit() for c in str(node.value))
            if digits > MAX_INT_DIGITS:
                raise yaml.constructor.ConstructorError(
                    None, None, f"an integer of {digits:,} digits (at most {MAX_INT_DIGITS:,})", node.start_mark
                )
            return super().construct_yaml_int(node)

        def construct_yaml_timestamp(self, node: Any) -> Any:
            try:
                return super().construct_yaml_timestamp(node)
            except (ValueError, OverflowError) as exc:
                raise yaml.constructor.ConstructorError(
                    None, None, f"impossible date {one_line(str(node.value))[:40]!r} ({exc})", node.start_mark
                ) from None


    _GuardedLoader.add_constructor("tag:yaml.org,2002:int", _GuardedLoader.construct_yaml_int)
    _GuardedLoader.add_constructor("tag:yaml.org,2002:timestamp", _GuardedLoader.construct_yaml_timestamp)
    return _GuardedLoader


def _node_children(node: Any) -> list[Any]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_node_graph(root: Any) -> None:
    """Refuse a composed YAML document whose aliases (merge keys included)
    refer to a node containing them, or would expand it by more than
    :data:`MAX_ALIAS_EXPANSION` values — checked on the node graph, before
    anything is constructed, without recursion."""
    import yaml

    sizes: dict[int, int] = {}  # expanded size of each node left
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        key = id(node)
        if leaving:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _node_children(node))
            if sizes[key] - len(sizes) > MAX_ALIAS_EXPANSION:
                raise yaml.YAMLError(
                    f"aliases expand the document by more than {MAX_ALIAS_EXPANSION:,} values"
                )
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise yaml.YAMLError("an alias refers to a node that contains it (a recursive document)")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(_node_children(node)))


def parse_structured(text: str, source: str) -> Any:
    """Parse YAML (JSON is a subset) into plain Python values."""
    import yaml

    try:
        return yaml.load(text, Loader=_guarded_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc) or type(exc).__name__
        raise InvalidDocumentError(source, [("", f"not valid YAML/JSON: {where}{one_line(problem)}")]) from None
    except RecursionError:
        raise InvalidDocumentError(source, [("", "document nested too deeply")]) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a value no YAML constructor can build
        raise InvalidDocumentError(source, [("", f"not valid YAML/JSON: {one_line(str(exc))}")]) from None


def validate(model: type[M], data: Any, source: str) -> M:
    """Validate parsed data against a document model; every failure is an
    :class:`InvalidDocumentError` (the model's own checks, then the limits the
    stores and the signal extractor need)."""
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        raise InvalidDocumentError(source, [("", f"expected a mapping at the top, got {kind}")])
    check_tree(data, source)
    data = timestamps_as_text(model, data, source)
    try:
        doc = model.model_validate(data)
    except ValidationError as exc:
        raise InvalidDocumentError(source, _problems(exc)) from None
    except RecursionError:
        raise InvalidDocumentError(source, [("", "document nested too deeply")]) from None
    except (AttributeError, TypeError, ValueError, OverflowError) as exc:  # a validator surprised by a value
        raise InvalidDocumentError(source, [("", f"cannot read the document: {one_line(str(exc))}")]) from None
    problems = limits(doc)
    if problems:
        raise InvalidDocumentError(source, problems)
    return doc


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
    entries = []
    for i, entry in enumerate(doc.files):
        try:
            entries.append(entry.to_entry())
        except ValidationError as exc:
            problems = [(f"files[{i}].{path}" if path else f"files[{i}]", msg) for path, msg in _problems(exc)]
            raise InvalidDocumentError(source, problems) from None
        except ValueError as exc:  # clean_path: a NUL byte, a blank path
            raise InvalidDocumentError(source, [(f"files[{i}].path", one_line(str(exc)))]) from None
    return entries


def _json_lines(text: str, source: str) -> list[Any]:
    rows = []
    # JSON lines end at "\n" only: U+2028 and friends are valid inside JSON strings.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InvalidDocumentError(source, [(f"line {number}", exc.msg)]) from None
        except (ValueError, RecursionError) as exc:  # an integer too long, nesting too deep
            reason = "nested too deeply" if isinstance(exc, RecursionError) else one_line(str(exc))
            raise InvalidDocumentError(source, [(f"line {number}", reason)]) from None
    return rows


__all__ = [
    "MAX_ALIAS_EXPANSION",
    "MAX_DOCUMENT_DEPTH",
    "MAX_PROBLEM_CHARS",
    "ContextMapEntryDoc",
    "decode",
    "load_context_map",
    "load_handoff",
    "load_tasks",
    "parse_structured",
]
