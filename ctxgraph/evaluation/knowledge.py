"""How good the imported knowledge a context shows is, measured against the
gold files (issue 44): an item (an ADR's decision, a code note's gotcha) is
*anchored in a gold file* when the file it was read from is one of the files
the query's real commit changed.

For each query, the items a context shows are compared with as many items
picked from the same imported ones by BM25 over their text (the evaluation's
``bm25`` baseline: ``bm25s`` and its tokenizer), so both precisions have the
same denominator. Figures per system:

- ``shown``, ``in_gold``: items shown over all queries, and those anchored in
  a gold file;
- ``precision``: ``in_gold / shown`` (micro); ``macro``: the mean over the
  queries that show any;
- ``hit``: the share of queries with at least one item anchored in a gold file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxgraph.evaluation.baselines import tokenize


def precision(picked: Sequence[Sequence[str]], gold: Sequence[set[str]]) -> dict[str, Any]:
    """The figures of the module's text for the files of the items ``picked``
    per query (``gold``: each query's gold files)."""
    shown = sum(len(p) for p in picked)
    hits = [sum(1 for path in p if path in g) for p, g in zip(picked, gold, strict=True)]
    with_any = [h / len(p) for p, h in zip(picked, hits, strict=True) if p]
    return {"shown": shown, "in_gold": sum(hits), "precision": round(sum(hits) / shown, 3) if shown else None,
            "macro": round(sum(with_any) / len(with_any), 3) if with_any else None,
            "hit": round(sum(1 for h in hits if h) / len(gold), 3) if gold else None}


@dataclass
class KnowledgeScore:
    """The imported items (id -> the file each was read from, and its text),
    then one :meth:`add` per query."""

    files: Mapping[str, str]
    texts: Mapping[str, str]
    ours: list[list[str]] = field(default_factory=list)
    theirs: list[list[str]] = field(default_factory=list)
    gold: list[set[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        import bm25s

        self._order = sorted(self.files)
        self._model = bm25s.BM25()
        if self._order:
            self._model.index(tokenize([self.texts.get(i, "") for i in self._order]), show_progress=False)

    def add(self, query: str, shown: Sequence[str], gold: Sequence[str]) -> None:
        """One query: its text, the ids of the items its context shows (those
        not imported are left out) and its gold files."""
        picked = [self.files[i] for i in shown if i in self.files]
        self.ours.append(picked)
        self.theirs.append(self._bm25(query, len(picked)))
        self.gold.append(set(gold))

    def _bm25(self, query: str, k: int) -> list[str]:
        """The files of the ``k`` items BM25 scores best for ``query`` (id breaking ties)."""
        if not k or not self._order:
            return []
        tokens = tokenize([query])[0]
        scores = self._model.get_scores(tokens) if tokens else [0.0] * len(self._order)
        ranked = sorted((-float(s), i) for s, i in zip(scores, self._order, strict=True))
        return [self.files[i] for _, i in ranked[:k]]

    def as_dict(self) -> dict[str, Any]:
        return {"items": len(self.files), "queries_shown": sum(1 for p in self.ours if p),
                "ctxgraph": precision(self.ours, self.gold), "bm25": precision(self.theirs, self.gold)}


__all__ = ["KnowledgeScore", "precision"]
