"""The ``dense`` ranking feature."""

from __future__ import annotations

from ctxgraph.compute.features.base import QueryEvidence, feature


@feature("dense", weight=0.0, dense_weight=3.0, order=50)
def dense(ev: QueryEvidence) -> dict[str, float] | None:
    """sum over the DENSE_VOTERS finished tasks nearest to the query by the
    cosine of their embeddings that touched the file of (the task's cosine /
    the nearest one's) / sqrt(files the task touched); absent without
    neighbours by embedding."""
    if not ev.embedded:
        return None
    return {path: round(ev.dense.get(path, 0.0), 9) for path in ev.paths}
