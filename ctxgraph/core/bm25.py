"""BM25 as Lucene scores it — the one home of text ranking in Python.

Neo4j ranks text with its Lucene full-text indexes; the embedded store, its
associative memory and ``ctxgraph tune``'s replay rank with this module, which
reproduces Lucene 9's ``BM25Similarity`` (k1 1.2, b 0.75): per query term
``idf x tf / (tf + k1 x (1 - b + b x dl / avgdl))`` with
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, the document length ``dl`` as
Lucene's norms give it back (one byte: exact below 24, then four significant
bits), summed over the query's distinct terms, in float32 as Lucene computes.
So both stores give the same scores on a freshly written graph (Lucene keeps
counting deleted documents until its segments merge, so an often rewritten
document may drift slightly there).

SQLite's FTS5 ``bm25()`` is not used: its idf, ``ln((N - df + 0.5) / (df +
0.5))`` floored at 1e-6, ranks differently — measured on the evaluation sets
it cost 0.014 of recall@5 on click and werkzeug alike — and Python's
``sqlite3`` cannot give FTS5 another ranking function.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


K1 = 1.2
B = 0.75
#: Digits a score is rounded to before it is compared, so that Lucene's float32
#: arithmetic and this module's order equal scores the same way.
SCORE_DECIMALS = 4
#: Posting entries a query reads below which :meth:`Index.top` scores every
#: row: on short lists leaving terms out saves less than finding out which.
PRUNE_POSTINGS = 20_000
#: A posting list longer than this many times the rows still in the running is
#: searched for them rather than read whole.
SEARCH_RATIO = 16
_MARGIN = 1e-6
#: Posting entries of the rarest terms read for the k-th best score so far.
SAMPLE = 2_000
#: A term in at least one document in this many also keeps its scores as one
#: dense row per document (at most 4 bytes per document, against 12 per posting
#: entry): summed whole, or read at the rows still in the running, without a
#: search of its posting list.
DENSE_SHARE = 4
#: Terms of a full-text query at most (Lucene refuses more than 1,024 clauses).
MAX_QUERY_TERMS = 64


def query_terms(terms: Iterable[str]) -> list[str]:
    """The distinct terms a full-text search uses, at most :data:`MAX_QUERY_TERMS`."""
    return list(dict.fromkeys(t for t in terms if t and not t.isspace()))[:MAX_QUERY_TERMS]


def _int4(i: int) -> int:
    bits = i.bit_length()
    if bits < 4:
        return i
    shift = bits - 4
    return ((i >> shift) & 0x07) | ((shift + 1) << 3)


def _from_int4(i: int) -> int:
    bits, shift = i & 0x07, (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


_FREE = 255 - _int4(2**31 - 1)


def lucene_length(n: int) -> int:
    """A field length as Lucene's norms give it back (``SmallFloat.intToByte4``
    then ``byte4ToInt``): exact below 24, then 4 significant bits."""
    if n < _FREE:
        return n
    return _FREE + _from_int4(_int4(n - _FREE))


def idf(n: int, df: int) -> float:
    """Lucene's BM25 inverse document frequency of a term in ``df`` of ``n`` documents."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


@dataclass
class Index:
    """An inverted index of documents (each a bag of terms) scored by BM25."""

    postings: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]  # term -> (doc rows, tf)
    inverse: npt.NDArray[np.float32]  # per document: 1 / (k1 x (1 - b + b x dl / avgdl))
    count: int  # documents having at least one term
    size: int  # rows (documents, empty ones included)
    _cache: dict[str, _Impacts] = field(
        default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, docs: Sequence[Mapping[str, int]]) -> Index:
        """Index ``docs``, each a mapping of its terms to their frequencies."""
        import numpy as np

        rows: dict[str, list[int]] = {}
        freqs: dict[str, list[int]] = {}
        lengths = np.zeros(len(docs), dtype=np.float64)
        count = total = 0
        for i, doc in enumerate(docs):
            length = sum(doc.values())
            if not length:
                continue
            count += 1
            total += length
            lengths[i] = lucene_length(length)
            for term, tf in doc.items():
                rows.setdefault(term, []).append(i)
                freqs.setdefault(term, []).append(tf)
        postings = {t: (np.asarray(rows[t], dtype=np.int64), np.asarray(freqs[t], dtype=np.float32)) for t in rows}
        return cls(postings, _inverse(lengths, count, total), count, len(docs))

    @classmethod
    def of_counts(cls, terms: Sequence[str], docs: Sequence[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]],
                  ) -> Index:
        """:meth:`build` of documents given as (term ids, their frequencies),
        each id a position in ``terms``: the same index, built by sorting the
        ids (numpy) instead of one dictionary step per term of every document
        (what a store rebuilding its index after every write needs)."""
        import numpy as np

        sizes = np.asarray([len(ids) for ids, _ in docs], dtype=np.int64)
        if not len(docs) or not sizes.sum():
            return cls.build([{} for _ in docs])
        ids = np.concatenate([d[0] for d in docs])
        tfs = np.concatenate([d[1] for d in docs])
        rows = np.repeat(np.arange(len(docs), dtype=np.int64), sizes)
        order = np.argsort(ids, kind="stable")  # within a term, documents stay in order (as build's appends)
        ids, tfs, rows = ids[order], tfs[order], rows[order]
        cuts = [0, *(np.flatnonzero(np.diff(ids)) + 1).tolist(), len(ids)]
        postings = {terms[int(ids[a])]: (rows[a:b], tfs[a:b].astype(np.float32)) for a, b in itertools.pairwise(cuts)}
        totals = [int(d[1].sum()) for d in docs]
        lengths = np.asarray([lucene_length(n) if n else 0 for n in totals], dtype=np.float64)
        count = sum(1 for n in totals if n)
        return cls(postings, _inverse(lengths, count, sum(totals)), count, len(docs))

    @classmethod
    def of_words(cls, docs: Iterable[Sequence[str]]) -> Index:
        """Index documents given as sequences of terms (repeats count)."""
        out = []
        for words in docs:
            tf: dict[str, int] = {}
            for w in words:
                tf[w] = tf.get(w, 0) + 1
            out.append(tf)
        return cls.build(out)

    def _impacts(self, term: str) -> _Impacts | None:
        """A term's posting rows, each row's score for the term, the largest and
        smallest of them (computed on first use and kept: the index is rebuilt,
        not updated)."""
        import numpy as np

        found = self._cache.get(term)
        if found is None:
            posting = self.postings.get(term)
            if posting is None:
                return None
            rows, tf = posting
            impact = _impact(idf(self.count, len(rows)), tf, self.inverse[rows])
            dense = None
            if len(rows) * DENSE_SHARE >= self.size:
                dense = np.zeros(self.size, dtype=np.float32)
                dense[rows] = impact
            found = self._cache[term] = _Impacts(rows, impact, float(impact.max()), float(impact.min()), dense)
        return found

    def scores(self, terms: Iterable[str]) -> npt.NDArray[np.float64]:
        """Every document's score against the distinct ``terms`` (0 where none is found)."""
        import numpy as np

        out = np.zeros(self.size, dtype=np.float64)  # Lucene sums its clauses' float32 scores in double
        for term in dict.fromkeys(terms):
            found = self._impacts(term)
            if found is None:
                continue
            if found.dense is not None:
                out += found.dense
            else:
                out[found.rows] += found.impact
        return out.astype(np.float32).astype(np.float64)

    def top(self, terms: Iterable[str], k: int, *, ties: bool = False) -> list[tuple[int, float]]:
        """The ``k`` best (row, score) pairs with a positive score, rounded to
        :data:`SCORE_DECIMALS`, best first; ties go to the lower row. Equal to
        ranking :meth:`scores`; on long posting lists only the rows that can
        reach the ``k`` best are scored (:func:`_pruned`). ``ties``: also every
        row whose rounded score equals the ``k``-th's, for a caller that orders
        equal scores its own way (:func:`best`)."""
        import numpy as np

        distinct = list(dict.fromkeys(terms))
        found = [f for f in (self._impacts(t) for t in distinct) if f is not None]
        if k > 0 and sum(len(f.rows) for f in found) >= PRUNE_POSTINGS and _order_free(found):
            rows, values = _pruned(found, k, self.size)
        else:
            scores = self.scores(distinct)
            rows = np.flatnonzero(scores > 0)
            values = scores[rows]
        if len(rows) > k:
            part = np.argpartition(-values, k - 1)[:k]
            # every row that may round to the k-th's score or above
            chosen = values >= values[part].min() - 10.0 ** -SCORE_DECIMALS
            rows, values = rows[chosen], values[chosen]
        ranked = sorted(((int(i), round(float(v), SCORE_DECIMALS)) for i, v in zip(rows, values, strict=True)),
                        key=lambda rs: (-rs[1], rs[0]))
        if ties and len(ranked) > k > 0:
            return [rs for rs in ranked if rs[1] >= ranked[k - 1][1]]
        return ranked[:k]


def _inverse(lengths: npt.NDArray[np.float64], count: int, total: int) -> npt.NDArray[np.float32]:
    """Per document ``1 / (k1 x (1 - b + b x dl / avgdl))`` in float32, as Lucene
    keeps it: ``lengths`` as :func:`lucene_length` gives them, ``avgdl`` the
    ``total`` length over the ``count`` documents."""
    import numpy as np

    avgdl = np.float32(total / count) if count else np.float32(1)
    inverse = np.float32(1) / (np.float32(K1) * (np.float32(1 - B) + np.float32(B) * lengths.astype(np.float32)
                                                 / avgdl))
    return inverse.astype(np.float32)


def _impact(weight: float, tf: npt.NDArray[np.float32], inverse: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """A term's score in documents of these frequencies and inverse norms:
    Lucene's BM25Scorer, ``w - w / (1 + tf / norm)`` (``w x tf / (tf + norm)``), in float32."""
    import numpy as np

    w = np.float32(weight)
    return (w - w / (np.float32(1) + tf * inverse)).astype(np.float32)


def score_documents(terms: Iterable[str], docs: Sequence[tuple[Mapping[str, int], int]], *,
                    count: int, total: int, df: Mapping[str, int]) -> list[float]:
    """BM25 of documents, each given as (its query terms' frequencies, its
    length), against the distinct ``terms``, in a corpus described by its
    statistics: ``count`` documents (with a term), ``total`` length, and per
    term the documents having it (``df``). The same arithmetic, in the same
    order, as :meth:`Index.scores` for those documents in an index of those
    statistics, rounded to :data:`SCORE_DECIMALS`: how a store that keeps the
    statistics itself scores the candidates a search engine found."""
    import numpy as np

    lengths = np.asarray([lucene_length(n) for _, n in docs], dtype=np.float64)
    inverse = _inverse(lengths, count, total)
    out = np.zeros(len(docs), dtype=np.float64)
    # each term's documents (in document order) and frequencies, read from the
    # documents' few query terms rather than by looking every term up in every one
    found: dict[str, tuple[list[int], list[int]]] = {term: ([], []) for term in terms}
    for i, (tf, _) in enumerate(docs):
        for term, n in tf.items():
            if n and term in found:
                rows, freqs = found[term]
                rows.append(i)
                freqs.append(n)
    for term, (rows, freqs) in found.items():
        if not rows or not df.get(term):
            continue
        out[rows] += _impact(idf(count, df[term]), np.asarray(freqs, dtype=np.float32), inverse[rows])
    return [round(float(v), SCORE_DECIMALS) for v in out.astype(np.float32).astype(np.float64)]


class _Impacts(NamedTuple):
    rows: npt.NDArray[np.int64]
    impact: npt.NDArray[np.float32]
    high: float
    low: float
    dense: npt.NDArray[np.float32] | None  # every row's score (0 where absent), for a common term


def _order_free(found: Sequence[_Impacts]) -> bool:
    """Whether any order of summing these terms' float32 scores in double gives
    the same sums: every score is a multiple of the smallest one's unit in the
    last place (2^(e - 23) for 2^e <= score), so the sums are exact while below
    2^52 of those units."""
    low = min(f.low for f in found)
    return low > 0 and sum(f.high for f in found) < 2.0 ** (math.floor(math.log2(low)) - 23 + 52)


def _pruned(found: list[_Impacts], k: int, size: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """MaxScore: the rows (and exact scores) that can be among the ``k`` best.
    The terms are added most valuable first. Once the rest together could not
    lift a row not seen yet to a score the ``k`` best reach (the ``k``-th best
    so far among the rows of the rarer terms read), only the rows seen that
    still could get there are kept, and the long posting lists left (the words
    in nearly every document: ``so``, ``test``) are searched for those rows
    instead of read whole."""
    import numpy as np

    found = sorted(found, key=lambda f: -f.high)
    partial = np.zeros(size, dtype=np.float64)
    left, added = sum(f.high for f in found), 0.0
    read, rest = 0, sum(len(f.rows) for f in found)
    rows: npt.NDArray[np.int64] | None = None
    sample: list[npt.NDArray[np.int64]] = []  # the rows of the rarer terms read, for the k-th best
    tail, floor = len(found), math.inf
    for i, f in enumerate(found):
        if rows is not None and (f.dense is not None or len(f.rows) > SEARCH_RATIO * len(rows)):
            tail = i
            break
        if f.dense is not None:
            partial += f.dense
        else:
            partial[f.rows] += f.impact
        left, added = left - f.high, added + f.high
        read, rest = read + len(f.rows), rest - len(f.rows)
        if rows is None:
            if not sample or read <= SAMPLE:
                sample.append(f.rows)
            # no look while no score could pass what the rest may add, while
            # reading the rest costs less than looking, or while the rest may add
            # more than the k-th best at the last look (scores only grow)
            if added <= left or rest < read or left >= floor:
                continue
            seen = _distinct(np.concatenate(sample)) if len(sample) > 1 else sample[0]
        else:
            seen = rows
        if len(seen) < k:
            continue
        values = partial[seen]
        # (the float sums; and a unit of the rounding: the rows that round to the k-th's score)
        kth = float(np.partition(values, len(values) - k)[len(values) - k]) * (1 - _MARGIN) - 10.0 ** -SCORE_DECIMALS
        if left >= kth:
            floor = kth
        elif rows is None:
            rows = np.flatnonzero(partial >= kth - left)
        else:
            rows = seen[values + left >= kth]
    if rows is None:
        rows = np.flatnonzero(partial)
        return rows, partial[rows].astype(np.float32).astype(np.float64)
    total = partial[rows]
    for f in found[tail:]:
        if f.dense is not None:
            total += f.dense[rows]
            continue
        at = np.minimum(np.searchsorted(f.rows, rows), len(f.rows) - 1)
        total += np.where(f.rows[at] == rows, f.impact[at], np.float32(0))
    return rows, total.astype(np.float32).astype(np.float64)


def _distinct(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The distinct ``rows``, sorted (``np.unique`` hashes, ten times slower on a few thousand)."""
    import numpy as np

    rows = np.sort(rows)
    keep = np.empty(len(rows), dtype=bool)
    keep[:1] = True
    np.not_equal(rows[1:], rows[:-1], out=keep[1:])
    return rows[keep]


__all__ = ["K1", "PRUNE_POSTINGS", "SCORE_DECIMALS", "SEARCH_RATIO", "B", "Index", "idf", "lucene_length",
           "score_documents"]
