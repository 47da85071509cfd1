"""What both stores share about the associative memory: chunk properties and
how raw search results become ranked hits.

Scores are rounded before ordering (cosine to ``core.vectors.COSINE_DECIMALS``,
BM25 to ``core.bm25.SCORE_DECIMALS``) and ties go to the path, then the start
line, so the two stores — float32 numpy on one side, Neo4j's indexes on the
other — list the same chunks in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxgraph.core.bm25 import SCORE_DECIMALS, query_terms
from ctxgraph.core.models import MemoryChunk, MemoryHit

#: Decimals kept of a BM25 score before ordering.
BM25_DECIMALS = SCORE_DECIMALS


def chunk_id(project: str, path: str, start_line: int) -> str:
    return f"{project}:{path}:{start_line}"


def chunk_props(project: str, chunk: MemoryChunk) -> dict[str, Any]:
    """The stored properties of a chunk (the same on both stores)."""
    props: dict[str, Any] = chunk.model_dump(mode="json", exclude_none=True)
    if chunk.embedding is not None:
        props["embedding"] = [float(x) for x in chunk.embedding]
    props["id"] = chunk_id(project, chunk.path, chunk.start_line)
    props["project"] = project
    return props


def chunk_from_props(props: dict[str, Any]) -> MemoryChunk:
    """A chunk as searches return it (without its vector; a property it does
    not have, None from Neo4j's map projection, takes the model's default)."""
    fields = {k: v for k, v in props.items()
              if k in MemoryChunk.model_fields and k != "embedding" and v is not None}
    return MemoryChunk(**fields)


def ranked(scored: Iterable[tuple[MemoryChunk, float]], decimals: int, k: int) -> list[MemoryHit]:
    """The ``k`` best (chunk, score) pairs as hits, best first, ties by path and line."""
    rounded = [(chunk, round(float(score), decimals)) for chunk, score in scored]
    rounded.sort(key=lambda cs: (-cs[1], cs[0].path, cs[0].start_line))
    return [MemoryHit(chunk=c, score=s, rank=n) for n, (c, s) in enumerate(rounded[:k], start=1)]


def fulltext_query(terms: Iterable[str]) -> str:
    """The Lucene query for ``terms``: a plain OR of them, every character
    that is not a letter or digit escaped so that no term is read as syntax."""
    return " ".join("".join(ch if ch.isalnum() else "\\" + ch for ch in t) for t in query_terms(terms))
