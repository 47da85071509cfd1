"""Reading an evaluation set: a folder with ``history.jsonl``,
``context_map.jsonl`` and ``queries.jsonl`` (``meta.json`` optional).

Every problem is an :class:`~ctxgraph.errors.InvalidDocumentError` (exit code
2) naming the file and, for a bad line, its number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ctxgraph.core.documents import decode, validate
from ctxgraph.core.models import Complexity, FileEntry, Task, clean_path, normalize_timestamp
from ctxgraph.core.models import ContextMapEntryDoc as _MapEntry
from ctxgraph.errors import InvalidDocumentError

HISTORY = "history.jsonl"
CONTEXT_MAP = "context_map.jsonl"
QUERIES = "queries.jsonl"
META = "meta.json"
REQUIRED = (HISTORY, CONTEXT_MAP, QUERIES)

M = TypeVar("M", bound=BaseModel)


class _Line(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore", str_strip_whitespace=True)


class _TouchedFile(_Line):
    path: str = Field(min_length=1)

    @field_validator("path")
    @classmethod
    def _clean(cls, value: str) -> str:
        return clean_path(value)


class _HandoffLine(_Line):
    summary: str = ""
    files_modified: list[_TouchedFile] = Field(default_factory=list)


class HistoryLine(_Line):
    """A completed task of the project's history with its handoff."""

    id: str = Field(min_length=1)
    name: str = ""
    objective: str = ""
    type: str = "change"
    completed_at: str | None = None
    handoff: _HandoffLine = Field(default_factory=_HandoffLine)

    @field_validator("completed_at", mode="before")
    @classmethod
    def _timestamp(cls, value: Any) -> str | None:
        return normalize_timestamp(value)

    def task(self) -> Task:
        """The task as ctxgraph stores it (its outcome comes with the handoff)."""
        return Task(id=self.id, name=self.name, objective=self.objective, type=self.type)

    @property
    def files(self) -> list[str]:
        """Files the handoff touched, each once, in order."""
        return list(dict.fromkeys(f.path for f in self.handoff.files_modified))

    @property
    def message(self) -> str:
        """Name and objective, as a commit message is read."""
        return "\n".join(p for p in (self.name, self.objective) if p)

    def handoff_doc(self) -> dict[str, Any]:
        """A mapping :class:`~ctxgraph.core.models.HandoffDoc` accepts."""
        doc: dict[str, Any] = {
            "task_id": self.id,
            "summary": self.handoff.summary or self.name or self.id,
            "success": True,
            "files_modified": [{"path": p} for p in self.files],
        }
        if self.completed_at:
            doc["completed_at"] = self.completed_at
        return doc


class QueryLine(_Line):
    """A later task of the project, with the files its real commit changed."""

    id: str = Field(min_length=1)
    name: str = ""
    objective: str = ""
    type: str = "change"
    complexity: Complexity = Complexity.NORMAL
    gold_files: list[str] = Field(min_length=1)

    @field_validator("gold_files")
    @classmethod
    def _clean(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(clean_path(v) for v in value))

    def task(self) -> Task:
        """The query as an unsaved task (never written to the store)."""
        return Task(id=self.id, name=self.name, objective=self.objective, type=self.type,
                    complexity=self.complexity)

    @property
    def text(self) -> str:
        return "\n".join(p for p in (self.name, self.objective) if p)


@dataclass(frozen=True)
class EvalSet:
    name: str
    history: tuple[HistoryLine, ...]
    files: tuple[FileEntry, ...]
    queries: tuple[QueryLine, ...]
    meta: dict[str, Any]

    @property
    def map_paths(self) -> list[str]:
        return [f.path for f in self.files]

    @property
    def snapshot(self) -> datetime | None:
        """When the history ends (its latest completion): the "now" of every query."""
        stamps = [line.completed_at for line in self.history if line.completed_at]
        return datetime.fromisoformat(max(stamps).replace("Z", "+00:00")) if stamps else None

    @property
    def known_paths(self) -> list[str]:
        """Every path a context can name: context-map files, then every file a
        history handoff touched."""
        paths = dict.fromkeys(self.map_paths)
        for line in self.history:
            paths.update(dict.fromkeys(line.files))
        return list(paths)


def _rows(path: Path) -> Iterator[tuple[int, Any]]:
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidDocumentError(source, [("", f"cannot read: {exc.strerror}")]) from None
    for number, line in enumerate(decode(data, source).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidDocumentError(source, [(f"line {number}", f"not valid JSON: {exc.msg}")]) from None


def _lines(path: Path, model: type[M]) -> list[tuple[int, M]]:
    out: list[tuple[int, M]] = []
    for number, row in _rows(path):
        try:
            out.append((number, validate(model, row, str(path))))
        except InvalidDocumentError as exc:
            raise InvalidDocumentError(
                str(path), [(f"line {number}" + (f": {p}" if p else ""), reason) for p, reason in exc.problems]
            ) from None
    return out


def missing_files(folder: Path) -> list[str]:
    """The required files ``folder`` lacks."""
    return [name for name in REQUIRED if not (folder / name).is_file()]


def load_set(folder: Path, *, limit_queries: int | None = None) -> EvalSet:
    """Read and check a whole set (the first ``limit_queries`` queries only, if given)."""
    missing = missing_files(folder)
    if missing:
        raise InvalidDocumentError(str(folder), [("", f"not an evaluation set: missing {', '.join(missing)}")])
    history: list[HistoryLine] = []
    seen: dict[str, int] = {}
    for number, line in _lines(folder / HISTORY, HistoryLine):
        if line.id in seen:
            raise InvalidDocumentError(
                str(folder / HISTORY), [(f"line {number}", f"id {line.id!r} already on line {seen[line.id]}")]
            )
        seen[line.id] = number
        history.append(line)
    entries = [e.to_entry() for _, e in _lines(folder / CONTEXT_MAP, _MapEntry)]
    queries = [q for _, q in _lines(folder / QUERIES, QueryLine)]
    if limit_queries is not None:
        queries = queries[:limit_queries]
    meta: dict[str, Any] = {}
    meta_path = folder / META
    if meta_path.is_file():
        try:
            loaded = json.loads(decode(meta_path.read_bytes(), str(meta_path)))
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidDocumentError(str(meta_path), [("", f"not valid JSON: {exc}")]) from None
        meta = loaded if isinstance(loaded, dict) else {}
    return EvalSet(
        name=folder.resolve().name,
        history=tuple(history),
        files=tuple(entries),
        queries=tuple(queries),
        meta=meta,
    )


__all__ = ["CONTEXT_MAP", "HISTORY", "QUERIES", "EvalSet", "HistoryLine", "QueryLine", "load_set", "missing_files"]
