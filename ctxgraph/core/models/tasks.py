"""Tasks: the unit of agent work, its status and complexity."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, field_validator

from ctxgraph.core.models.base import VALUE, normalize_timestamp
from ctxgraph.signals import TaskSignals


class TaskStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    BLOCKED = "blocked"
    COMPLETED = "completed"
    FAILED = "failed"
    #: A task imported from a commit no longer on the imported branch (amended,
    #: rebased, reset away): kept, never shown, back when the commit is (docs/history.md).
    RETIRED = "retired"


class Complexity(StrEnum):
    EASY = "easy"
    NORMAL = "normal"
    COMPLEX = "complex"


class Task(BaseModel):
    """A unit of agent work. ``depends_on`` lists the ids of its dependencies."""

    model_config = VALUE

    id: str = Field(min_length=1, max_length=200)
    name: str = ""
    objective: str = ""
    acceptance_criteria: tuple[str, ...] = ()
    type: str = "feature"
    complexity: Complexity = Complexity.NORMAL
    status: TaskStatus = TaskStatus.PENDING
    blocked_reason: str | None = None
    blocked_at: str | None = None
    requires_context: bool = True
    outcome_summary: str | None = None
    success: bool | None = None
    completed_at: str | None = None
    depends_on: tuple[str, ...] = ()
    signals: TaskSignals | None = None
    created_at: str | None = None
    updated_at: str | None = None

    @field_validator("id")
    @classmethod
    def _strip_id(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must not be blank")
        return value

    @field_validator("blocked_at", "completed_at", "created_at", "updated_at", mode="before")
    @classmethod
    def _timestamp(cls, value: Any) -> str | None:
        return normalize_timestamp(value)

    @property
    def text(self) -> str:
        """The text signals are extracted from: name, objective and criteria."""
        parts = [self.name, self.objective, *self.acceptance_criteria]
        return "\n".join(p for p in parts if p)

    @property
    def intent(self) -> str:
        """One line saying what the task is for (its name, else its objective)."""
        if self.name.strip():
            return self.name.strip()
        lines = self.objective.strip().splitlines()
        return lines[0].strip() if lines else self.id


def task_tags(task: Task) -> list[str]:
    """The tags a task is linked to: its signal keywords and domains."""
    if task.signals is None:
        return []
    return list(dict.fromkeys([*task.signals.keywords, *task.signals.domains]))
