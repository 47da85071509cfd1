"""The ``votes`` ranking feature."""

from __future__ import annotations

from ctxgraph.compute.features.base import QueryEvidence, feature


@feature("votes", weight=1.0, order=10, unit=True)
def votes(ev: QueryEvidence) -> dict[str, float]:
    """sum over the NEIGHBOURS finished tasks most similar to the query by
    BM25 that touched the file of (the task's score / the best task's score)
    / sqrt(files the task touched); a module gone from the map passes its
    vote on to its package's files (ranking.route)."""
    return {path: round(ev.votes.get(path, 0.0), 9) for path in ev.paths}
