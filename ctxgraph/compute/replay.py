"""Replay: a finished task asked as a new query against the history before it. Pure.

``ctxgraph tune`` learns the ranking's weights from the project's own
history. For each of its newer finished tasks it rebuilds the evidence a
store would have returned had the task been asked for its context just
before it started — only the tasks finished earlier vote, count and are
neighbours — and reads which files the task then really touched.

The evidence is the unbounded form of :class:`HistoryEvidence`
(``file_df`` None: every matched task, every rankable file), which
:func:`ctxgraph.compute.ranking.file_parts` scores exactly as it scores the
bounded evidence a store returns (``ctxgraph.core.evidence``).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ctxgraph.core.evidence import DENSE_VOTERS, TERM_DF_CAP, max_term_df
from ctxgraph.core.models import FileEvidence, HistoryEvidence, NeighbourEvidence, TaskEvidence
from ctxgraph.graph.memory_records import COSINE_DECIMALS
from ctxgraph.graph.replay_records import ReplayFile, ReplayTask


@dataclass
class Replay:
    """The history in completion order, with what each query needs indexed."""

    tasks: Sequence[ReplayTask]
    files: Sequence[ReplayFile]
    max_df_share: float
    _mapped: bool = field(init=False)
    _rankable: list[ReplayFile] = field(init=False)
    _rankable_paths: frozenset[str] = field(init=False)
    _file_df: dict[str, int] = field(init=False)
    _postings: dict[str, list[int]] = field(init=False)
    _ids: list[int] = field(init=False)
    _matrix: Any = field(init=False)
    _row: dict[int, int] = field(init=False)

    def __post_init__(self) -> None:
        self.tasks = sorted(self.tasks, key=lambda t: (t.completed_at, t.id))
        self._mapped = any(f.in_map for f in self.files)
        self._rankable = sorted((f for f in self.files if f.in_map or not self._mapped), key=lambda f: f.entry.path)
        self._rankable_paths = frozenset(f.entry.path for f in self._rankable)
        self._file_df = defaultdict(int)
        for f in self._rankable:
            for term in set(f.terms):
                self._file_df[term] += 1
        self._postings = defaultdict(list)
        for i, task in enumerate(self.tasks):
            for term in set(task.terms):
                self._postings[term].append(i)
        # The tasks with vectors, as float32 unit rows (as the embedded store keeps them).
        self._ids = [i for i, t in enumerate(self.tasks) if t.vector]
        self._row = {i: r for r, i in enumerate(self._ids)}
        rows = np.asarray([self.tasks[i].vector for i in self._ids], dtype=np.float32)
        if len(rows):
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            rows = (rows / np.where(norms == 0, 1, norms)).astype(np.float32)
        self._matrix = rows
        self._done = [t.completed_at for t in self.tasks]
        self._prefixes: dict[int, tuple[dict[str, tuple[int, int]], int, int]] = {}

    def before(self, index: int) -> int:
        """How many tasks finished strictly before the task at ``index``."""
        return bisect.bisect_left(self._done, self._done[index])

    def _prefix(self, n: int) -> tuple[dict[str, tuple[int, int]], int, int]:
        """Of the first ``n`` tasks: per file, how many touched it and their total
        length in terms; their total length; the rankable files' total length."""
        if n not in self._prefixes:
            counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for task in self.tasks[:n]:
                for path in task.files:
                    entry = counts[path]
                    entry[0] += 1
                    entry[1] += len(task.terms)
            touches = {path: (c[0], c[1]) for path, c in counts.items()}
            total_file_len = sum(len(f.terms) + touches.get(f.entry.path, (0, 0))[1] for f in self._rankable)
            self._prefixes[n] = (touches, sum(len(t.terms) for t in self.tasks[:n]), total_file_len)
        return self._prefixes[n]

    def evidence(self, index: int, *, known: int | None = None, vectors: bool = True) -> HistoryEvidence:
        """What a store would return for the task at ``index`` asked as a new
        query when only the tasks finished before it were in the graph (or only
        the first ``known`` of them)."""
        query = self.tasks[index]
        n = self.before(index) if known is None else min(known, self.before(index))
        prefix = self.tasks[:n]
        max_df = max_term_df(n, self.max_df_share)
        matched: dict[int, list[tuple[str, int]]] = defaultdict(list)
        for term in query.terms:
            posting = self._postings.get(term, [])
            cut = bisect.bisect_left(posting, n)
            if 0 < cut <= max_df:
                for i in posting[:cut]:
                    matched[i].append((term, cut))
        tasks = tuple(
            TaskEvidence.model_construct(id=prefix[i].id, term_count=len(prefix[i].terms),
                                         completed_at=prefix[i].completed_at, matched=tuple(sorted(found)),
                                         files=prefix[i].files)
            for i, found in sorted(matched.items(), key=lambda kv: prefix[kv[0]].id)
        )
        touches, total_task_len, total_file_len = self._prefix(n)
        wanted = {t for t in query.terms if self._file_df.get(t, 0) <= TERM_DF_CAP}
        files = []
        for f in self._rankable:
            n_touches, task_len = touches.get(f.entry.path, (0, 0))
            files.append(FileEvidence.model_construct(
                entry=f.entry, touches=n_touches, task_len=task_len, own_len=len(f.terms),
                own_terms=tuple(t for t in f.terms if t in wanted), in_map=f.in_map, term_tf=()))
        near = self._neighbours(index, n, query.terms) if vectors else ()
        return HistoryEvidence.model_construct(
            n_tasks=n, total_task_len=total_task_len, tasks=tasks, files=tuple(files),
            n_files=len(files), total_file_len=total_file_len, mapped=self._mapped, file_df=None, neighbours=near)

    def _neighbours(self, index: int, n: int, terms: Sequence[str]) -> tuple[NeighbourEvidence, ...]:
        row = self._row.get(index)
        if row is None:
            return ()
        count = bisect.bisect_left(self._ids, n)  # the vectors of tasks finished before
        if not count:
            return ()
        sims = self._matrix[:count] @ self._matrix[row]
        scored = [(round(float(sims[r]), COSINE_DECIMALS), self.tasks[self._ids[r]]) for r in range(count)]
        scored.sort(key=lambda r: r[1].id)
        scored.sort(key=lambda r: r[1].completed_at, reverse=True)
        scored.sort(key=lambda r: r[0], reverse=True)
        wanted = set(terms)
        return tuple(
            NeighbourEvidence.model_construct(id=t.id, score=score, completed_at=t.completed_at,
                                              matched=tuple(sorted(wanted.intersection(t.terms))), files=t.files)
            for score, t in scored[:DENSE_VOTERS]
        )

    def gold(self, index: int) -> tuple[str, ...]:
        """The rankable files the task at ``index`` touched (what a context should have named)."""
        return tuple(p for p in self.tasks[index].files if p in self._rankable_paths)
