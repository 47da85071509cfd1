"""The associative memory on the embedded store: chunks as graph nodes, searched in process.

Chunks are ``Chunk`` nodes (id ``project:path:start_line``) linked to their
``File`` by ``IN_FILE``; a ``Project`` node records the index run. Searches
read every chunk of the store into memory once per change of the chunks
(a generation counter in the ``meta`` table, bumped by every chunk write):

- vector search is exact (brute force) cosine over a float32 matrix:
  10,000 chunks is a 15 MB matrix and ~2 ms per query; at ~100,000 chunks the
  matrix (150 MB) and its first load (seconds) stop being fine — use Neo4j's
  vector index there;
- full-text search is Lucene's BM25 (``ctxgraph.core.bm25``) over the
  chunks' ``search_text`` terms,
  the same whitespace-separated terms the Neo4j full-text index holds, with
  the statistics of every chunk in the store as Lucene has them — so both
  stores give the same scores on a freshly indexed project. (Lucene keeps
  counting deleted documents until its segments merge; after re-indexing,
  Neo4j's scores may drift slightly from these.)
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxgraph.core import bm25
from ctxgraph.core.bm25 import query_terms
from ctxgraph.core.models import (
    FileEntry,
    FileStat,
    MemoryChunk,
    MemoryHit,
    MemoryProject,
    MemoryState,
    infer_component,
)
from ctxgraph.core.vectors import COSINE_DECIMALS
from ctxgraph.graph.local import nodes, sql
from ctxgraph.graph.local.connection import Connection
from ctxgraph.graph.memory_records import BM25_DECIMALS, chunk_from_props, chunk_props, ranked
from ctxgraph.graph.records import file_props

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


@dataclass
class _Index:
    version: tuple[int, int]
    chunks: list[MemoryChunk]
    projects: npt.NDArray[np.str_]  # per chunk
    vectors: npt.NDArray[np.float32] | None  # rows of chunks with an embedding
    vector_rows: npt.NDArray[np.int64]  # chunk positions of the matrix rows
    postings: bm25.Index  # over every chunk's search_text


@dataclass(frozen=True)
class _Row:
    """One chunk row as a search needs it, parsed once and kept while its stored text is the same."""

    chunk: MemoryChunk
    project: str
    vector: npt.NDArray[np.float32] | None
    #: its search_text's terms (ids in the search's vocabulary) and their counts
    terms: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]


def _parsed(text: str, vocabulary: dict[str, int]) -> _Row:
    import numpy as np

    props = json.loads(text)
    embedding = props.get("embedding")
    counts: dict[int, int] = {}
    for word in str(props.get("search_text") or "").split():
        term = vocabulary.setdefault(word, len(vocabulary))
        counts[term] = counts.get(term, 0) + 1
    return _Row(chunk=chunk_from_props(props), project=str(props.get("project")),
                vector=np.asarray(embedding, dtype=np.float32) if embedding else None,
                terms=(np.fromiter(counts.keys(), dtype=np.int64, count=len(counts)),
                       np.fromiter(counts.values(), dtype=np.int64, count=len(counts))))


def projects(db: Connection) -> list[MemoryProject]:
    with db.read() as cur:
        rows = cur.execute(sql.MEMORY_PROJECTS).fetchall()
    return [MemoryProject(**json.loads(text)) for (text,) in rows]


def bump_generation(cur: sqlite3.Cursor) -> None:
    """Mark the chunks as changed (in the write's own transaction)."""
    cur.execute(sql.MEMORY_GENERATION_BUMP)


def _generation(cur: sqlite3.Cursor) -> tuple[int, int]:
    """The chunks' generation: every chunk write, import and clear bumps it (in
    its own transaction, from any connection). Counting the chunks too cost a
    read of every chunk row — 45 ms per context at 10,000 chunks."""
    row = cur.execute(sql.MEMORY_GENERATION).fetchone()
    return (int(row[0]) if row else 0, 0)


def _top(scores: npt.NDArray[np.float64], k: int) -> npt.NDArray[np.int64]:
    """Positions (into ``scores``) of at least the ``k`` best scores, ties at the cut included."""
    import numpy as np

    if len(scores) <= k:
        return np.arange(len(scores))
    cut = np.partition(scores, len(scores) - k)[len(scores) - k]
    return np.flatnonzero(scores >= cut - 1e-6)


class MemorySearch:
    """Searches over every chunk of the store, read into memory once per
    change of the chunks (the index is kept until then). A rebuild parses
    only the rows whose stored text changed (the others are kept by a digest
    of their text): while an index run writes a batch every few seconds, a
    context does not parse every chunk's vector again (4.5 s of 8.4 at
    10,000 chunks on a busy machine)."""

    def __init__(self, db: Connection) -> None:
        self.db = db
        self._index: _Index | None = None
        self._rows: dict[bytes, _Row] = {}
        self._vocabulary: dict[str, int] = {}  # every term seen, by id (the rows' terms are ids)

    def _built(self) -> _Index:
        """Every chunk of the store in memory, rebuilt only when chunks were
        written (other writes — handoffs, tasks — leave it as it is)."""
        import hashlib

        import numpy as np

        with self.db.read() as cur:
            version = _generation(cur)
            cached = self._index
            if cached is not None and cached.version == version:
                return cached
            texts = [text for (text,) in cur.execute(sql.CHUNKS)]
        known, rows = self._rows, {}
        ordered: list[_Row] = []
        for text in texts:
            key = hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
            row = known.get(key) or _parsed(text, self._vocabulary)
            rows[key] = row
            ordered.append(row)
        del texts
        self._rows = rows  # rows no longer stored are dropped
        vector_rows = [i for i, r in enumerate(ordered) if r.vector is not None]
        vectors = [v for r in ordered if (v := r.vector) is not None]
        index = _Index(
            version=version,
            chunks=[r.chunk for r in ordered],
            projects=np.asarray([r.project for r in ordered], dtype=np.str_),
            vectors=np.vstack(vectors) if vectors else None,
            vector_rows=np.asarray(vector_rows, dtype=np.int64),
            postings=bm25.Index.of_counts(list(self._vocabulary), [r.terms for r in ordered]),
        )
        self._index = index
        return index

    def search(
        self, project: str, vector: Sequence[float] | None, terms: Sequence[str], k: int,
    ) -> tuple[list[MemoryHit], list[MemoryHit]]:
        """(nearest chunks by cosine, best full-text matches) of ``project``, ``k``
        each, best first."""
        import numpy as np

        index = self._built()
        in_project = index.projects == project
        by_vector: list[MemoryHit] = []
        if vector is not None and index.vectors is not None:
            matrix_rows = np.flatnonzero(in_project[index.vector_rows])  # this project's rows of the matrix
            if len(matrix_rows):
                mine = index.vector_rows[matrix_rows]  # their chunk positions
                sims = (index.vectors[matrix_rows] @ np.asarray(vector, dtype=np.float32)).astype(np.float64)
                best = _top(sims, k)
                by_vector = ranked(((index.chunks[int(mine[i])], float(sims[i])) for i in best), COSINE_DECIMALS, k)
        by_text: list[MemoryHit] = []
        query = query_terms(terms)
        if query and index.postings.count:
            scores = index.postings.scores(query)
            scores[~in_project] = 0.0
            hit = np.flatnonzero(scores > 0)
            best = hit[_top(scores[hit], k)]
            by_text = ranked(((index.chunks[int(i)], float(scores[i])) for i in best), BM25_DECIMALS, k)
        return by_vector, by_text


class Memory:
    """The associative memory's chunks (a part of ``LocalStore``); searched
    through ``_memory``, the in-memory index of every chunk."""

    db: Connection
    _memory: MemorySearch

    def memory_projects(self) -> list[MemoryProject]:
        return projects(self.db)

    def search_memory(
        self, project: str, vector: Sequence[float] | None, terms: Sequence[str], k: int,
    ) -> tuple[list[MemoryHit], list[MemoryHit]]:
        return self._memory.search(project, vector, terms, k)

    def memory_state(self, project: str) -> MemoryState:
        with self.db.read() as cur:
            found = nodes.node(cur, "Project", project)
            hashes: dict[str, str] = {}
            stats: dict[str, FileStat] = {}
            for (path, sha, mtime, size) in cur.execute(sql.CHUNK_FILE_HASHES, (project + ":", project + ";")):
                hashes[str(path)] = str(sha)
                stats[str(path)] = FileStat(mtime_ns=int(mtime), size=int(size), sha256=str(sha))
        return MemoryState(project=MemoryProject(**found) if found else None, file_hashes=hashes,
                           file_stats=stats)

    def memory_vectors(self, project: str, paths: Sequence[str]) -> dict[str, dict[str, tuple[float, ...]]]:
        found: dict[str, dict[str, tuple[float, ...]]] = {}
        with self.db.read() as cur:
            for path in paths:
                ids = [r[0] for r in cur.execute(sql.CHUNK_IDS_OF_PATH, (project + ":", project + ";", path))]
                for props in nodes.nodes(cur, "Chunk", ids).values():
                    vector = props.get("embedding")
                    if vector:
                        found.setdefault(path, {})[str(props["text_hash"])] = tuple(float(x) for x in vector)
        return found

    def touch_memory(self, project: str, stats: Mapping[str, FileStat]) -> None:
        """Record the new stat of files whose content is unchanged (the
        searches' cached chunks are left as they are: their text is the same)."""
        if not stats:
            return
        with self.db.write() as cur:
            for path, stat in sorted(stats.items()):
                ids = [r[0] for r in cur.execute(sql.CHUNK_IDS_OF_PATH, (project + ":", project + ";", path))]
                found = nodes.nodes(cur, "Chunk", ids)
                nodes.put_nodes(cur, [("Chunk", props | {"file_mtime_ns": stat.mtime_ns, "file_size": stat.size})
                                      for props in found.values()])

    def write_memory(self, project: MemoryProject, chunks: Sequence[MemoryChunk], replaced: Sequence[str]) -> None:
        """One transaction: drop the chunks of ``replaced`` paths (changed or
        deleted files), write ``chunks`` (linked to their files), record the project."""
        with self.db.write() as cur:
            for path in replaced:
                ids = [r[0] for r in cur.execute(sql.CHUNK_IDS_OF_PATH, (project.id + ":", project.id + ";", path))]
                for node_id in ids:
                    cur.execute(sql.DELETE_CHUNK_EDGES, (node_id,))
                    cur.execute(sql.DELETE_CHUNK, (node_id,))
            for path in sorted({c.path for c in chunks}):
                if nodes.node(cur, "File", path) is None:
                    props = file_props(FileEntry(path=path, component=infer_component(path)), in_map=False)
                    nodes.put_node(cur, "File", props)
                    nodes.mention(cur, props["terms"])
            for chunk in chunks:
                props = chunk_props(project.id, chunk)
                nodes.put_node(cur, "Chunk", props)
                nodes.put_edge(cur, ("Chunk", props["id"]), "IN_FILE", ("File", chunk.path))
            nodes.put_node(cur, "Project", project.model_dump(mode="json"))
            if chunks or replaced:
                bump_generation(cur)
