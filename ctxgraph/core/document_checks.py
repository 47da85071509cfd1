"""The checks a parsed document passes beside its model's
(:mod:`ctxgraph.core.documents`): its tree (text keys, valid Unicode, no
recursion, bounded depth and alias expansion), its timestamps, and the
limits the stores and the signal extractor need; and the one-line form of a
problem's field path and message. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel

# Knowledge texts, words and tags, and paths (ctxgraph.core.limits; knowledge
# added by hand is checked against the same figures).
from ctxgraph.core.limits import MAX_KNOWLEDGE_CHARS, MAX_PATH_BYTES, MAX_WORD_CHARS
from ctxgraph.core.models import ContextMapDoc, HandoffDoc, TaskDoc, TasksDoc
from ctxgraph.errors import InvalidDocumentError

#: Values YAML aliases (merge keys included) may add to a document once expanded.
MAX_ALIAS_EXPANSION = 100_000
#: Nesting deeper than this is refused (no validator or encoder recurses further).
MAX_DOCUMENT_DEPTH = 200
#: A problem message (or field path) is cut to this many characters.
MAX_PROBLEM_CHARS = 300

_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_WORD = re.compile(rf"\S{{{MAX_WORD_CHARS + 1},}}")


def field_path(loc: Iterable[int | str]) -> str:
    """A field's location as a path: ``tasks[0].name``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def one_line(text: str) -> str:
    """Part of a one-line message: line breaks flattened, length bounded."""
    flat = " ".join(text.splitlines())
    return flat if len(flat) <= MAX_PROBLEM_CHARS else flat[: MAX_PROBLEM_CHARS - 3] + "..."


_CONTAINERS = (dict, list, tuple, set, frozenset)


def _children(value: Any) -> list[tuple[str | int, Any]]:
    if isinstance(value, dict):
        return list(value.items())
    return list(enumerate(value))


def check_tree(data: Any, source: str) -> None:
    """Refuse what no store can keep and no encoder can write: keys that are not
    text, lone surrogates (``"\ud800"`` escapes), a structure containing itself,
    nesting deeper than :data:`MAX_DOCUMENT_DEPTH`, and shared values (YAML
    aliases) expanding the document by more than :data:`MAX_ALIAS_EXPANSION`.
    Iterative: deep or huge input cannot exhaust the stack."""

    def refuse(path: tuple[str | int, ...], reason: str) -> InvalidDocumentError:
        shown = path if len(path) <= 8 else (*path[:3], "...", *path[-3:])
        return InvalidDocumentError(source, [(one_line(field_path(shown)), reason)])

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
                    raise refuse(path, f"the key {one_line(repr(k))[:60]} is not text (quote it)")
                check_text(path, k, "a key")
            child_path = (*path, k)
            if isinstance(child, _CONTAINERS):
                stack.append((child, child_path, False))
            else:
                distinct += 1
                if isinstance(child, str):
                    check_text(child_path, child, "text")


def timestamps_as_text(model: type[BaseModel], data: dict[str, Any], source: str) -> dict[str, Any]:
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
            source, [(field_path(path), f"expected an ISO-8601 timestamp, got {type(value).__name__}")]
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


def limits(doc: BaseModel) -> list[tuple[str, str]]:
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
