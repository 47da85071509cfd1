"""The ``seed`` ranking feature."""

from __future__ import annotations

from ctxgraph.compute.features.base import QueryEvidence, feature
from ctxgraph.compute.map_score import map_score


@feature("seed", weight=0.3, order=40)
def seed(ev: QueryEvidence) -> dict[str, float]:
    """the context map's own score of the file (compute.map_score: component
    +2, location +1, domain in notes +1, mentioned file +3)."""
    return {path: float(map_score(ev.files[path].entry, ev.signals)) for path in ev.paths}
