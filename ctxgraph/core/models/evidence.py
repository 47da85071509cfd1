"""What the history says about a query's files, as the stores return it
(ranked by ``compute/``; the text scores are BM25, ``core.evidence``)."""

from __future__ import annotations

from pydantic import BaseModel

from ctxgraph.core.models.base import VALUE
from ctxgraph.core.models.files import FileEntry


class ScoredTask(BaseModel):
    """A finished task found for a query: its score, when it finished, the query
    terms it mentions and the files its handoff touched."""

    model_config = VALUE

    id: str
    score: float
    completed_at: str
    matched: tuple[str, ...]
    files: tuple[str, ...]


class TaskEvidence(ScoredTask):
    """A finished task sharing full-text terms with the query, scored by BM25
    (``core.bm25``; on Neo4j, Lucene's)."""


class NeighbourEvidence(ScoredTask):
    """A finished task whose text's embedding is among the nearest to the
    query's, scored by their cosine similarity."""


class FileEvidence(BaseModel):
    """A context-map file with its history: how many finished tasks touched it,
    and the BM25 score of the query against its document (its own terms plus
    the terms of every finished task that touched it) when it is among the
    ``core.evidence.FILE_TOP`` best (0 otherwise)."""

    model_config = VALUE

    entry: FileEntry
    touches: int
    in_map: bool = True
    text: float = 0.0


class HistoryEvidence(BaseModel):
    """What the history says about a query's files (ranked by compute/, not here)."""

    model_config = VALUE

    #: How many tasks are finished.
    n_tasks: int
    #: The ``core.evidence.TASK_TOP`` finished tasks scoring best against the query.
    tasks: tuple[TaskEvidence, ...]
    #: The files with evidence: the best by text, those the tasks and neighbours
    #: touched, and the most touched.
    files: tuple[FileEvidence, ...]
    #: Whether a context map is loaded (None: whether any of ``files`` is in it).
    mapped: bool | None = None
    #: The finished tasks nearest to the query by their texts' embeddings
    #: (``core.evidence.DENSE_VOTERS`` at most, best first); empty when the query
    #: was not embedded or no finished task has a vector yet.
    neighbours: tuple[NeighbourEvidence, ...] = ()
