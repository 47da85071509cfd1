"""The context map's own score of a file for a task (phase 4): the words of
the task's signals found in the entry's component, location and notes. Pure.

It is what ranks the files when the history has none to rank (an empty
graph), one part of the history's ranking (``compute.ranking``; the weight
named ``seed`` in the settings), and the ``seed`` row of ``ctxgraph eval``."""

from __future__ import annotations

from ctxgraph.core.models import FileEntry
from ctxgraph.signals import TaskSignals


def map_score(entry: FileEntry, signals: TaskSignals) -> int:
    """Component +2, location +1, domain in notes +1, mentioned file +3 (each
    keyword, domain and file counted separately)."""
    score = 0
    component, location, notes = entry.component.lower(), entry.location.lower(), entry.notes.lower()
    for keyword in signals.keywords:
        if keyword in component:
            score += 2
        if keyword in location:
            score += 1
    for domain in signals.domains:
        if domain in notes:
            score += 1
    for mentioned in signals.files_mentioned:
        if mentioned in entry.location:
            score += 3
    return score


__all__ = ["map_score"]
