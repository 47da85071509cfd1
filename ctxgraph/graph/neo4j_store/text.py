"""The history's text ranking on Neo4j, exact: Lucene finds, the graph's
statistics score.

Lucene's BM25 counts the documents a write replaced until its segments merge
(their terms in ``docFreq``, their lengths in the average), so after a real
write history its scores drift from the embedded store's, and which of two
near-equal documents it ranks first depends on what was rewritten. Here
Lucene's full-text indexes only find the candidates (``history_text_tasks.cypher``
and ``history_text_files.cypher``, run side by side); each candidate is scored
again by :func:`ctxgraph.core.bm25.score_documents` from its document (length,
the query terms' frequencies) and the statistics the store keeps exact at
write time (``tasks_doc``, ``files_refresh``), and the best are cut in the one
order both stores use (``core.evidence``).

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
    ``TASK_TOP``) and the best files by text (path -> score, at most
    ``FILE_TOP``) of one query."""

    tasks: list[TaskHit] = field(default_factory=list)
    files: dict[str, float] = field(default_factory=dict)


def task_top(row: dict[str, Any], terms: Sequence[str], fetched: int) -> tuple[list[TaskHit], bool]:
    """The exact best finished tasks for the distinct query ``terms`` among
    the candidates of a ``history_text_tasks`` row fetched with this limit,
    and whether the cut passed its check (or can fetch no more: ``MOST``)."""
    found = row["found"]
    count, total = row["corpus"]
    scores = score_documents(terms, [(dict.fromkeys(t["matched"], 1), t["length"]) for t in found],
                             count=count, total=total, df=dict(row["df"])) if count else _lucene(found)
    hits = [TaskHit(t["id"], s, t["completed_at"], tuple(sorted(set(t["matched"]))))
            for t, s in zip(found, scores, strict=True) if s > 0]
    best = evidence.best_first(hits)[:evidence.TASK_TOP]
    last = best[-1].score if len(best) == evidence.TASK_TOP else None
    return best, _complete(found, scores, fetched, last) or fetched >= MOST * evidence.TASK_TOP


def file_top(row: dict[str, Any], terms: Sequence[str], fetched: int) -> tuple[dict[str, float], bool]:
    """The exact best files (path -> score) for the distinct query ``terms``
    among the candidates of a ``history_text_files`` row fetched with this
    limit, and whether the cut passed its check (or can fetch no more)."""
    found = row["found"]
    count, total = row["corpus"]
    scores = score_documents(terms, [(Counter(f["hits"]), f["length"]) for f in found],
                             count=count, total=total, df=dict(row["df"])) if count else _lucene(found)
    best = evidence.best_files(((f["path"], s) for f, s in zip(found, scores, strict=True) if s > 0),
                               evidence.FILE_TOP)
    last = min(best.values()) if len(best) == evidence.FILE_TOP else None
    return best, _complete(found, scores, fetched, last) or fetched >= MOST * evidence.FILE_TOP


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


__all__ = ["FETCH", "GROWTH", "MOST", "SPREAD", "TaskHit", "TextTop", "file_top", "task_top"]
