"""The history on the embedded store: the finished tasks' and the files'
documents with their BM25 indexes (``core.bm25``, Lucene's arithmetic, as
Neo4j's full-text indexes score the same documents) and the finished tasks'
tags, cached until the database changes; ``_history_evidence`` (the best tasks
and files for the query's terms, bounded as ``core.evidence`` says, and the
nearest finished tasks by embedding); ``related`` (the finished tasks sharing
the most weighted tags); and the task vectors those neighbours are found with."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxgraph.core import bm25, evidence, rarity
from ctxgraph.core.bm25 import query_terms
from ctxgraph.core.evidence import best_files, best_first, choose_files
from ctxgraph.core.models import FileEntry, FileEvidence, HistoryEvidence, NeighbourEvidence, TaskEvidence
from ctxgraph.core.shortlist import EXACT_UP_TO, SignBits, shortlist_size
from ctxgraph.core.vectors import COSINE_DECIMALS
from ctxgraph.graph.local import nodes, sql
from ctxgraph.graph.local.connection import Connection
from ctxgraph.graph.records import file_from_props, task_text, text_hash

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


@dataclass
class _Corpus:
    version: tuple[int, int]
    # Finished tasks by id: completed_at and distinct terms. Immutable values
    # (tuples of strings and ints): once built, the garbage collector stops
    # tracking them, so a full collection does not walk the cache (at 100,000
    # nodes it made one context in twenty ~250 ms slower).
    ids: tuple[str, ...]
    completed: dict[str, tuple[str, tuple[str, ...]]]
    touched_by: dict[str, tuple[str, ...]]  # task id -> files its handoff created or modified (sorted)
    touches: dict[str, int]  # file -> finished tasks touching it
    files: list[tuple[FileEntry, bool]]  # every file: entry, in_map
    tasks_index: bm25.Index  # a row per task of ids
    files_index: bm25.Index  # a row per file of text_rows
    tagged: dict[str, npt.NDArray[np.int64]]  # tag -> the rows (of ids, ascending) of the tasks linked to it
    done_rank: npt.NDArray[np.int64]  # per row of ids: its completed_at's place among them (equal ones alike)
    text_rows: tuple[int, ...] = ()  # the files (indexes into files) with a document: those in the map
    mapped: bool = False
    # The rankable files (the map's when one is loaded, else all): indexes into
    # files by path, most touched first, sorted paths.
    rankable: dict[str, int] = field(default_factory=dict)
    by_touches: tuple[int, ...] = ()
    sorted_paths: list[str] = field(default_factory=list)
    # The finished tasks' vectors (unit rows) and their ids; built on first use.
    vector_ids: tuple[str, ...] | None = None
    vectors: Any = None
    signs: SignBits | None = None  # core.shortlist's, over a store of more than EXACT_UP_TO vectors


class History:
    """The history's reads and the task vectors over one connection."""

    def __init__(self, db: Connection) -> None:
        self.db = db
        self._corpus_cache: _Corpus | None = None
        self._has_vector_table: bool | None = None  # a store written before task vectors has none
        self._has_query_table: bool | None = None  # nor one written before task query vectors

    def _finished_seen(self) -> int:
        """The finished tasks of the last corpus read (0 before the first): a
        hint of the history's size, without a read."""
        found = self._corpus_cache
        return 0 if found is None else len(found.ids)

    def _corpus(self, cur: sqlite3.Cursor) -> _Corpus:
        """The history's documents and indexes (cached until the database changes)."""
        import numpy as np

        version = self.db.version(cur)
        if self._corpus_cache is not None and self._corpus_cache.version == version:
            return self._corpus_cache
        completed: dict[str, tuple[str, tuple[str, ...]]] = {
            tid: (done or "", tuple(json.loads(found or "[]")))
            for tid, found, done in cur.execute(sql.CORPUS_TASKS)
        }
        ids = tuple(sorted(completed))
        touching: dict[str, set[str]] = {}
        for tid, path in cur.execute(sql.TOUCHED):
            if tid in completed:
                touching.setdefault(tid, set()).add(path)
        touched_by = {tid: tuple(sorted(paths)) for tid, paths in touching.items()}
        by_file: dict[str, list[str]] = {}
        for tid in ids:
            for path in touched_by.get(tid, ()):
                by_file.setdefault(path, []).append(tid)
        files: list[tuple[FileEntry, bool]] = []
        docs: list[Counter[str]] = []
        text_rows: list[int] = []
        for (text,) in cur.execute(sql.ALL_FILES):
            props = nodes.loads(text)
            entry, in_map = file_from_props(props), bool(props.get("in_map", True))
            if in_map:  # a file's document: its own terms and those of every finished task touching it
                doc = Counter(props.get("terms") or ())
                for tid in by_file.get(entry.path, ()):
                    doc.update(completed[tid][1])
                docs.append(doc)
                text_rows.append(len(files))
            files.append((entry, in_map))
        touches = {path: len(tids) for path, tids in by_file.items()}
        row_of = {tid: i for i, tid in enumerate(ids)}
        tagged: dict[str, list[int]] = {}
        for tid, tag in cur.execute(sql.TASK_TAGS):
            row = row_of.get(tid)
            if row is not None:
                tagged.setdefault(tag, []).append(row)
        days = sorted({done for done, _ in completed.values()})
        day_rank = {done: i for i, done in enumerate(days)}
        corpus = _Corpus(
            version=version, ids=ids, completed=completed, touched_by=touched_by, touches=touches, files=files,
            tasks_index=bm25.Index.build([dict.fromkeys(completed[tid][1], 1) for tid in ids]),
            files_index=bm25.Index.build(docs), text_rows=tuple(text_rows),
            tagged={tag: np.sort(np.asarray(rows, dtype=np.int64)) for tag, rows in tagged.items()},
            done_rank=np.fromiter((day_rank[completed[tid][0]] for tid in ids), dtype=np.int64, count=len(ids)),
        )
        corpus.mapped = any(in_map for _, in_map in files)
        corpus.rankable = {entry.path: i for i, (entry, in_map) in enumerate(files) if in_map or not corpus.mapped}
        corpus.sorted_paths = sorted(corpus.rankable)
        corpus.by_touches = tuple(sorted(corpus.rankable.values(),
                                         key=lambda i: (-touches.get(files[i][0].path, 0), files[i][0].path)))
        self._corpus_cache = corpus
        return corpus

    def _history_evidence(self, terms: Sequence[str], top_files: int = 10,
                         vector: Sequence[float] | None = None) -> HistoryEvidence:
        query = query_terms(terms)
        with self.db.read() as cur:
            corpus = self._corpus(cur)
            near = self._neighbours(cur, corpus, vector, query) if vector is not None else ()
        wanted = set(query)
        # The evidence is validated (pydantic-core does these flat models faster
        # than model_construct); only the HistoryEvidence holding it is not.
        # the best tasks and files, equal scores at the cutoff included and then
        # ordered as core.evidence says (as the Neo4j store orders its own)
        tasks = best_first(
            TaskEvidence(
                id=tid, score=score, completed_at=corpus.completed[tid][0],
                matched=tuple(sorted(wanted.intersection(corpus.completed[tid][1]))),
                files=corpus.touched_by.get(tid, ()))
            for tid, score in ((corpus.ids[row], score)
                               for row, score in corpus.tasks_index.top(query, evidence.TASK_TOP, ties=True))
        )[:evidence.TASK_TOP]
        text = best_files(((corpus.files[corpus.text_rows[row]][0].path, score)
                           for row, score in corpus.files_index.top(query, evidence.FILE_TOP, ties=True)),
                          evidence.FILE_TOP)
        touched = [p for t in tasks for p in t.files] + [p for n in near for p in n.files]
        chosen = choose_files(
            text=text, touched=touched, rankable=corpus.rankable,
            mapped_paths=corpus.sorted_paths if corpus.mapped else None,
            most_touched=(corpus.files[i][0].path for i in corpus.by_touches[:top_files]))
        files = []
        for path in sorted(chosen):
            entry, in_map = corpus.files[corpus.rankable[path]]
            files.append(FileEvidence(entry=entry, touches=corpus.touches.get(path, 0),
                                                      in_map=in_map, text=text.get(path, 0.0)))
        return HistoryEvidence.model_construct(n_tasks=len(corpus.ids), tasks=tuple(tasks), files=tuple(files),
                                               mapped=corpus.mapped, neighbours=near)

    def _related_ids(self, weighted: Sequence[tuple[str, float]], limit: int,
                exclude: Sequence[str] = ()) -> list[tuple[str, tuple[str, ...]]]:
        """The finished tasks (less ``exclude``) linked to the most weighted tags
        (``core.rarity.weighted``), as (id, matched tags): the ``limit`` best by
        the sum of their matched tags' weights (rounded to ``rarity.DIGITS``),
        then the later completed, then the smaller id — the order Neo4j's
        ``gather.cypher`` gives them."""
        import numpy as np

        if limit <= 0 or not weighted:
            return []
        with self.db.read() as cur:
            corpus = self._corpus(cur)
        found = [(tag, weight, corpus.tagged[tag]) for tag, weight in weighted if tag in corpus.tagged]
        if not found:
            return []
        rows = np.concatenate([r for _, _, r in found])
        order = np.argsort(rows, kind="stable")
        rows = rows[order]
        weights = np.concatenate([np.full(len(r), w) for _, w, r in found])[order]
        which = np.concatenate([np.full(len(r), i) for i, (_, _, r) in enumerate(found)])[order]
        starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))  # one per task
        sums = np.add.reduceat(weights, starts)
        skip = [row for tid in exclude if (row := bisect_left(corpus.ids, tid)) < len(corpus.ids)
                and corpus.ids[row] == tid]
        keep = np.flatnonzero(~np.isin(rows[starts], skip)) if skip else np.arange(len(starts))
        if len(keep) > limit:  # a shortlist by the float sums, then the exact order on it
            cut = np.partition(sums[keep], len(keep) - limit)[len(keep) - limit] - 10.0 ** -rarity.DIGITS
            keep = keep[sums[keep] >= cut]
        ends = np.append(starts[1:], len(rows))
        best = sorted(((round(float(sums[i]), rarity.DIGITS), int(rows[starts[i]]), int(i)) for i in keep),
                      key=lambda s: (-s[0], -corpus.done_rank[s[1]], s[1]))[:limit]
        return [(corpus.ids[row], tuple(sorted(found[j][0] for j in which[starts[i]:ends[i]])))
                for _, row, i in best]

    def _vector_table(self, cur: sqlite3.Cursor) -> bool:
        """Whether the task_vectors table exists (a store written by an older
        ctxgraph and opened read-only has none: it then has no vectors)."""
        if self._has_vector_table is None:
            self._has_vector_table = cur.execute(sql.VECTOR_TABLE_EXISTS).fetchone() is not None
        return self._has_vector_table

    def _neighbours(self, cur: sqlite3.Cursor, corpus: _Corpus, vector: Sequence[float],
                    terms: Sequence[str]) -> tuple[NeighbourEvidence, ...]:
        """The finished tasks nearest to ``vector`` by cosine, best first: ties go
        to the newer task, then to the smaller id. Exact over every vector up to
        ``core.shortlist.EXACT_UP_TO`` of them; beyond, over a shortlist."""
        import numpy as np

        from ctxgraph.signals import _blas

        if not self._vector_table(cur):
            return ()
        if corpus.vector_ids is None:
            ids, rows = [], []
            for tid, blob in cur.execute(sql.TASK_VECTORS_ORDERED):
                if tid in corpus.completed:
                    ids.append(tid)
                    rows.append(np.frombuffer(blob, dtype=np.float32))
            matrix = np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)
            if rows:
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
            corpus.vector_ids, corpus.vectors = tuple(ids), matrix
            if len(ids) > EXACT_UP_TO:
                corpus.signs = SignBits(matrix)
        if not corpus.vector_ids:
            return ()
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (corpus.vectors.shape[1],) or not np.linalg.norm(query):
            return ()
        query = query / np.linalg.norm(query)
        # On a large store the exact scores are those of a shortlist (core.shortlist).
        short = corpus.signs.shortlist(query, shortlist_size(len(corpus.signs))) if corpus.signs is not None \
            else None
        # One BLAS thread: the product reads the whole matrix once (memory-bound);
        # OpenBLAS's default threads on a busy machine wait for a CPU instead
        # (16,559 vectors: p50 4.7 ms, p95 20 ms on two threads; 0.9 / 9 on one).
        blas = _blas.find()
        with blas.single() if blas is not None else contextlib.nullcontext():
            sims = (corpus.vectors if short is None else corpus.vectors[short]) @ query
        fetch = min(len(sims), 4 * evidence.DENSE_VOTERS)
        candidates = np.argpartition(-sims, fetch - 1)[:fetch] if fetch < len(sims) else range(len(sims))
        scored = [(round(float(sims[i]), COSINE_DECIMALS), corpus.vector_ids[i if short is None else short[i]])
                  for i in candidates]
        scored.sort(key=lambda r: r[1])
        scored.sort(key=lambda r: corpus.completed[r[1]][0], reverse=True)
        scored.sort(key=lambda r: r[0], reverse=True)
        best = scored[:evidence.DENSE_VOTERS]
        wanted = set(terms)
        return tuple(
            NeighbourEvidence(id=tid, score=score, completed_at=corpus.completed[tid][0],
                                              matched=tuple(sorted(wanted.intersection(corpus.completed[tid][1]))),
                                              files=corpus.touched_by.get(tid, ()))
            for score, tid in best
        )

    # -- task vectors (what the neighbours by embedding are found with) --------------

    def tasks_to_embed(self, limit: int, ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        with self.db.read() as cur:
            table = self._vector_table(cur)
            if ids is None:
                have = dict(cur.execute(sql.TASK_VECTOR_HASHES)) if table else {}
                rows = cur.execute(sql.COMPLETED_TASKS)
            else:
                wanted = json.dumps(sorted(set(ids)))
                have = dict(cur.execute(sql.TASK_VECTOR_HASHES_AMONG, (wanted,))) if table else {}
                rows = cur.execute(sql.COMPLETED_TASKS_AMONG, (wanted,))
            out: list[tuple[str, str]] = []
            for tid, props in rows:
                text = task_text(nodes.loads(props))
                if text and have.get(tid) != text_hash(text):
                    out.append((tid, text))
                    if len(out) >= limit:
                        break
        return out

    def write_task_vectors(self, rows: Sequence[tuple[str, str, Sequence[float]]]) -> None:
        with self.db.write() as cur:
            known = {tid for (tid,) in cur.execute(sql.TASK_IDS_AMONG, (json.dumps([r[0] for r in rows]),))}
            cur.executemany(
                sql.TASK_VECTORS_PUT,
                [(tid, digest, array("f", vec).tobytes()) for tid, digest, vec in rows
                 if tid in known],
            )

    def task_query_vectors(self, ids: Sequence[str], cur: sqlite3.Cursor | None = None,
                           ) -> dict[str, tuple[str, list[float]]]:
        """By id, the stored query vectors (``cur``: within that read)."""
        if cur is None:
            with self.db.read() as own:
                return self.task_query_vectors(ids, own)
        if not self._query_table(cur):
            return {}
        return {tid: (digest, array("f", blob).tolist())  # float32, as written
                for tid, digest, blob in cur.execute(sql.TASK_QUERIES_AMONG, (json.dumps(list(ids)),))}

    def write_task_query_vectors(self, rows: Sequence[tuple[str, str, Sequence[float]]]) -> None:
        # (no change of the graph's generation: the cached corpus stays valid)
        with self.db.write() as cur:
            known = {tid for (tid,) in cur.execute(sql.TASK_IDS_AMONG, (json.dumps([r[0] for r in rows]),))}
            cur.executemany(
                sql.TASK_QUERIES_PUT,
                [(tid, digest, array("f", vec).tobytes()) for tid, digest, vec in rows
                 if tid in known],
            )

    def _query_table(self, cur: sqlite3.Cursor) -> bool:
        """Whether the task_queries table exists (not in a store written by an
        older ctxgraph and opened read-only)."""
        if self._has_query_table is None:
            self._has_query_table = cur.execute(sql.QUERY_TABLE_EXISTS).fetchone() is not None
        return self._has_query_table

    def has_task_vectors(self) -> bool:
        with self.db.read() as cur:  # stops at the first row
            return self._vector_table(cur) and cur.execute(sql.TASK_VECTOR_ANY).fetchone() is not None

    def task_vector_count(self) -> int:
        with self.db.read() as cur:
            if not self._vector_table(cur):
                return 0
            return int(cur.execute(sql.TASK_VECTOR_COUNT).fetchone()[0])

