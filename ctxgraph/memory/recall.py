"""The associative memory's read path at context time (the IO half).

:func:`recall` picks the project, checks that its index is usable (present,
complete, not stale), embeds the task's intent, asks the store for the top
chunks by vector and by full text, and passes every hit through the file
gates. It never raises for a memory problem: a missing or stale index, an
embedding failure or a store error leaves the rest of the context intact and
comes back as a note for the debug section. An index whose first run has
not finished (being built in the background, or cut short) is searched as it
is, with a note ``partial (written/found files)``. Fusion and the snippet caps are
pure and happen in :mod:`ctxgraph.compute.code_memory`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from ctxgraph.core.models import MemoryHit, MemoryProject, MemoryRecall
from ctxgraph.errors import CtxgraphError
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.embed import QUERY_PIECES, Vectors
from ctxgraph.memory.scan import SNIFF_BYTES, inside, is_binary

log = logging.getLogger(__name__)

#: Chunks taken from each search (vector, full text) before fusion.
TOP_K = 5


def gate(root: Path, hit: MemoryHit) -> str:
    """Why a hit may not be shown ("" when it may): its file must still exist,
    resolve (symlinks followed) inside the indexed root, and not be binary."""
    target = inside(root, hit.chunk.path)
    if target is None:
        return "missing" if not (root / hit.chunk.path).exists() else "outside the indexed root"
    try:
        with target.open("rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError:
        return "unreadable"
    return "binary" if is_binary(head) else ""


def choose(projects: Sequence[MemoryProject], wanted: str | None) -> MemoryProject | str:
    """The project to search, or why there is none."""
    if wanted:
        for p in projects:
            if p.id == wanted:
                return p
        return f"project {wanted!r} is not indexed (ctxgraph index PATH --project {wanted})"
    if not projects:
        return "no project indexed (ctxgraph index PATH)"
    if len(projects) > 1:
        return f"{len(projects)} projects indexed; name one (--project, CTXGRAPH_PROJECT)"
    return projects[0]


def age_hours(project: MemoryProject, now: datetime) -> float | None:
    if not project.indexed_at:
        return None
    then = datetime.fromisoformat(project.indexed_at.replace("Z", "+00:00"))
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return (now - then).total_seconds() / 3600


def recall(
    store: KnowledgeStore,
    projects: Sequence[MemoryProject],
    text: str,
    terms: Sequence[str],
    *,
    project: str | None,
    stale_hours: float,
    embedder: Vectors | None = None,
    now: datetime | None = None,
    query_vector: Sequence[float] | None = None,
) -> tuple[MemoryRecall | None, list[str]]:
    """(what the memory found, notes for the debug section); ``projects`` are
    the indexed projects (:attr:`Candidates.memory_projects`). ``query_vector``:
    ``text`` already embedded (``QUERY_PIECES`` word pieces), else it is here."""
    notes: list[str] = []
    found = choose(projects, project)
    if isinstance(found, str):
        return None, [f"associative memory skipped: {found}"]
    age = age_hours(found, now or datetime.now(UTC))
    if age is None:  # a first run not finished (yet): what it wrote is used
        notes.append(f"associative memory: partial ({found.files_indexed:,}/{found.files:,} files; the index "
                     f"of {found.id} is not complete)")
    elif age > stale_hours:
        return None, [f"associative memory skipped: the index of {found.id} is stale (indexed "
                      f"{age:.1f} h ago, limit {stale_hours:g} h; re-run ctxgraph index)"]
    vector: list[float] | None = None
    if found.embeddings and query_vector is not None:
        vector = [float(x) for x in query_vector]
    elif found.embeddings:
        try:
            if embedder is None:
                from ctxgraph.memory.embed import shared_embedder

                embedder = shared_embedder()
            vectors = embedder.embed([text], max_pieces=QUERY_PIECES)
            vector = [float(x) for x in vectors[0]]
        except Exception as exc:  # any embedding failure only costs the vector search
            log.warning("embedding the task failed: %s", exc)
            notes.append(f"associative memory: embedding failed ({exc}); full-text matches only")
    try:
        by_vector, by_text = store.search_memory(found.id, vector, terms, TOP_K)
    except CtxgraphError as exc:
        return None, [*notes, f"associative memory skipped: {exc}"]
    root = Path(found.root)
    kept: dict[str, list[MemoryHit]] = {"vector": [], "text": []}
    refused: dict[str, int] = {}
    for name, hits in (("vector", by_vector), ("text", by_text)):
        for hit in hits:
            why = gate(root, hit)
            if why:
                refused[why] = refused.get(why, 0) + 1
            else:
                kept[name].append(hit)
    if refused:
        notes.append("associative memory: hits refused by the gates: "
                     + ", ".join(f"{n} {why}" for why, n in sorted(refused.items())))
    return MemoryRecall(project=found.id, by_vector=tuple(kept["vector"]), by_text=tuple(kept["text"])), notes
