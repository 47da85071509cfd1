"""What the history says about a query's files, as the stores return it
(ranked by ``compute/``, from the arithmetic of ``core.evidence``)."""

from __future__ import annotations

from pydantic import BaseModel

from ctxgraph.core.models.base import VALUE
from ctxgraph.core.models.files import FileEntry


class TaskEvidence(BaseModel):
    """A finished task sharing full-text terms with the query: the matched terms
    with their document frequency, its length in terms and the files it touched."""

    model_config = VALUE

    id: str
    term_count: int
    completed_at: str
    matched: tuple[tuple[str, int], ...]
    files: tuple[str, ...]


class NeighbourEvidence(BaseModel):
    """A finished task whose text's embedding is among the nearest to the query's:
    its cosine similarity, the query terms it mentions and the files it touched."""

    model_config = VALUE

    id: str
    score: float
    completed_at: str
    matched: tuple[str, ...]
    files: tuple[str, ...]


class FileEvidence(BaseModel):
    """A context-map file with its history: how many finished tasks touched it,
    their total length in terms, and which query terms its own text has."""

    model_config = VALUE

    entry: FileEntry
    touches: int
    task_len: int
    own_len: int
    own_terms: tuple[str, ...]
    in_map: bool = True
    #: The matched query terms of the finished tasks touching it, each with how
    #: many of them mention it (see ``core.evidence``); with
    #: ``HistoryEvidence.file_df`` set, the ranking reads the file's text from
    #: here instead of from ``HistoryEvidence.tasks``.
    term_tf: tuple[tuple[str, int], ...] = ()


class HistoryEvidence(BaseModel):
    """What the history says about a query's files (ranked by compute/, not here)."""

    model_config = VALUE

    n_tasks: int
    total_task_len: int
    tasks: tuple[TaskEvidence, ...]
    files: tuple[FileEvidence, ...]
    #: The rankable files (the context map's when one is loaded, else every
    #: file) — how many, and their documents' total length in terms (their
    #: own terms plus the terms of the finished tasks that touched them).
    #: ``files`` may then be only those with evidence; None: ``files`` is all.
    n_files: int | None = None
    total_file_len: int | None = None
    #: Whether a context map is loaded (None: whether any of ``files`` is in it).
    mapped: bool | None = None
    #: How many rankable files' documents have each query term. Set when the
    #: store bounded the evidence (``core.evidence.bound``): ``tasks`` are then
    #: only the best matched tasks and each file carries its ``term_tf``.
    #: None: ``tasks`` are every matched task and the text is derived from them.
    file_df: tuple[tuple[str, int], ...] | None = None
    #: The finished tasks nearest to the query by their texts' embeddings
    #: (``core.evidence.DENSE_VOTERS`` at most, best first); empty when the query
    #: was not embedded or no finished task has a vector yet.
    neighbours: tuple[NeighbourEvidence, ...] = ()
