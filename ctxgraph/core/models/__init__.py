"""Pydantic models of the graph's nodes and of the documents ctxgraph reads,
one module per concern: :mod:`~.tasks`, :mod:`~.knowledge`, :mod:`~.files`,
:mod:`~.evidence` (the history behind file ranking), :mod:`~.memory` (the
associative memory), :mod:`~.candidates` (what the store's reads return),
:mod:`~.documents` (handoffs, task files and context maps as users write them)
and :mod:`~.base` (the value config and timestamps).

Values passed between the store, the compute pipeline and the API are frozen.
Documents read from users are validated here; the handoff keeps unknown keys
(``extra="allow"``) and its raw form. Import them from this package.
"""

from ctxgraph.core.models.anchors import Anchor, AnchorStatus
from ctxgraph.core.models.base import normalize_timestamp, utcnow
from ctxgraph.core.models.candidates import (
    Blocker,
    Candidates,
    ConcurrentTask,
    DependencyHandoff,
    GatherQuery,
    KnowledgeHit,
    ReadNext,
    RecentTask,
    Stats,
    TaskHit,
)
from ctxgraph.core.models.documents import (
    ContextMapDoc,
    ContextMapEntryDoc,
    DecisionDoc,
    FileChange,
    FileToRead,
    GotchaDoc,
    HandoffDoc,
    OpenQuestionDoc,
    PatternDoc,
    TaskDoc,
    TasksDoc,
)
from ctxgraph.core.models.evidence import FileEvidence, HistoryEvidence, NeighbourEvidence, TaskEvidence
from ctxgraph.core.models.files import FileEntry, clean_path, infer_component, split_location
from ctxgraph.core.models.knowledge import KIND_LABELS, KnowledgeItem, KnowledgeKind, Severity
from ctxgraph.core.models.memory import FileStat, MemoryChunk, MemoryHit, MemoryProject, MemoryRecall, MemoryState
from ctxgraph.core.models.replay import ReplayFile, ReplayTask
from ctxgraph.core.models.sources import ImportBatch, ImportedFile
from ctxgraph.core.models.tasks import Complexity, Task, TaskStatus, task_tags

__all__ = [
    "KIND_LABELS",
    "Anchor",
    "AnchorStatus",
    "Blocker",
    "Candidates",
    "Complexity",
    "ConcurrentTask",
    "ContextMapDoc",
    "ContextMapEntryDoc",
    "DecisionDoc",
    "DependencyHandoff",
    "FileChange",
    "FileEntry",
    "FileEvidence",
    "FileStat",
    "FileToRead",
    "GatherQuery",
    "GotchaDoc",
    "HandoffDoc",
    "HistoryEvidence",
    "ImportBatch",
    "ImportedFile",
    "KnowledgeHit",
    "KnowledgeItem",
    "KnowledgeKind",
    "MemoryChunk",
    "MemoryHit",
    "MemoryProject",
    "MemoryRecall",
    "MemoryState",
    "NeighbourEvidence",
    "OpenQuestionDoc",
    "PatternDoc",
    "ReadNext",
    "RecentTask",
    "ReplayFile",
    "ReplayTask",
    "Severity",
    "Stats",
    "Task",
    "TaskDoc",
    "TaskEvidence",
    "TaskHit",
    "TaskStatus",
    "TasksDoc",
    "clean_path",
    "infer_component",
    "normalize_timestamp",
    "split_location",
    "task_tags",
    "utcnow",
]
