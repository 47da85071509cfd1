"""The seed's context-map scoring (phase 4). Pure."""

from __future__ import annotations

from ctxgraph.core.models import FileEntry
from ctxgraph.signals import TaskSignals


def score_file(entry: FileEntry, signals: TaskSignals) -> int:
    """Phase 4, the seed's rule: component +2, location +1, domain in notes +1,
    mentioned file +3 (each keyword, domain and file counted separately)."""
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


__all__ = ["score_file"]
