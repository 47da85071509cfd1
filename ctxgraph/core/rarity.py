"""Tag rarity: how much one matched tag says about an item.

A tag on a few items (a project's own nouns) says more than one on a tenth of
the graph (``api``, ``cache``), so the tag queries and the relevance in
``ctxgraph.compute`` weight each matched tag by an idf normalized to (0, 1]:
``ln(1 + n / df) / ln(1 + n)``, ``df`` the tag's degree (items tagged with
it) and ``n`` the items that can carry tags (tasks and knowledge). Two rare
matched tags then outrank several common ones, which a count of matched tags
could not do (benchmarks/README.md, finding 3).

This module is the one place the weight is computed: both stores read the
tags' degrees (kept at write time: SQLite triggers, Neo4j's degree store) and
pass the weights from here into their tag queries (``weighted``), which only
sum and order them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

#: Digits a weight (and a sum of weights) is rounded to, in Python, SQL and Cypher
#: alike, so that the stores order equal sums the same way.
DIGITS = 9


def tag_weight(df: int, total: int) -> float:
    """The weight of one matched tag of degree ``df`` among ``total`` taggable items.

    1.0 for a tag on at most one item (or when nothing is known about the graph);
    falls towards 0 as the tag covers the whole graph.
    """
    if df <= 1 or total <= 1:
        return 1.0
    n = max(total, df)
    return round(math.log(1.0 + n / df) / math.log(1.0 + n), DIGITS)


def tag_weights(dfs: Iterable[tuple[str, int]], total: int) -> dict[str, float]:
    """``tag_weight`` of every (tag, degree) pair."""
    return {tag: tag_weight(df, total) for tag, df in dfs}


def weighted(tags: Iterable[str], dfs: Mapping[str, int], total: int, max_df: int = 0) -> list[tuple[str, float]]:
    """(tag, weight) of the ``tags`` known to the graph (``dfs``: their degrees)
    and not above the degree cap ``max_df`` (0: no cap), in the given order,
    each once: what a tag query sums per item."""
    return [(t, tag_weight(dfs[t], total)) for t in dict.fromkeys(tags)
            if t in dfs and (max_df <= 0 or dfs[t] <= max_df)]


__all__ = ["DIGITS", "tag_weight", "tag_weights", "weighted"]
