"""The ``text`` ranking feature."""

from __future__ import annotations

from ctxgraph.compute.features.base import QueryEvidence, feature


@feature("text", weight=2.0, dense_weight=3.0, order=20)
def text(ev: QueryEvidence) -> dict[str, float]:
    """best vote x BM25 of the query against the file's document (its own
    terms and those of every finished task that touched it) / the best such
    BM25 among the files."""
    return {path: round(ev.best_vote * ev.text.get(path, 0.0) / ev.best_text, 9) for path in ev.paths}
