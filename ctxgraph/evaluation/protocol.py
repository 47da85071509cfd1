"""The arithmetic of the retrieval evaluation (``ctxgraph eval``, docs/evaluation.md). Pure.

A run renders, for each query, one context per system; what counts is the
list of file paths the rendered text names, in order of first appearance.

* :func:`extract_paths` reads that list: every known path (context-map files
  and every file a history handoff touched) found in the text as a whole
  path, ordered by first position, each once.
* :func:`recall_at` is the share of a query's gold files among the first ``k``
  distinct files named (every file named when ``k`` is ``None``). The
  denominator is every distinct gold file, including gold files the context
  map does not hold (they can only be found when a history handoff touched
  them).
* :func:`is_skipped`: a query none of whose gold files is in the context map
  is not scored at all; it is only counted.
* :func:`percentile` is the nearest-rank percentile: the smallest value with
  at least ``p`` percent of the values at or below it —
  ``sorted(values)[ceil(p / 100 * n) - 1]``. So p50 of ``[1, 2, 3, 4]`` is 2,
  p95 of 20 values is the 19th smallest, and of fewer than 20 values the
  largest. Always one of the measured values, never an interpolation.
* :func:`truncate_to_budget` cuts a rendered context to its longest run of
  whole leading lines whose estimated tokens fit a budget.
* :func:`stale_share` is the share of the first ``k`` distinct files named
  that do not exist at the query's snapshot (not in the set's context map,
  the snapshot's file list): files the history touched that were deleted or
  renamed since (issue 32; 0 for a run given no snapshot).
* :func:`summarize` turns the per-query outcomes of one system into its
  figures; means over no queries are 0.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from ctxgraph.core.tokens import estimate_tokens

#: Characters that may continue a path: a match must not touch one of these
#: on either side (a ``.`` after a match is fine unless a word follows it, so
#: ``core.py.`` at the end of a sentence still names ``core.py``).
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/.")


def distinct(paths: Iterable[str]) -> list[str]:
    """``paths`` without repeats, first occurrence kept."""
    return list(dict.fromkeys(paths))


def _whole_at(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` is not part of a longer path."""
    if start > 0 and text[start - 1] in _PATH_CHARS:
        return False
    if end < len(text):
        after = text[end]
        if after == ".":
            return not (end + 1 < len(text) and (text[end + 1].isalnum() or text[end + 1] in "_-/"))
        if after in _PATH_CHARS:
            return False
    return True


def first_position(text: str, path: str) -> int | None:
    """Where ``path`` first appears in ``text`` as a whole path, else ``None``.

    ``src/a.py`` is not found inside ``lib/src/a.py`` nor ``src/a.py.orig``.
    """
    if not path:
        return None
    start = text.find(path)
    while start != -1:
        if _whole_at(text, start, start + len(path)):
            return start
        start = text.find(path, start + 1)
    return None


def extract_paths(text: str, known: Iterable[str]) -> list[str]:
    """The known paths ``text`` names, in order of first appearance, each once."""
    found: list[tuple[int, int, str]] = []
    for path in distinct(known):
        pos = first_position(text, path)
        if pos is not None:
            # Two paths cannot start at the same place as whole paths unless one
            # is the other; the longer first keeps the order total anyway.
            found.append((pos, -len(path), path))
    found.sort()
    return [path for _, _, path in found]


def is_skipped(gold: Sequence[str], context_map: Iterable[str]) -> bool:
    """True when no gold file is in the context map (the query is not scored)."""
    in_map = set(context_map)
    return not any(g in in_map for g in gold)


def recall_at(named: Sequence[str], gold: Sequence[str], k: int | None = None) -> float:
    """Share of the distinct gold files among the first ``k`` distinct files named."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    shown = distinct(named)
    if k is not None:
        shown = shown[:k]
    return len(wanted.intersection(shown)) / len(wanted)


def stale_share(named: Sequence[str], snapshot: Collection[str], k: int = 5) -> float:
    """Share of the first ``k`` distinct files named that are not in ``snapshot``."""
    shown = distinct(named)[:k]
    return sum(1 for p in shown if p not in snapshot) / len(shown) if shown else 0.0


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (0 < p <= 100); 0.0 for no values."""
    if not 0 < p <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {p}")
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = math.ceil(p / 100 * len(ordered))
    return ordered[max(rank, 1) - 1]


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def truncate_to_budget(text: str, budget: int | None) -> str:
    """The longest run of whole leading lines of ``text`` whose estimated
    tokens are at most ``budget`` (``None``: ``text`` unchanged)."""
    if budget is None or estimate_tokens(text) <= budget:
        return text
    lines = text.splitlines(keepends=True)
    lo, hi = 0, len(lines)  # lines[:lo] fits; lines[:hi + 1] is the first candidate known not to
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens("".join(lines[:mid])) <= budget:
            lo = mid
        else:
            hi = mid - 1
    # The estimator is not strictly monotonic for mixed CJK text: step back if needed.
    while lo > 0 and estimate_tokens("".join(lines[:lo])) > budget:
        lo -= 1
    return "".join(lines[:lo])


@dataclass(frozen=True)
class QueryOutcome:
    """One system's answer to one scored query."""

    query_id: str
    named: tuple[str, ...]
    gold: tuple[str, ...]
    tokens: int
    ms: float


@dataclass(frozen=True)
class SystemMetrics:
    """One system's figures over the scored queries of a set."""

    recall_at_5: float
    recall_at_10: float
    recall: float
    tokens: float
    max_tokens: int
    p50_ms: float
    p95_ms: float
    skipped: int
    #: mean share of the first 5 files named that are not at the snapshot (:func:`stale_share`)
    stale_at_5: float = 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "recall_at_5": round(self.recall_at_5, 4),
            "recall_at_10": round(self.recall_at_10, 4),
            "recall": round(self.recall, 4),
            "tokens": round(self.tokens, 1),
            "max_tokens": self.max_tokens,
            "p50_ms": round(self.p50_ms, 2),
            "p95_ms": round(self.p95_ms, 2),
            "skipped": self.skipped,
            "stale_at_5": round(self.stale_at_5, 4),
        }


def summarize(outcomes: Sequence[QueryOutcome], skipped: int,
              snapshot: Collection[str] | None = None) -> SystemMetrics:
    """Means of recall@5, recall@10, recall and tokens; the largest context;
    p50/p95 of the compute times; the skipped count as given; with
    ``snapshot`` (the files at the queries' snapshot), the mean stale share@5."""
    return SystemMetrics(
        recall_at_5=mean([recall_at(o.named, o.gold, 5) for o in outcomes]),
        recall_at_10=mean([recall_at(o.named, o.gold, 10) for o in outcomes]),
        recall=mean([recall_at(o.named, o.gold) for o in outcomes]),
        tokens=mean([o.tokens for o in outcomes]),
        max_tokens=max((o.tokens for o in outcomes), default=0),
        p50_ms=percentile([o.ms for o in outcomes], 50),
        p95_ms=percentile([o.ms for o in outcomes], 95),
        skipped=skipped,
        stale_at_5=mean([stale_share(o.named, snapshot) for o in outcomes]) if snapshot is not None else 0.0,
    )


__all__ = [
    "QueryOutcome",
    "SystemMetrics",
    "distinct",
    "extract_paths",
    "first_position",
    "is_skipped",
    "mean",
    "percentile",
    "recall_at",
    "stale_share",
    "summarize",
    "truncate_to_budget",
]
