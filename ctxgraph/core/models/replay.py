"""The finished history as ``ctxgraph tune`` replays it (``KnowledgeStore.replay_corpus``
reads it; ``graph.records.replay_task`` parses a stored task into it)."""

from __future__ import annotations

from dataclasses import dataclass

from ctxgraph.core.models.files import FileEntry
from ctxgraph.signals import TaskSignals


@dataclass(frozen=True)
class ReplayTask:
    """A finished task as the replay needs it: its full-text terms, the files
    its handoff created or modified (sorted), its signals (for the context map's score)
    and its text's vector (None when it has none)."""

    id: str
    completed_at: str
    terms: tuple[str, ...]
    files: tuple[str, ...]
    signals: TaskSignals
    vector: tuple[float, ...] | None = None


@dataclass(frozen=True)
class ReplayFile:
    """A file of the graph: its context-map entry, its own full-text terms and
    whether it came from the context map (else only from a handoff)."""

    entry: FileEntry
    terms: tuple[str, ...]
    in_map: bool = True
