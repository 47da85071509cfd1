"""The history's text ranking on Neo4j, exact: Lucene finds, the graph's
statistics score.

Lucene's BM25 counts the documents a write replaced until its segments merge
(their terms in ``docFreq``, their lengths in the average), so after a real
write history its scores drift from the embedded store's, and which of two
near-equal documents it ranks first depends on what was rewritten. Here
Lucene's full-text indexes only find the candidates (``history_text.cypher``);
each candidate is scored again by :func:`ctxgraph.core.bm25.score_documents`
from its document (length, the query terms' frequencies) and the statistics
the store keeps exact at write time (``tasks_doc``, ``files_refresh``), and
the best are cut in the one order both stores use (``core.evidence``).

The candidates are the ``FETCH`` x as many as wanted that Lucene ranks best.
They hold the exact best unless a document Lucene ranked lower scores, with
exact statistics, at least the last one chosen: so the cut is checked —
every document not fetched has a Lucene score at most the lowest fetched,
and its exact score is taken to be at most that times the largest ratio of
exact to Lucene score among the candidates, with ``SPREAD`` to spare (the
drift of one document's score against another's) — and when the check fails
(equal or near-equal scores at the cut), ``GROWTH`` x as many are fetched
again, until it passes, Lucene has no more, or ``MOST`` x as many as wanted
were fetched: then the best of those is the answer (the only case where the
two stores may choose differently among near-equal scores). (A graph written before the
statistics were kept is counted on connect; opened read-only, it is ranked by
Lucene's own scores.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxgraph.core import evidence
from ctxgraph.core.bm25 import SCORE_DECIMALS, score_documents

#: Candidates fetched per result wanted at first, and the growth when a cut fails its check.
FETCH = 2
GROWTH = 4
#: At most this many candidates per result wanted.
MOST = 8
#: How much more than the candidates' largest exact-to-Lucene ratio a
#: document not fetched is assumed to be able to gain.
SPREAD = 0.02
_UNIT = 10.0 ** -SCORE_DECIMALS


@dataclass(frozen=True)
class TaskHit:
    id: str
    score: float
    completed_at: str
    matched: tuple[str, ...]


@dataclass
class TextTop:
    """The best finished tasks (``core.evidence.best_first`` order, at most
    ``TASK_TOP``; None: the cut failed its check) and the best files by text
    (path -> score, at most ``FILE_TOP``; None: likewise), of one ``history_text`` row."""

    tasks: list[TaskHit] = field(default_factory=list)
    files: dict[str, float] = field(default_factory=dict)
    #: Whether each cut passed its check (or can fetch no more: ``MOST``).
    tasks_done: bool = True
    files_done: bool = True


def text_top(row: dict[str, Any], terms: Sequence[str], task_fetch: int, file_fetch: int) -> TextTop:
    """The exact best tasks and files for the distinct query ``terms`` among
    the candidates of a ``history_text`` row fetched with these limits."""
    tasks, tasks_done = _best_tasks(row, terms, task_fetch)
    files, files_done = _best_files(row, terms, file_fetch)
    return TextTop(tasks=tasks, files=files,
                   tasks_done=tasks_done or task_fetch >= MOST * evidence.TASK_TOP,
                   files_done=files_done or file_fetch >= MOST * evidence.FILE_TOP)


def _best_tasks(row: dict[str, Any], terms: Sequence[str], fetched: int) -> tuple[list[TaskHit], bool]:
    found = row["tasks"]
    count, total = row["task_corpus"]
    df = {name: task_df for name, task_df, _ in row["df"]}
    scores = score_documents(terms, [(dict.fromkeys(t["matched"], 1), t["length"]) for t in found],
                             count=count, total=total, df=df) if count else _lucene(found)
    hits = [TaskHit(t["id"], s, t["completed_at"], tuple(sorted(set(t["matched"]))))
            for t, s in zip(found, scores, strict=True) if s > 0]
    best = evidence.best_first(hits)[:evidence.TASK_TOP]
    return best, _complete(found, scores, fetched, best[-1].score if len(best) == evidence.TASK_TOP else None)


def _best_files(row: dict[str, Any], terms: Sequence[str], fetched: int) -> tuple[dict[str, float], bool]:
    found = row["text_files"]
    count, total = row["file_corpus"]
    df = {name: file_df for name, _, file_df in row["df"]}
    scores = score_documents(terms, [(Counter(f["hits"]), f["length"]) for f in found],
                             count=count, total=total, df=df) if count else _lucene(found)
    best = evidence.best_files(((f["path"], s) for f, s in zip(found, scores, strict=True) if s > 0),
                               evidence.FILE_TOP)
    last = min(best.values()) if len(best) == evidence.FILE_TOP else None
    return best, _complete(found, scores, fetched, last)


def _lucene(found: Sequence[dict[str, Any]]) -> list[float]:
    """Lucene's own scores, rounded: a graph written before the statistics were
    kept and opened read-only (so not recounted) has no Corpus node."""
    return [round(float(f["lucene"]), SCORE_DECIMALS) for f in found]


def _complete(found: Sequence[dict[str, Any]], scores: Sequence[float], fetched: int, last: float | None) -> bool:
    """Whether the candidates hold every document that could score ``last``
    (the lowest score cut in; None: fewer than wanted, so any) or more."""
    if len(found) < fetched:
        return True  # Lucene had no more
    if last is None:
        return False
    lowest = min(float(f["lucene"]) for f in found)
    ratio = max(s / float(f["lucene"]) for f, s in zip(found, scores, strict=True) if float(f["lucene"]) > 0)
    return lowest * ratio * (1 + SPREAD) < last - _UNIT


__all__ = ["FETCH", "GROWTH", "MOST", "SPREAD", "TaskHit", "TextTop", "text_top"]
