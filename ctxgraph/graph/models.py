"""Pydantic models of the graph's nodes and of the documents ctxgraph reads.

Values passed between the store, the compute pipeline and the API are frozen.
Documents read from users (handoffs, task files, context maps) are validated
here; the handoff keeps unknown keys (``extra="allow"``) and its raw form.
"""

from __future__ import annotations

import posixpath
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ctxgraph.signals import TaskSignals

_VALUE = ConfigDict(frozen=True, extra="forbid")


def utcnow() -> str:
    """The current time as the ISO-8601 string every node stores."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def normalize_timestamp(value: str | datetime | None) -> str | None:
    """Render a timestamp as ISO-8601 in UTC (``...Z``); ``None`` stays ``None``."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError(f"not an ISO-8601 timestamp: {value!r}") from exc
    else:
        parsed = value
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Severity(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class TaskStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    BLOCKED = "blocked"
    COMPLETED = "completed"
    FAILED = "failed"


class Complexity(StrEnum):
    EASY = "easy"
    NORMAL = "normal"
    COMPLEX = "complex"


KnowledgeKind = Literal[
    "pattern", "gotcha", "decision", "open_question", "adr", "plan", "module_memory", "changelog"
]

#: Neo4j label of each knowledge kind (every knowledge node also has ``Knowledge``).
#: The last four are ADR 007's artifact types, added by hand (``ctxgraph knowledge add``).
KIND_LABELS: dict[str, str] = {
    "pattern": "Pattern",
    "gotcha": "Gotcha",
    "decision": "Decision",
    "open_question": "OpenQuestion",
    "adr": "ADR",
    "plan": "Plan",
    "module_memory": "ModuleMemory",
    "changelog": "ChangelogEntry",
}


# --------------------------------------------------------------------------- nodes


class Task(BaseModel):
    """A unit of agent work. ``depends_on`` lists the ids of its dependencies."""

    model_config = _VALUE

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


class KnowledgeItem(BaseModel):
    """A pattern, gotcha, decision or open question learned from a handoff."""

    model_config = _VALUE

    id: str
    kind: KnowledgeKind
    summary: str
    tags: tuple[str, ...] = ()
    location: str | None = None  # pattern
    severity: Severity | None = None  # gotcha
    rationale: str | None = None  # decision
    status: str | None = None  # decision: active | superseded
    context: str | None = None  # open question
    recommendation: str | None = None  # open question
    blocking: bool | None = None  # open question
    importance: float = 0.5
    scope: Literal["global", "task", "path"] = "global"
    chain_id: str | None = None
    version: int = 1
    token_estimate: int = 0
    created_at: str | None = None
    updated_at: str | None = None

    @property
    def label(self) -> str:
        return KIND_LABELS[self.kind]


class FileEntry(BaseModel):
    """A context-map entry: a file of the project with its component and notes."""

    model_config = _VALUE

    path: str = Field(min_length=1, max_length=4096)
    component: str = ""
    notes: str = ""
    lines: str | None = None

    @field_validator("path")
    @classmethod
    def _clean_path(cls, value: str) -> str:
        return clean_path(value)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.lines}" if self.lines else self.path


def clean_path(value: str) -> str:
    """Normalize a repository-relative path: forward slashes, no ``./``, no line suffix."""
    text = value.strip().replace("\\", "/")
    if not text:
        raise ValueError("must not be blank")
    if "\x00" in text:
        raise ValueError("must not contain NUL bytes")
    text = posixpath.normpath(text)
    return text[2:] if text.startswith("./") else text


def infer_component(path: str) -> str:
    """The component a file belongs to: its nearest meaningful folder, else its stem.

    ``src/auth/jwt.ts`` -> ``auth``; ``src/app.ts`` -> ``app``; ``README.md`` -> ``README``.
    """
    parts = [p for p in path.split("/") if p and p not in {".", ".."}]
    generic = {"src", "lib", "app", "pkg", "source", "sources", "packages", "internal"}
    folders = [p for p in parts[:-1] if p.lower() not in generic]
    if folders:
        return folders[-1]
    stem = parts[-1] if parts else path
    return stem.split(".")[0] or stem


# ------------------------------------------------------------------ read results


class KnowledgeHit(BaseModel):
    """A knowledge node found by a tag query, with the tags that matched."""

    model_config = _VALUE

    item: KnowledgeItem
    matched_tags: tuple[str, ...]


class TaskHit(BaseModel):
    """A prior task found by a tag query, with the tags that matched."""

    model_config = _VALUE

    task: Task
    matched_tags: tuple[str, ...]


class ReadNext(BaseModel):
    model_config = _VALUE

    file: str
    reason: str = ""


class DependencyHandoff(BaseModel):
    """One dependency of a task as the store sees it, with its latest handoff."""

    model_config = _VALUE

    task: Task
    summary: str | None = None
    files_to_read: tuple[ReadNext, ...] = ()
    files_created: tuple[ReadNext, ...] = ()
    knowledge: tuple[KnowledgeItem, ...] = ()


class RecentTask(BaseModel):
    model_config = _VALUE

    id: str
    intent: str
    success: bool | None
    completed_at: str | None


class Blocker(BaseModel):
    model_config = _VALUE

    id: str
    reason: str
    since: str | None


class Stats(BaseModel):
    model_config = _VALUE

    labels: dict[str, int]
    relationships: dict[str, int]


class GatherQuery(BaseModel):
    """What one context asks of the store (one round trip on Neo4j)."""

    model_config = _VALUE

    keywords: tuple[str, ...]
    domains: tuple[str, ...]
    files: tuple[str, ...]
    dep_ids: tuple[str, ...]
    exclude: tuple[str, ...]
    keyword_limit: int
    domain_limit: int
    related_limit: int
    recent_limit: int
    working_memory: bool
    #: the seed's context-map candidates (not needed when the history ranks files)
    context_map: bool = True
    #: tags on more items than this are left out of the knowledge and related-task
    #: candidates (their rarity weight is next to nothing; reading their items is
    #: what grew with the graph); 0: no cap
    max_tag_df: int = 0


class TaskEvidence(BaseModel):
    """A finished task sharing full-text terms with the query: the matched terms
    with their document frequency, its length in terms and the files it touched."""

    model_config = _VALUE

    id: str
    term_count: int
    completed_at: str
    matched: tuple[tuple[str, int], ...]
    files: tuple[str, ...]


class NeighbourEvidence(BaseModel):
    """A finished task whose text's embedding is among the nearest to the query's:
    its cosine similarity, the query terms it mentions and the files it touched."""

    model_config = _VALUE

    id: str
    score: float
    completed_at: str
    matched: tuple[str, ...]
    files: tuple[str, ...]


class FileEvidence(BaseModel):
    """A context-map file with its history: how many finished tasks touched it,
    their total length in terms, and which query terms its own text has."""

    model_config = _VALUE

    entry: FileEntry
    touches: int
    task_len: int
    own_len: int
    own_terms: tuple[str, ...]
    in_map: bool = True
    #: The matched query terms of the finished tasks touching it, each with how
    #: many of them mention it (see ``graph.evidence``); with
    #: ``HistoryEvidence.file_df`` set, the ranking reads the file's text from
    #: here instead of from ``HistoryEvidence.tasks``.
    term_tf: tuple[tuple[str, int], ...] = ()


class HistoryEvidence(BaseModel):
    """What the history says about a query's files (ranked by compute/, not here)."""

    model_config = _VALUE

    n_tasks: int
    total_task_len: int
    tasks: tuple[TaskEvidence, ...]
    files: tuple[FileEvidence, ...]
    #: The rankable files (the context map's when one is loaded, else every
    #: file) — how many, and their documents' total length in terms (their
    #: own terms plus the terms of the finished tasks that touched them).
    #: ``files`` may then be only those with evidence; None: ``files`` is all.
    n_files: int | None = None
    total_file_len: int | None = None
    #: Whether a context map is loaded (None: whether any of ``files`` is in it).
    mapped: bool | None = None
    #: How many rankable files' documents have each query term. Set when the
    #: store bounded the evidence (``graph.evidence.bound``): ``tasks`` are then
    #: only the best matched tasks and each file carries its ``term_tf``.
    #: None: ``tasks`` are every matched task and the text is derived from them.
    file_df: tuple[tuple[str, int], ...] | None = None
    #: The finished tasks nearest to the query by their texts' embeddings
    #: (``graph.evidence.NEIGHBOURS`` at most, best first); empty when the query
    #: was not embedded or no finished task has a vector yet.
    neighbours: tuple[NeighbourEvidence, ...] = ()


class MemoryChunk(BaseModel):
    """A chunk of a project file as the associative memory stores it."""

    model_config = _VALUE

    path: str
    start_line: int
    end_line: int
    text: str
    text_hash: str
    token_estimate: int
    #: sha256 of the whole file when it was indexed (what incremental runs compare).
    file_sha256: str
    #: all-MiniLM-L6-v2 vector (384 floats), None in the lightweight (no-ML) index.
    embedding: tuple[float, ...] | None = None
    #: The chunk's full-text terms, space-separated (path and text).
    search_text: str = ""


class MemoryProject(BaseModel):
    """One indexed project: where its files are and when it was indexed."""

    model_config = _VALUE

    id: str
    root: str
    indexed_at: str
    embeddings: bool
    model: str = ""
    files: int = 0
    chunks: int = 0


class MemoryState(BaseModel):
    """What the store holds for a project: the project and each file's indexed hash."""

    model_config = _VALUE

    project: MemoryProject | None
    file_hashes: dict[str, str]


class MemoryHit(BaseModel):
    """A chunk found by vector or full-text search, with its raw score and rank (1-based)."""

    model_config = _VALUE

    chunk: MemoryChunk
    score: float
    rank: int


class MemoryRecall(BaseModel):
    """What the associative memory found for a task (after the file gates)."""

    model_config = _VALUE

    project: str
    by_vector: tuple[MemoryHit, ...] = ()
    by_text: tuple[MemoryHit, ...] = ()


class Candidates(BaseModel):
    """Everything the store returned for one task, before ranking."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    keyword_hits: tuple[KnowledgeHit, ...] = ()
    domain_hits: tuple[KnowledgeHit, ...] = ()
    dependencies: tuple[DependencyHandoff, ...] = ()
    context_map: tuple[FileEntry, ...] = ()
    context_map_total: int = 0
    related: tuple[TaskHit, ...] = ()
    recent_tasks: tuple[RecentTask, ...] = ()
    active_blockers: tuple[Blocker, ...] = ()
    history: HistoryEvidence | None = None
    query_terms: tuple[str, ...] = ()
    #: every indexed project (the associative memory picks one)
    memory_projects: tuple[MemoryProject, ...] = ()
    #: (tag, degree) of every query tag found in the graph, and the number of
    #: taggable items (tasks and knowledge): the evidence of ``ctxgraph.core.rarity``
    tag_df: tuple[tuple[str, int], ...] = ()
    tagged_total: int = 0
    memory: MemoryRecall | None = None
    #: why the associative memory was skipped or partial (debug section only)
    memory_notes: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()



# ---------------------------------------------------------------- user documents


def _as_list(value: Any) -> Any:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return value


class _Doc(BaseModel):
    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)


class FileChange(_Doc):
    path: str = Field(min_length=1)
    purpose: str | None = None
    description: str | None = None
    lines: str | None = None

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
    reason: str = ""

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
    applies_to: list[str] = Field(default_factory=list)

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
    rationale: str | None = None


class OpenQuestionDoc(_Tagged):
    question: str = Field(min_length=1)
    context: str | None = None
    recommendation: str | None = None
    blocking: bool = False


class HandoffDoc(_Doc):
    """The structured handoff an agent writes when it finishes a task."""

    task_id: str = Field(min_length=1)
    summary: str = Field(min_length=1)
    success: bool = True
    completed_at: str | None = None
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

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    id: str = Field(min_length=1, max_length=200)
    name: str = ""
    objective: str = ""
    acceptance_criteria: list[str] = Field(default_factory=list)
    type: str = "feature"
    complexity: Complexity = Complexity.NORMAL
    depends_on: list[str] = Field(default_factory=list)
    status: TaskStatus = TaskStatus.PENDING
    blocked_reason: str | None = None
    blocked_at: str | None = None
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
    model_config = ConfigDict(extra="forbid")

    tasks: list[TaskDoc]


class ContextMapEntryDoc(_Doc):
    """A context-map entry as written by users: ``path`` or the seed's ``location``."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    path: str = Field(min_length=1)
    component: str | None = None
    notes: str = ""

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
    model_config = ConfigDict(extra="forbid")

    files: list[ContextMapEntryDoc]


def split_location(location: str) -> tuple[str, str | None]:
    """``src/a.ts:10-24`` -> (``src/a.ts``, ``10-24``); a plain path has no lines."""
    head, sep, tail = location.rpartition(":")
    if sep and head and tail and all(c.isdigit() or c in "-," for c in tail):
        return head, tail
    return location, None
