"""Argument types and result models of the MCP tools: the input and output
JSON schemas clients see come from these type hints."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxgraph import Task, TaskDoc
from ctxgraph.compute.conflicts import Conflict
from ctxgraph.compute.output import ComputedContext, ExplainEntry
from ctxgraph.mcp.limits import (
    MAX_CRITERIA,
    MAX_CRITERION_CHARS,
    MAX_CURSOR_CHARS,
    MAX_ID_CHARS,
    MAX_ITEMS,
    MAX_NAME_CHARS,
    MAX_PROJECT_CHARS,
    MAX_TEXT_CHARS,
)
from ctxgraph.mcp.responses import DEFAULT_PAGE, MAX_PAGE
from ctxgraph.service import IngestResult, KnowledgeMatch
from ctxgraph.service.freshness import SyncReport

_OUT = ConfigDict(defer_build=True, frozen=True, extra="forbid")

# ----------------------------------------------------------------- arguments
# Every string has a length limit and every list a size limit (ctxgraph.mcp.limits):
# checked, with strict types and no unknown arguments, before a call does any work
# (ctxgraph.mcp.arguments).

ProjectArg = Annotated[str | None, Field(
    min_length=1, max_length=MAX_PROJECT_CHARS,
    description="The project (store) to use; may be left out when the server serves one project "
                "or was given a default one. list_projects names them.")]
Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
TaskIdArg = Annotated[str | None, Field(min_length=1, max_length=MAX_ID_CHARS,
                                        description="The id of a stored task (give this or `task`).")]
RequiredTaskId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, description="The id of a stored task.")]
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
Criterion = Annotated[str, Field(max_length=MAX_CRITERION_CHARS)]
ComplexityName = Literal["easy", "normal", "complex"]
StatusArg = Literal["pending", "in_progress", "blocked", "completed", "failed"]
#: The statuses a listing filters by: a task's, and ``retired`` (an imported commit no longer on the branch).
ListStatusArg = Literal["pending", "in_progress", "blocked", "completed", "failed", "retired"]


class InlineTask(BaseModel):
    """An unsaved task, as one task of a tasks file (with the MCP server's length limits)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", strict=True)
    id: Id
    name: Name = ""
    objective: Text = ""
    acceptance_criteria: Annotated[list[Criterion], Field(max_length=MAX_CRITERIA)] = []
    type: Name = "feature"
    complexity: ComplexityName = "normal"
    depends_on: Annotated[list[Id], Field(max_length=MAX_ITEMS)] = []
    status: StatusArg = "pending"
    blocked_reason: Text | None = None
    blocked_at: Name | None = None
    requires_context: bool = True

    def to_task(self) -> Task:
        """The task, normalized as a tasks file's task is."""
        return TaskDoc.model_validate(self.model_dump()).to_task()


InlineTaskArg = Annotated[InlineTask | None, Field(
    description="An unsaved task, as one task of a tasks file (give this or `task_id`). Its context is "
                "computed without storing it; if the store cannot be reached it is computed from nothing "
                "stored, with a warning.")]
BudgetArg = Annotated[int | None, Field(ge=1, le=1_000_000, description=(
    "Token budget the Markdown must fit [default: the tier's: easy 4000, normal 8000, complex 16000, or the "
    "settings file's]. Lowered when the response would exceed the server's size cap (budget_lowered_from "
    "says so)."))]
ComplexityArg = Annotated[ComplexityName | None, Field(
    description="Override the task's complexity tier (item caps per section).")]
StrategyArg = Annotated[Literal["recent", "important", "balanced"] | None, Field(
    description="How ties in relevance are ordered [default: balanced, or the settings file's].")]
CursorArg = Annotated[str | None, Field(
    max_length=MAX_CURSOR_CHARS,
    description="The next_cursor of the previous page of the same call; leave out for the first page.")]
LimitArg = Annotated[int, Field(ge=1, le=MAX_PAGE, description=(
    f"Items per page at most [default {DEFAULT_PAGE}]; a page is also cut short to fit the size cap."))]
KindArg = Literal["pattern", "gotcha", "decision", "open_question", "adr", "plan", "module_memory", "changelog"]
FateArg = Literal["kept", "compressed", "dropped"]


# ------------------------------------------------------------------- results


class ContextResult(BaseModel):
    """A computed context: ``context`` is what ``ctxgraph context --format json`` prints."""

    model_config = _OUT
    project: str
    context: ComputedContext
    warning: str | None = Field(None, description="The CLI's warning line when the store did not (fully) answer.")
    budget_lowered_from: int | None = Field(
        None, description="The budget first used, when it was lowered to fit the response cap.")


class ExplainResult(BaseModel):
    """Candidates of a context with their score parts and fate (kept, compressed or dropped, and why)."""

    model_config = _OUT
    project: str
    task_id: str
    tokens: int
    budget: int
    strategy: str
    total: int = Field(description="Entries matching the filters, over all pages.")
    entries: list[ExplainEntry]
    next_cursor: str | None
    warning: str | None = None


def _clipped() -> Any:
    return Field(default=(), description=(
        "The fields shortened to fit the response cap: a text keeps its start and end around "
        "'…(N characters left out)…', a list its first items (`ctxgraph knowledge show` and `task show` print "
        "one whole)."))


class ListedMatch(KnowledgeMatch):
    """A search hit as a page lists it."""

    clipped: tuple[str, ...] = _clipped()


class ListedConflict(Conflict):
    """A likely conflict as a page lists it."""

    model_config = _OUT
    clipped: tuple[str, ...] = _clipped()


class SearchResult(BaseModel):
    """Knowledge matching a text's signals, best first."""

    model_config = _OUT
    project: str
    keywords: tuple[str, ...]
    domains: tuple[str, ...]
    total: int
    items: list[ListedMatch]
    next_cursor: str | None
    clipped: tuple[str, ...] = _clipped()


class TaskResult(BaseModel):
    """One task as ``ctxgraph task show --format json`` prints it."""

    model_config = _OUT
    project: str
    task: Task


class ListedTask(Task):
    """A task as a page lists it."""

    model_config = _OUT
    clipped: tuple[str, ...] = _clipped()


class TaskListResult(BaseModel):
    model_config = _OUT
    project: str
    total: int
    tasks: list[ListedTask]
    next_cursor: str | None


class ConflictsResult(BaseModel):
    """Likely conflicts among the decisions in force (``ctxgraph conflicts --format json``'s entries)."""

    model_config = _OUT
    project: str
    total: int
    conflicts: list[ListedConflict]
    next_cursor: str | None


class IngestOutcome(BaseModel):
    """What ingesting a handoff did (``ctxgraph ingest handoff --format json``'s entry)."""

    model_config = _OUT
    project: str
    result: IngestResult
    embedded: int | None = Field(None, description="Finished tasks embedded afterwards (None: not run).")
    warning: str | None = None


class MemoryStatus(BaseModel):
    """The background index of the project's root (``ctxgraph mcp``): ``state``
    is off, starting, scanning, indexing, watching, retrying or stopped."""

    model_config = _OUT
    state: str
    reason: str | None = None
    root: str | None = None
    project: str | None = None
    embeddings: bool | None = None
    watch: str | None = None
    files_indexed: int | None = None
    files: int | None = None
    percent: float | None = None
    runs: int | None = None
    last_run: dict[str, Any] | None = None
    error: str | None = None


class SyncResult(BaseModel):
    """What a sync found (``ctxgraph sync --format json``)."""

    model_config = _OUT
    project: str
    report: SyncReport


class StatsResult(BaseModel):
    """Nodes per label and relationships per type (``ctxgraph stats --format json``),
    and the background index's progress (``memory``)."""

    model_config = _OUT
    project: str
    labels: dict[str, int]
    relationships: dict[str, int]
    memory: MemoryStatus | None = None


class ProjectInfo(BaseModel):
    model_config = _OUT
    name: str
    store: Literal["embedded", "neo4j"]
    default: bool


class ProjectsResult(BaseModel):
    model_config = _OUT
    projects: list[ProjectInfo]
    read_only: bool
    max_response_tokens: int
