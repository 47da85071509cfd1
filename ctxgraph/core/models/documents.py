"""The schema of the documents ctxgraph reads from users: handoffs, task files
and context maps. Validated here (parsed by ``core.documents``); the handoff
keeps unknown keys (``extra="allow"``) and its raw form."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ctxgraph.core.limits import (
    MAX_CRITERIA,
    MAX_CRITERION_CHARS,
    MAX_ID_CHARS,
    MAX_ITEMS,
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
)
from ctxgraph.core.models.base import normalize_timestamp
from ctxgraph.core.models.files import FileEntry, clean_path, infer_component, split_location
from ctxgraph.core.models.knowledge import Severity
from ctxgraph.core.models.tasks import Complexity, Task, TaskStatus

# Every text has a length limit, checked when the document is read: these (ctxgraph.core.limits), and
# paths, tags and knowledge texts by core.documents (index keys, spaCy).
Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]


def _as_list(value: Any) -> Any:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return value


class _Doc(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="allow", str_strip_whitespace=True)


class FileChange(_Doc):
    path: str = Field(min_length=1)
    purpose: Text | None = None
    description: Text | None = None
    lines: Name | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"path": value} if isinstance(value, str) else value

    @field_validator("path")
    @classmethod
    def _clean(cls, value: str) -> str:
        return clean_path(value)

    @field_validator("lines", mode="before")
    @classmethod
    def _lines(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value


class FileToRead(_Doc):
    file: str = Field(min_length=1)
    reason: Text = ""

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"file": value}
        if isinstance(value, dict) and "file" not in value and "path" in value:
            value = {**value, "file": value["path"]}
            value.pop("path")
        return value

    @field_validator("file")
    @classmethod
    def _clean(cls, value: str) -> str:
        return clean_path(value)


class _Tagged(_Doc):
    applies_to: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)

    @field_validator("applies_to", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        return _as_list(value)


class PatternDoc(_Tagged):
    pattern: str = Field(min_length=1)
    location: str | None = None


class GotchaDoc(_Tagged):
    issue: str = Field(min_length=1)
    severity: Severity = Severity.MEDIUM

    @field_validator("severity", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class DecisionDoc(_Tagged):
    decision: str = Field(min_length=1)
    rationale: Text | None = None
    #: earlier decisions this one replaces: each by its id (``decision:…``) or its
    #: exact text (case and spacing aside); one string or a list (docs/decisions.md)
    supersedes: list[Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]] = Field(
        default_factory=list, max_length=MAX_ITEMS)

    @field_validator("supersedes", mode="before")
    @classmethod
    def _supersedes(cls, value: Any) -> Any:
        return _as_list(value)


class OpenQuestionDoc(_Tagged):
    question: str = Field(min_length=1)
    context: Text | None = None
    recommendation: Text | None = None
    blocking: bool = False


class HandoffDoc(_Doc):
    """The structured handoff an agent writes when it finishes a task."""

    task_id: Id
    summary: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    success: bool = True
    completed_at: Name | None = None
    #: the commit holding the task's work (optional): where a sync looks for
    #: renames of the files the handoff names from (docs/freshness.md)
    commit: Annotated[str, Field(pattern=r"^[0-9a-fA-F]{4,64}$")] | None = None
    files_created: list[FileChange] = Field(default_factory=list)
    files_modified: list[FileChange] = Field(default_factory=list)
    dependencies_for_next: list[FileToRead] = Field(default_factory=list)
    patterns_discovered: list[PatternDoc] = Field(default_factory=list)
    gotchas: list[GotchaDoc] = Field(default_factory=list)
    decisions: list[DecisionDoc] = Field(default_factory=list)
    open_questions: list[OpenQuestionDoc] = Field(default_factory=list)

    @field_validator(
        "files_created",
        "files_modified",
        "dependencies_for_next",
        "patterns_discovered",
        "gotchas",
        "decisions",
        "open_questions",
        mode="before",
    )
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("task_id", mode="before")
    @classmethod
    def _task_id(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("completed_at", mode="before")
    @classmethod
    def _timestamp(cls, value: Any) -> str | None:
        return normalize_timestamp(value)


class TaskDoc(_Doc):
    """A task as written in a tasks file (``ctxgraph ingest tasks``)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", str_strip_whitespace=True)

    id: Id
    name: Name = ""
    objective: Text = ""
    acceptance_criteria: list[Annotated[str, Field(max_length=MAX_CRITERION_CHARS)]] = Field(
        default_factory=list, max_length=MAX_CRITERIA)
    type: Name = "feature"
    complexity: Complexity = Complexity.NORMAL
    depends_on: list[Id] = Field(default_factory=list, max_length=MAX_ITEMS)
    status: TaskStatus = TaskStatus.PENDING
    blocked_reason: Text | None = None
    blocked_at: Name | None = None
    requires_context: bool = True

    @field_validator("acceptance_criteria", "depends_on", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _as_list(value)

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("blocked_at", mode="before")
    @classmethod
    def _timestamp(cls, value: Any) -> str | None:
        return normalize_timestamp(value)

    def to_task(self) -> Task:
        return Task(
            id=self.id,
            name=self.name,
            objective=self.objective,
            acceptance_criteria=tuple(self.acceptance_criteria),
            type=self.type,
            complexity=self.complexity,
            status=self.status,
            blocked_reason=self.blocked_reason,
            blocked_at=self.blocked_at,
            requires_context=self.requires_context,
            depends_on=tuple(self.depends_on),
        )


class TasksDoc(_Doc):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    tasks: list[TaskDoc]


class ContextMapEntryDoc(_Doc):
    """A context-map entry as written by users: ``path`` or ``location`` (the original context-map field)."""

    model_config = ConfigDict(defer_build=True, extra="ignore", str_strip_whitespace=True)

    path: str = Field(min_length=1)
    component: Name | None = None
    notes: Text = ""

    @model_validator(mode="before")
    @classmethod
    def _location(cls, value: Any) -> Any:
        if isinstance(value, dict) and "path" not in value and "location" in value:
            value = {**value, "path": value["location"]}
        if isinstance(value, dict) and value.get("notes") is None:
            value = {**value, "notes": ""}
        return value

    def to_entry(self) -> FileEntry:
        path, lines = split_location(self.path)
        return FileEntry(
            path=path, component=self.component or infer_component(clean_path(path)),
            notes=self.notes, lines=lines,
        )


class ContextMapDoc(_Doc):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    files: list[ContextMapEntryDoc]
