"""Associative memory: a project's chunks, written in one transaction and
searched through the native vector and full-text indexes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from neo4j import ManagedTransaction

from ctxgraph import cypher
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
from ctxgraph.graph.handoff_batch import FileFill
from ctxgraph.graph.memory_records import (
    BM25_DECIMALS,
    chunk_from_props,
    chunk_props,
    fulltext_query,
    ranked,
)
from ctxgraph.graph.neo4j_store.connection import Neo4jConnection
from ctxgraph.graph.neo4j_store.writes import fill_files


class Memory(Neo4jConnection):
    #: Nodes the full-text index returns before the project filter, at first
    #: (times k); widened while another project's chunks crowd them out.
    MEMORY_FETCH = 4
    #: The same for the vector index, whose HNSW search is approximate: asked
    #: for 4 x 5 nodes it missed one of the exact top 5 chunks in 9 of
    #: werkzeug's 150 evaluation queries (520 chunks), asked for 8 x 5 in none,
    #: for ~3 ms more on 10,000 chunks.
    MEMORY_VECTOR_FETCH = 8
    MEMORY_FETCH_MAX = 4096

    def memory_projects(self) -> list[MemoryProject]:
        rows = self._read(lambda tx: self._rows(tx, "memory_projects"))
        return [MemoryProject(**r["project"]) for r in rows]

    def memory_state(self, project: str) -> MemoryState:
        row = self._read(lambda tx: self._rows(tx, "memory_state", project=project))[0]
        found = row["project"]
        rows = [(str(path), str(sha), int(mtime), int(size)) for path, sha, mtime, size in row["hashes"]]
        return MemoryState(project=MemoryProject(**found) if found else None,
                           file_hashes={path: sha for path, sha, _, _ in rows},
                           file_stats={path: FileStat(mtime_ns=mtime, size=size, sha256=sha)
                                       for path, sha, mtime, size in rows})

    def memory_vectors(self, project: str, paths: Sequence[str]) -> dict[str, dict[str, tuple[float, ...]]]:
        rows = self._read(lambda tx: self._rows(tx, "memory_vectors", project=project, paths=list(paths)))
        found: dict[str, dict[str, tuple[float, ...]]] = {}
        for r in rows:
            found.setdefault(str(r["path"]), {})[str(r["text_hash"])] = tuple(float(x) for x in r["embedding"])
        return found

    def touch_memory(self, project: str, stats: Mapping[str, FileStat]) -> None:
        """Record the new stat of files whose content is unchanged."""
        rows = [{"path": p, "mtime_ns": s.mtime_ns, "size": s.size} for p, s in sorted(stats.items())]
        if rows:
            self._write(lambda tx: tx.run(cypher.load("memory_touch"), project=project, rows=rows).consume())

    def write_memory(self, project: MemoryProject, chunks: Sequence[MemoryChunk], replaced: Sequence[str]) -> None:
        """One transaction: drop the chunks of ``replaced`` paths, write
        ``chunks`` (creating missing files), record the project."""
        rows = [chunk_props(project.id, c) for c in chunks]
        files = [FileFill(entry=FileEntry(path=p, component=infer_component(p)), notes="")
                 for p in sorted({c.path for c in chunks})]

        def work(tx: ManagedTransaction) -> None:
            if replaced:
                tx.run(cypher.load("memory_remove"), project=project.id, paths=list(replaced)).consume()
            fill_files(tx, files)
            for start in range(0, len(rows), 500):
                tx.run(cypher.load("memory_write"), rows=rows[start:start + 500]).consume()
            tx.run(cypher.load("memory_project"), props=project.model_dump(mode="json")).consume()

        self._write(work)

    def search_memory(
        self, project: str, vector: Sequence[float] | None, terms: Sequence[str], k: int,
    ) -> tuple[list[MemoryHit], list[MemoryHit]]:
        """(nearest chunks by cosine, best full-text matches) of ``project``,
        ``k`` each, best first — from the native vector and full-text indexes."""
        query = fulltext_query(terms)
        keep = 2 * k  # rows returned per search: the top k and ties at the cut, re-ranked below

        def search(tx: ManagedTransaction, statement: Callable[[int], list[dict[str, Any]]],
                   fetch: int) -> list[dict[str, Any]]:
            while True:
                row = statement(fetch)[0]
                hits: list[dict[str, Any]] = row["hits"]
                if len(hits) >= keep or row["fetched"] < fetch or fetch >= self.MEMORY_FETCH_MAX:
                    return hits
                fetch *= 8  # other projects' chunks crowded this one's out: look further

        def work(tx: ManagedTransaction) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            near = search(tx, lambda fetch: self._rows(
                tx, "memory_vector", project=project, vector=[float(x) for x in vector or ()], fetch=fetch, k=keep,
            ), self.MEMORY_VECTOR_FETCH * k) if vector is not None else []
            text = search(tx, lambda fetch: self._rows(
                tx, "memory_fulltext", project=project, query=query, fetch=fetch, k=keep,
            ), self.MEMORY_FETCH * k) if query else []
            return near, text

        near, text = self._read(work)
        # The vector index scores (1 + cosine) / 2; hits carry the cosine.
        by_vector = ranked(((chunk_from_props(r["chunk"]), 2 * float(r["score"]) - 1) for r in near),
                           COSINE_DECIMALS, k)
        by_text = ranked(((chunk_from_props(r["chunk"]), float(r["score"])) for r in text), BM25_DECIMALS, k)
        return by_vector, by_text
