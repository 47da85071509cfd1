"""How much of the history a store returns for one query.

``ctxgraph.compute.ranking`` fuses the evidence per file; the stores rank the
text (BM25: Lucene's full-text indexes on Neo4j, :mod:`ctxgraph.core.bm25` on
the embedded store) and return a bounded part of it:

- the :data:`TASK_TOP` finished tasks whose terms score best against the
  query's (each a document of its distinct terms), with their scores: the
  :data:`VOTERS`, which vote for the files they touched (both stores score
  them with the same arithmetic and cut them in the one order of
  :func:`best_first`, so no margin beyond the voters is kept);
- the :data:`FILE_TOP` rankable files whose documents — their own terms plus
  the terms of every finished task that touched them — score best, with their
  scores (a file's *text*); besides them, without a text score, the files the
  returned tasks and the neighbours by embedding touched (and, for a module
  that became a package, the package's files) and the most touched files
  (their change-frequency prior);
- with the query's embedding, the :data:`DENSE_VOTERS` finished tasks nearest
  to it.

So a context costs a few index lookups however large the history: the
database finds the best documents, nothing walks every matched task.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Protocol, TypeVar

from ctxgraph.core.paths import successors

#: The most similar matched tasks that vote for their files (``compute.ranking``).
VOTERS = 20
#: The finished tasks nearest to the query by embedding that vote
#: (``compute.ranking``); a store returns this many neighbours.
DENSE_VOTERS = 10
#: Matched tasks a store returns: the voters. (It was twice as many while the
#: stores could break equal scores differently; the files only the extra
#: tasks touched changed no figure of the five evaluation sets, and cost a
#: 1M-node Neo4j context about 2 ms.)
TASK_TOP = VOTERS
#: Files a store returns with their text score.
FILE_TOP = 100


class _Scored(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def completed_at(self) -> str: ...


S = TypeVar("S", bound=_Scored)


def best_first(found: Iterable[S]) -> list[S]:
    """Scored tasks best first; equal scores go to the newer task, then to the
    smaller id. The stores cut the :data:`TASK_TOP` best in this order (equal
    scores at the cutoff included before the cut), so both choose the same."""
    out = sorted(found, key=lambda t: t.id)
    out.sort(key=lambda t: t.completed_at, reverse=True)
    out.sort(key=lambda t: t.score, reverse=True)
    return out


def best_files(scored: Iterable[tuple[str, float]], k: int) -> dict[str, float]:
    """The ``k`` best (path, score) pairs, best first: equal scores go to the
    smaller path (the stores cut the :data:`FILE_TOP` best files in this order)."""
    return dict(sorted(scored, key=lambda ps: (-ps[1], ps[0]))[:k])


def choose_files(*, text: Iterable[str], touched: Iterable[str], rankable: Collection[str],
                 mapped_paths: Sequence[str] | None, most_touched: Iterable[str]) -> set[str]:
    """The files a store returns (see the module's docstring): the best by
    ``text``, the rankable ``touched`` ones (by the returned tasks and the
    neighbours) and, for a touched module gone from the map, its package's
    files (``mapped_paths``: the map's paths, sorted; None: no map loaded),
    and the ``most_touched``."""
    chosen = {p for p in text if p in rankable}
    gone = []
    for path in touched:
        if path in rankable:
            chosen.add(path)
        else:
            gone.append(path)
    if mapped_paths is not None:
        for kids in successors(gone, mapped_paths).values():
            chosen.update(kids)
    chosen.update(most_touched)
    return chosen


__all__: Sequence[str] = ("DENSE_VOTERS", "FILE_TOP", "TASK_TOP", "VOTERS", "best_files", "best_first",
                          "choose_files")
