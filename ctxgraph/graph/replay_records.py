"""The finished history as ``ctxgraph tune`` replays it (``KnowledgeStore.replay_corpus``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxgraph.core.models import FileEntry
from ctxgraph.signals import TaskSignals


@dataclass(frozen=True)
class ReplayTask:
    """A finished task as the replay needs it: its full-text terms, the files
    its handoff created or modified (sorted), its signals (the seed's score)
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


def replay_task(props: dict[str, Any], files: Any, vector: Any) -> ReplayTask:
    """A finished task from its stored properties (``records.task_props``)."""
    return ReplayTask(
        id=props["id"],
        completed_at=props.get("completed_at") or "",
        terms=tuple(props.get("terms") or ()),
        files=tuple(sorted(set(files or ()))),
        signals=TaskSignals(
            keywords=tuple(props.get("signal_keywords") or ()),
            domains=tuple(props.get("signal_domains") or ()),
            files_mentioned=tuple(props.get("signal_files") or ()),
            task_types=tuple(props.get("signal_types") or ()),
        ),
        vector=tuple(float(x) for x in vector) if vector is not None and len(vector) else None,
    )
