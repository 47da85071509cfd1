"""Parsing user documents: handoffs, task files and context maps (YAML or JSON),
from their bytes.

Every failure becomes an :class:`InvalidDocumentError` naming the source, the
field path and the reason. Pure: reading the files is ``service.documents``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

# Knowledge texts, words and tags, and paths (ctxgraph.core.limits; knowledge
# added by hand is checked against the same figures).
from ctxgraph.core.limits import MAX_KNOWLEDGE_CHARS, MAX_PATH_BYTES, MAX_WORD_CHARS
from ctxgraph.core.models import (
    ContextMapDoc,
    ContextMapEntryDoc,
    FileEntry,
    HandoffDoc,
    TaskDoc,
    TasksDoc,
)
from ctxgraph.errors import InvalidDocumentError

#: Documents larger than this are refused before parsing.
MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
#: YAML aliases beyond this count are refused (guards against alias bombs).
MAX_YAML_ALIASES = 100
#: Values YAML aliases (merge keys included) may add to a document once expanded.
MAX_ALIAS_EXPANSION = 100_000
#: Nesting deeper than this is refused (no validator or encoder recurses further).
MAX_DOCUMENT_DEPTH = 200
#: Digits an integer may have (Python converts at most 4,300).
MAX_INT_DIGITS = 1_000
#: A problem message (or field path) is cut to this many characters.
MAX_PROBLEM_CHARS = 300
DOCUMENT_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")

_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_WORD = re.compile(rf"\S{{{MAX_WORD_CHARS + 1},}}")

M = TypeVar("M", bound=BaseModel)


def _field_path(loc: Iterable[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _one_line(text: str) -> str:
    """Part of a one-line message: line breaks flattened, length bounded."""
    flat = " ".join(text.splitlines())
    return flat if len(flat) <= MAX_PROBLEM_CHARS else flat[: MAX_PROBLEM_CHARS - 3] + "..."


def _problems(exc: ValidationError) -> list[tuple[str, str]]:
    problems = []
    for err in exc.errors(include_url=False):
        loc = [p for p in err["loc"] if p not in ("function-before", "function-after")]
        problems.append((_one_line(_field_path(loc)), _one_line(err["msg"])))
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
                    None, None, f"impossible date {_one_line(str(node.value))[:40]!r} ({exc})", node.start_mark
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
        raise InvalidDocumentError(source, [("", f"not valid YAML/JSON: {where}{_one_line(problem)}")]) from None
    except RecursionError:
        raise InvalidDocumentError(source, [("", "document nested too deeply")]) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a value no YAML constructor can build
        raise InvalidDocumentError(source, [("", f"not valid YAML/JSON: {_one_line(str(exc))}")]) from None


def validate(model: type[M], data: Any, source: str) -> M:
    """Validate parsed data against a document model; every failure is an
    :class:`InvalidDocumentError` (the model's own checks, then the limits the
    stores and the signal extractor need)."""
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        raise InvalidDocumentError(source, [("", f"expected a mapping at the top, got {kind}")])
    _check_tree(data, source)
    data = _timestamps_as_text(model, data, source)
    try:
        doc = model.model_validate(data)
    except ValidationError as exc:
        raise InvalidDocumentError(source, _problems(exc)) from None
    except RecursionError:
        raise InvalidDocumentError(source, [("", "document nested too deeply")]) from None
    except (AttributeError, TypeError, ValueError, OverflowError) as exc:  # a validator surprised by a value
        raise InvalidDocumentError(source, [("", f"cannot read the document: {_one_line(str(exc))}")]) from None
    problems = _limits(doc)
    if problems:
        raise InvalidDocumentError(source, problems)
    return doc


_CONTAINERS = (dict, list, tuple, set, frozenset)


def _children(value: Any) -> list[tuple[str | int, Any]]:
    if isinstance(value, dict):
        return list(value.items())
    return list(enumerate(value))


def _check_tree(data: Any, source: str) -> None:
    """Refuse what no store can keep and no encoder can write: keys that are not
    text, lone surrogates (``"\ud800"`` escapes), a structure containing itself,
    nesting deeper than :data:`MAX_DOCUMENT_DEPTH`, and shared values (YAML
    aliases) expanding the document by more than :data:`MAX_ALIAS_EXPANSION`.
    Iterative: deep or huge input cannot exhaust the stack."""

    def refuse(path: tuple[str | int, ...], reason: str) -> InvalidDocumentError:
        shown = path if len(path) <= 8 else (*path[:3], "...", *path[-3:])
        return InvalidDocumentError(source, [(_one_line(_field_path(shown)), reason)])

    def check_text(path: tuple[str | int, ...], text: str, what: str) -> None:
        if not text.isascii() and _SURROGATE.search(text):
            raise refuse(path, f"{what} is not valid Unicode (a lone surrogate, e.g. from a \\ud800 escape)")

    if not isinstance(data, _CONTAINERS):
        return
    expanded: dict[int, int] = {}  # id -> size with shared values counted at each use
    distinct = 0  # values counting shared ones once
    on_path: set[int] = set()
    stack: list[tuple[Any, tuple[str | int, ...], bool]] = [(data, (), False)]
    while stack:
        value, path, leaving = stack.pop()
        key = id(value)
        if leaving:
            on_path.discard(key)
            total = 1
            for _key, child in _children(value):
                total += 1 if isinstance(value, dict) else 0
                total += expanded[id(child)] if isinstance(child, _CONTAINERS) else 1
            expanded[key] = total
            if total - distinct > MAX_ALIAS_EXPANSION:
                raise refuse((), f"shared values (aliases) expand the document by more than "
                                 f"{MAX_ALIAS_EXPANSION:,} values")
            continue
        if key in expanded:
            continue
        if key in on_path:
            raise refuse(path, "the document contains itself (a recursive alias)")
        if len(path) >= MAX_DOCUMENT_DEPTH:
            raise refuse(path, f"nested deeper than {MAX_DOCUMENT_DEPTH} levels")
        on_path.add(key)
        stack.append((value, path, True))
        distinct += 1
        for k, child in reversed(_children(value)):
            if isinstance(value, dict):
                distinct += 1
                if not isinstance(k, str):
                    raise refuse(path, f"the key {_one_line(repr(k))[:60]} is not text (quote it)")
                check_text(path, k, "a key")
            child_path = (*path, k)
            if isinstance(child, _CONTAINERS):
                stack.append((child, child_path, False))
            else:
                distinct += 1
                if isinstance(child, str):
                    check_text(child_path, child, "text")


def _timestamps_as_text(model: type[BaseModel], data: dict[str, Any], source: str) -> dict[str, Any]:
    """Timestamp fields take text or a YAML timestamp: a date (``2026-03-02``
    unquoted) becomes ISO text; any other type is refused with its field path
    (the models' timestamp validators expect nothing else). Returns a copy
    when something changed; the caller's data is never modified."""

    def fix(holder: dict[str, Any], name: str, path: tuple[str | int, ...]) -> dict[str, Any]:
        value = holder.get(name)
        if value is None or isinstance(value, str | datetime):
            return holder
        if isinstance(value, date):
            return {**holder, name: value.isoformat()}
        raise InvalidDocumentError(
            source, [(_field_path(path), f"expected an ISO-8601 timestamp, got {type(value).__name__}")]
        )

    if model is HandoffDoc:
        return fix(data, "completed_at", ("completed_at",))
    if model is TaskDoc:
        return fix(data, "blocked_at", ("blocked_at",))
    if model is TasksDoc and isinstance(data.get("tasks"), list):
        tasks = [
            fix(t, "blocked_at", ("tasks", i, "blocked_at")) if isinstance(t, dict) else t
            for i, t in enumerate(data["tasks"])
        ]
        return {**data, "tasks": tasks}
    return data


def _limits(doc: BaseModel) -> list[tuple[str, str]]:
    """Limits the models leave out but the stores and the signal extractor need:
    Neo4j indexes File.path and Tag.name (a value must fit an index key), and
    knowledge texts are run through spaCy."""
    problems: list[tuple[str, str]] = []

    def path_ok(where: str, path: str) -> None:
        size = len(path.encode("utf-8"))
        if size > MAX_PATH_BYTES:
            problems.append((where, f"path is {size:,} bytes in UTF-8; at most {MAX_PATH_BYTES:,}"))

    def text_ok(where: str, text: str, max_chars: int | None = None) -> None:
        if max_chars is not None and len(text) > max_chars:
            problems.append((where, f"text is {len(text):,} characters; at most {max_chars:,}"))
        elif _LONG_WORD.search(text):
            problems.append((where, f"a word longer than {MAX_WORD_CHARS:,} characters (words become tags)"))

    if isinstance(doc, HandoffDoc):
        for name, changes in (("files_created", doc.files_created), ("files_modified", doc.files_modified)):
            for i, change in enumerate(changes):
                path_ok(f"{name}[{i}].path", change.path)
        for i, read in enumerate(doc.dependencies_for_next):
            path_ok(f"dependencies_for_next[{i}].file", read.file)
        groups: list[tuple[str, str, list[Any]]] = [
            ("patterns_discovered", "pattern", doc.patterns_discovered),
            ("gotchas", "issue", doc.gotchas),
            ("decisions", "decision", doc.decisions),
            ("open_questions", "question", doc.open_questions),
        ]
        for i, pattern in enumerate(doc.patterns_discovered):
            if pattern.location:
                path_ok(f"patterns_discovered[{i}].location", pattern.location)
        for name, field, items in groups:
            for i, item in enumerate(items):
                text_ok(f"{name}[{i}].{field}", getattr(item, field), MAX_KNOWLEDGE_CHARS)
                for j, tag in enumerate(item.applies_to):
                    if len(tag) > MAX_WORD_CHARS:
                        problems.append((f"{name}[{i}].applies_to[{j}]",
                                         f"tag is {len(tag):,} characters; at most {MAX_WORD_CHARS:,}"))
    tasks: list[tuple[str, TaskDoc]] = []
    if isinstance(doc, TaskDoc):
        tasks = [("", doc)]
    elif isinstance(doc, TasksDoc):
        tasks = [(f"tasks[{i}].", t) for i, t in enumerate(doc.tasks)]
    for prefix, task in tasks:
        text_ok(f"{prefix}name", task.name)
        text_ok(f"{prefix}objective", task.objective)
        for j, criterion in enumerate(task.acceptance_criteria):
            text_ok(f"{prefix}acceptance_criteria[{j}]", criterion)
    if isinstance(doc, ContextMapDoc):
        for i, entry in enumerate(doc.files):
            path_ok(f"files[{i}].path", entry.path)
    return problems[:20]


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
            raise InvalidDocumentError(source, [(f"files[{i}].path", _one_line(str(exc)))]) from None
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
            reason = "nested too deeply" if isinstance(exc, RecursionError) else _one_line(str(exc))
            raise InvalidDocumentError(source, [(f"line {number}", reason)]) from None
    return rows


__all__ = [
    "ContextMapEntryDoc",
    "decode",
    "load_context_map",
    "load_handoff",
    "load_tasks",
    "parse_structured",
]
