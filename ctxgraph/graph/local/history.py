"""The history on the embedded store: the corpus of finished tasks and files
(cached until the database changes), ``history_evidence`` (the tasks and
files the query's terms are found in, and the nearest finished tasks by
embedding), and the task vectors those neighbours are found with."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxgraph.core import evidence
from ctxgraph.core.evidence import MatchedTask, bound, max_term_df
from ctxgraph.core.models import FileEntry, FileEvidence, HistoryEvidence, NeighbourEvidence, TaskEvidence
from ctxgraph.graph.local import nodes, sql
from ctxgraph.graph.local.connection import Connection
from ctxgraph.graph.memory_records import COSINE_DECIMALS
from ctxgraph.graph.records import file_from_props, task_text, text_hash


@dataclass
class _Corpus:
    version: tuple[int, int]
    completed: dict[str, tuple[int, str]]  # task id -> (term count, completed_at)
    # Immutable values (tuples of strings and ints): once built, the garbage
    # collector stops tracking them, so a full collection does not walk the
    # cache (at 100,000 nodes it made one context in twenty ~250 ms slower).
    touched_by: dict[str, tuple[str, ...]]  # task id -> files its handoff created or modified (sorted)
    touches: dict[str, tuple[int, int]]  # file -> (finished tasks touching it, their total terms)
    files: list[tuple[FileEntry, tuple[str, ...], bool]]  # entry, its terms, in_map
    # The rankable files (the map's when one is loaded, else all): indexes into
    # files by path, most touched first, by own term; their total document length.
    mapped: bool = False
    rankable: dict[str, int] = field(default_factory=dict)
    by_touches: tuple[int, ...] = ()
    by_term: dict[str, tuple[int, ...]] = field(default_factory=dict)
    sorted_paths: list[str] = field(default_factory=list)
    lengths: dict[str, int] = field(default_factory=dict)  # rankable file -> its document's length
    unfinished: int = 0  # tasks not finished (their mentions are not counted)
    total_task_len: int = 0  # the finished tasks' total length in terms
    total_file_len: int = 0
    # The finished tasks' vectors (unit rows) and their ids; built on first use.
    vector_ids: tuple[str, ...] | None = None
    vectors: Any = None


class History:
    """The history's reads and the task vectors over one connection."""

    def __init__(self, db: Connection) -> None:
        self.db = db
        self._corpus_cache: _Corpus | None = None
        self._has_vector_table: bool | None = None  # a store written before task vectors has none

    def _corpus(self, cur: sqlite3.Cursor) -> _Corpus:
        """Corpus-wide facts of the history (cached until the database changes)."""
        version = self.db.version(cur)
        if self._corpus_cache is not None and self._corpus_cache.version == version:
            return self._corpus_cache
        completed: dict[str, tuple[int, str]] = {
            tid: (int(count or 0), done or "")
            for tid, count, done in cur.execute(sql.CORPUS_TASKS)
        }
        touching: dict[str, set[str]] = {}
        for tid, path in cur.execute(sql.TOUCHED):
            if tid in completed:
                touching.setdefault(tid, set()).add(path)
        touched_by = {tid: tuple(sorted(paths)) for tid, paths in touching.items()}
        counts: dict[str, list[int]] = {}
        for tid, paths in touched_by.items():
            for path in paths:
                entry = counts.setdefault(path, [0, 0])
                entry[0] += 1
                entry[1] += completed[tid][0]
        touches = {path: (n, length) for path, (n, length) in counts.items()}
        files = []
        for (text,) in cur.execute(sql.ALL_FILES):
            props = nodes.loads(text)
            files.append((file_from_props(props), tuple(props.get("terms") or ()), bool(props.get("in_map", True))))
        corpus = _Corpus(version=version, completed=completed, touched_by=touched_by, touches=touches, files=files)
        all_tasks = int(cur.execute(sql.TASK_COUNT).fetchone()[0])
        corpus.unfinished = all_tasks - len(completed)
        corpus.total_task_len = sum(count for count, _ in completed.values())
        corpus.mapped = any(in_map for _, _, in_map in files)
        corpus.rankable = {entry.path: i for i, (entry, _, in_map) in enumerate(files)
                           if in_map or not corpus.mapped}
        corpus.sorted_paths = sorted(corpus.rankable)
        corpus.by_touches = tuple(sorted(corpus.rankable.values(),
                                         key=lambda i: (-touches.get(files[i][0].path, (0, 0))[0], files[i][0].path)))
        by_term: dict[str, list[int]] = {}
        for i in corpus.rankable.values():
            file_entry, own, _ = files[i]
            corpus.lengths[file_entry.path] = len(own) + touches.get(file_entry.path, (0, 0))[1]
            corpus.total_file_len += corpus.lengths[file_entry.path]
            for term in set(own):
                by_term.setdefault(term, []).append(i)
        corpus.by_term = {term: tuple(found) for term, found in by_term.items()}
        self._corpus_cache = corpus
        return corpus

    def history_evidence(self, terms: Sequence[str], max_df_share: float, top_files: int = 10,
                         vector: Sequence[float] | None = None) -> HistoryEvidence:
        with self.db.read() as cur:
            corpus = self._corpus(cur)
            near = self._neighbours(cur, corpus, vector, terms) if vector is not None else ()
            n = len(corpus.completed)
            max_df = max_term_df(n, max_df_share)
            # Count each term's mentions first (the index answers) and read the
            # mentions only of terms that can be in at most max_df finished tasks:
            # a common term's thousands of rows would be read to be thrown away.
            wanted_json = json.dumps(list(terms))
            rare = [name for name, count in cur.execute(sql.TERM_TASK_COUNTS, (wanted_json,))
                    if count - corpus.unfinished <= max_df]
            mentions: dict[str, list[str]] = {}
            for name, tid in cur.execute(sql.TERM_TASKS, (json.dumps(rare),)):
                if tid in corpus.completed:
                    mentions.setdefault(name, []).append(tid)
        matched: dict[str, list[tuple[str, int]]] = {}
        for name, tids in mentions.items():
            if len(tids) <= max_df:
                for tid in tids:
                    matched.setdefault(tid, []).append((name, len(tids)))
        hits = [
            MatchedTask(tid, corpus.completed[tid][0], corpus.completed[tid][1], tuple(sorted(matched[tid])),
                    corpus.touched_by.get(tid, ()))
            for tid in sorted(matched)
        ]
        # The files' own query terms, but not terms of more rankable files than the cap.
        wanted = {t for t in terms if len(corpus.by_term.get(t, ())) <= evidence.TERM_DF_CAP}
        own: dict[str, tuple[str, ...]] = {}
        for term in wanted:
            for i in corpus.by_term.get(term, ()):
                entry, own_terms, _ = corpus.files[i]
                if entry.path not in own:
                    own[entry.path] = tuple(t for t in own_terms if t in wanted)
        total = corpus.total_task_len
        kept = bound(
            hits, n_tasks=n, total_task_len=total, own=own, lengths=corpus.lengths, rankable=corpus.rankable,
            mapped_paths=corpus.sorted_paths if corpus.mapped else None, n_files=len(corpus.rankable),
            total_file_len=corpus.total_file_len,
            most_touched=(corpus.files[i][0].path for i in corpus.by_touches[:top_files]),
            also=(p for n in near for p in n.files),
        )
        # model_construct: every field is built here from typed values; validating
        # the models on every context cost more than the rest of the read.
        tasks = tuple(
            TaskEvidence.model_construct(id=h.id, term_count=h.term_count, completed_at=h.completed_at,
                                         matched=h.matched, files=h.files)
            for h in kept.tasks
        )
        files = []
        for i in sorted(corpus.rankable[p] for p in kept.files):
            entry, own_terms, in_map = corpus.files[i]
            touches, task_len = corpus.touches.get(entry.path, (0, 0))
            files.append(FileEvidence.model_construct(
                entry=entry, touches=touches, task_len=task_len, own_len=len(own_terms),
                own_terms=own.get(entry.path, ()), in_map=in_map,
                term_tf=tuple(sorted(kept.term_tf.get(entry.path, {}).items()))))
        return HistoryEvidence(n_tasks=n, total_task_len=total, tasks=tasks, files=tuple(files),
                               n_files=len(corpus.rankable), total_file_len=corpus.total_file_len,
                               mapped=corpus.mapped, file_df=tuple(sorted(kept.file_df.items())),
                               neighbours=near)

    def vector_table(self, cur: sqlite3.Cursor) -> bool:
        """Whether the task_vectors table exists (a store written by an older
        ctxgraph and opened read-only has none: it then has no vectors)."""
        if self._has_vector_table is None:
            self._has_vector_table = cur.execute(sql.VECTOR_TABLE_EXISTS).fetchone() is not None
        return self._has_vector_table

    def _neighbours(self, cur: sqlite3.Cursor, corpus: _Corpus, vector: Sequence[float],
                    terms: Sequence[str]) -> tuple[NeighbourEvidence, ...]:
        """The finished tasks nearest to ``vector`` by cosine (exact, over every
        vector), best first: ties go to the newer task, then to the smaller id."""
        import numpy as np

        if not self.vector_table(cur):
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
        if not corpus.vector_ids:
            return ()
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (corpus.vectors.shape[1],) or not np.linalg.norm(query):
            return ()
        sims = corpus.vectors @ (query / np.linalg.norm(query))
        fetch = min(len(sims), 4 * evidence.DENSE_VOTERS)
        candidates = np.argpartition(-sims, fetch - 1)[:fetch] if fetch < len(sims) else range(len(sims))
        scored = [(round(float(sims[i]), COSINE_DECIMALS), corpus.vector_ids[i]) for i in candidates]
        scored.sort(key=lambda r: r[1])
        scored.sort(key=lambda r: corpus.completed[r[1]][1], reverse=True)
        scored.sort(key=lambda r: r[0], reverse=True)
        best = scored[:evidence.DENSE_VOTERS]
        wanted = set(terms)
        mentioned: dict[str, list[str]] = {}
        for tid, name in cur.execute(sql.TASK_TERMS, (json.dumps([tid for _, tid in best]),)):
            if name in wanted:
                mentioned.setdefault(tid, []).append(name)
        return tuple(
            NeighbourEvidence.model_construct(id=tid, score=score, completed_at=corpus.completed[tid][1],
                                              matched=tuple(sorted(mentioned.get(tid, ()))),
                                              files=corpus.touched_by.get(tid, ()))
            for score, tid in best
        )

    # -- task vectors (what the neighbours by embedding are found with) --------------

    def tasks_to_embed(self, limit: int) -> list[tuple[str, str]]:
        with self.db.read() as cur:
            have = dict(cur.execute(sql.TASK_VECTOR_HASHES)) if self.vector_table(cur) else {}
            out: list[tuple[str, str]] = []
            for tid, props in cur.execute(sql.COMPLETED_TASKS):
                text = task_text(nodes.loads(props))
                if text and have.get(tid) != text_hash(text):
                    out.append((tid, text))
                    if len(out) >= limit:
                        break
        return out

    def write_task_vectors(self, rows: Sequence[tuple[str, str, Sequence[float]]]) -> None:
        import numpy as np

        with self.db.write() as cur:
            known = {tid for (tid,) in cur.execute(sql.TASK_IDS_AMONG, (json.dumps([r[0] for r in rows]),))}
            cur.executemany(
                sql.TASK_VECTORS_PUT,
                [(tid, digest, np.asarray(vec, dtype=np.float32).tobytes()) for tid, digest, vec in rows
                 if tid in known],
            )

    def has_task_vectors(self) -> bool:
        with self.db.read() as cur:  # stops at the first row
            return self.vector_table(cur) and cur.execute(sql.TASK_VECTOR_ANY).fetchone() is not None

    def task_vector_count(self) -> int:
        with self.db.read() as cur:
            if not self.vector_table(cur):
                return 0
            return int(cur.execute(sql.TASK_VECTOR_COUNT).fetchone()[0])

