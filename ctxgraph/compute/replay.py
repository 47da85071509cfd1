"""Replay: a finished task asked as a new query against the history before it. Pure.

``ctxgraph tune`` learns the ranking's weights from the project's own
history. For each of its newer finished tasks it rebuilds the evidence a
store would have returned had the task been asked for its context just
before it started — only the tasks finished earlier vote, count and are
neighbours — and reads which files the task then really touched.

The evidence is what the embedded store returns (``ctxgraph.core.evidence``):
the best tasks and files by BM25 (``ctxgraph.core.bm25``) over the documents
the graph held then, rebuilt once per replayed graph (the tune asks every
task of a block against the graph as it stood when its block began).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ctxgraph.compute.limits import CONTEXT_MAP_TOP
from ctxgraph.core import bm25, evidence
from ctxgraph.core.bm25 import query_terms
from ctxgraph.core.evidence import DENSE_VOTERS, best_first, choose_files
from ctxgraph.core.models import FileEvidence, HistoryEvidence, NeighbourEvidence, ReplayFile, ReplayTask, TaskEvidence
from ctxgraph.core.vectors import COSINE_DECIMALS


@dataclass
class _Graph:
    """The graph after its first ``n`` finished tasks: their BM25 index (a row
    per task), the files' (a row per file with a document), each file's touches
    and the most touched rankable files."""

    tasks: bm25.Index
    files: bm25.Index
    touches: dict[str, int]
    most_touched: tuple[str, ...]


@dataclass
class Replay:
    """The history in completion order, with what each query needs indexed."""

    tasks: Sequence[ReplayTask]
    files: Sequence[ReplayFile]
    top_files: int = CONTEXT_MAP_TOP
    _mapped: bool = field(init=False)
    _rankable: list[ReplayFile] = field(init=False)
    _rankable_paths: frozenset[str] = field(init=False)
    _by_path: dict[str, ReplayFile] = field(init=False)
    _text_files: list[ReplayFile] = field(init=False)
    _ids: list[int] = field(init=False)
    _matrix: Any = field(init=False)
    _row: dict[int, int] = field(init=False)

    def __post_init__(self) -> None:
        self.tasks = sorted(self.tasks, key=lambda t: (t.completed_at, t.id))
        self._mapped = any(f.in_map for f in self.files)
        self._rankable = sorted((f for f in self.files if f.in_map or not self._mapped), key=lambda f: f.entry.path)
        self._rankable_paths = frozenset(f.entry.path for f in self._rankable)
        self._by_path = {f.entry.path: f for f in self._rankable}
        self._sorted_paths = sorted(self._rankable_paths)
        self._text_files = [f for f in self._rankable if f.in_map]  # the files with a document
        # The tasks with vectors, as float32 unit rows (as the embedded store keeps them).
        self._ids = [i for i, t in enumerate(self.tasks) if t.vector]
        self._row = {i: r for r, i in enumerate(self._ids)}
        rows = np.asarray([self.tasks[i].vector for i in self._ids], dtype=np.float32)
        if len(rows):
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            rows = (rows / np.where(norms == 0, 1, norms)).astype(np.float32)
        self._matrix = rows
        self._done = [t.completed_at for t in self.tasks]
        self._graphs: dict[int, _Graph] = {}

    def before(self, index: int) -> int:
        """How many tasks finished strictly before the task at ``index``."""
        return bisect.bisect_left(self._done, self._done[index])

    def _graph(self, n: int) -> _Graph:
        """The graph after the first ``n`` tasks (built once per ``n``)."""
        if n not in self._graphs:
            prefix = self.tasks[:n]
            by_file: dict[str, list[int]] = {}
            for i, task in enumerate(prefix):
                for path in task.files:
                    by_file.setdefault(path, []).append(i)
            docs = []
            for f in self._text_files:
                doc = Counter(f.terms)
                for i in by_file.get(f.entry.path, ()):
                    doc.update(prefix[i].terms)
                docs.append(doc)
            touches = {path: len(found) for path, found in by_file.items()}
            most = sorted(self._rankable_paths, key=lambda p: (-touches.get(p, 0), p))[:self.top_files]
            self._graphs[n] = _Graph(bm25.Index.build([dict.fromkeys(t.terms, 1) for t in prefix]),
                                     bm25.Index.build(docs), touches, tuple(most))
        return self._graphs[n]

    def evidence(self, index: int, *, known: int | None = None, vectors: bool = True) -> HistoryEvidence:
        """What a store would return for the task at ``index`` asked as a new
        query when only the tasks finished before it were in the graph (or only
        the first ``known`` of them)."""
        query = self.tasks[index]
        n = self.before(index) if known is None else min(known, self.before(index))
        graph = self._graph(n)
        terms = query_terms(query.terms)
        wanted = set(terms)
        tasks = best_first(
            TaskEvidence(id=t.id, score=score, completed_at=t.completed_at,
                                         matched=tuple(sorted(wanted.intersection(t.terms))), files=t.files)
            for t, score in ((self.tasks[row], score) for row, score in graph.tasks.top(terms, evidence.TASK_TOP))
        )
        text = {self._text_files[row].entry.path: score
                for row, score in graph.files.top(terms, evidence.FILE_TOP)}
        near = self._neighbours(index, n, terms) if vectors else ()
        touched = [p for t in tasks for p in t.files] + [p for n in near for p in n.files]
        chosen = choose_files(text=text, touched=touched,
                              rankable=self._rankable_paths,
                              mapped_paths=self._sorted_paths if self._mapped else None,
                              most_touched=graph.most_touched)
        files = tuple(
            FileEvidence(entry=self._by_path[p].entry, touches=graph.touches.get(p, 0),
                                         in_map=self._by_path[p].in_map, text=text.get(p, 0.0))
            for p in sorted(chosen))
        return HistoryEvidence.model_construct(n_tasks=n, tasks=tuple(tasks), files=files, mapped=self._mapped,
                                               neighbours=near)

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
            NeighbourEvidence(id=t.id, score=score, completed_at=t.completed_at,
                                              matched=tuple(sorted(wanted.intersection(t.terms))), files=t.files)
            for score, t in scored[:DENSE_VOTERS]
        )

    def gold(self, index: int) -> tuple[str, ...]:
        """The rankable files the task at ``index`` touched (what a context should have named)."""
        return tuple(p for p in self.tasks[index].files if p in self._rankable_paths)
