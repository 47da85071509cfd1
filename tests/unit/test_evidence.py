"""The history's text ranking (ctxgraph.core.bm25, Lucene's BM25) and what a
store returns of it (ctxgraph.core.evidence)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ctxgraph.core import bm25
from ctxgraph.core.evidence import best_first, choose_files
from ctxgraph.core.models import TaskEvidence


def _lucene(tf: int, df: int, n: int, length: int, avg: float) -> float:
    """One term's score as Lucene 9's BM25Similarity computes it (no (k1 + 1) factor)."""
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * bm25.lucene_length(length) / avg))


def test_lengths_are_exact_below_24_then_keep_four_significant_bits() -> None:
    assert [bm25.lucene_length(n) for n in range(24)] == list(range(24))
    assert bm25.lucene_length(1_000) != 1_000
    for n in (24, 100, 1_000, 123_456):
        assert abs(bm25.lucene_length(n) - n) / n < 0.125  # 1 + 3 explicit bits of mantissa
    assert bm25.lucene_length(100) == bm25.lucene_length(101)  # one byte holds both


def test_scores_are_lucenes_bm25_summed_over_distinct_query_terms() -> None:
    docs = [{"cookie": 2, "parse": 1}, {"cookie": 1}, {"header": 3, "x": 30}, {}]
    index = bm25.Index.build(docs)
    avg = (3 + 1 + 33) / 3  # the empty document is not counted
    got = index.scores(["cookie", "header", "cookie", "absent"])
    assert abs(got[0] - _lucene(2, 2, 3, 3, avg)) < 1e-5
    assert abs(got[1] - _lucene(1, 2, 3, 1, avg)) < 1e-5
    assert abs(got[2] - _lucene(3, 1, 3, 33, avg)) < 1e-5  # 33 tokens: Lucene's one-byte length
    assert got[3] == 0.0
    # the best with a positive score, rounded, best first; nothing else
    top = index.top(["cookie", "header"], 10)
    assert [row for row, _ in top] == sorted(range(3), key=lambda r: -got[r])
    assert all(score == round(score, bm25.SCORE_DECIMALS) for _, score in top)
    assert len(index.top(["cookie"], 1)) == 1 and index.top(["cookie"], 1)[0][0] in (0, 1)
    assert index.top(["absent"], 5) == [] and index.top([], 5) == []


def test_top_keeps_k_and_breaks_ties_by_row() -> None:
    index = bm25.Index.of_words([["a"], ["a"], ["a", "b"], ["c"]])
    assert [row for row, _ in index.top(["a"], 2)] == [0, 1]  # rows 0 and 1 tie, above the longer row 2
    assert [row for row, _ in index.top(["a", "b"], 1)] == [2]


def _ranked_scores(index: bm25.Index, terms: list[str]) -> np.ndarray:
    """Every row's score summed from the terms' posting lists, in float32 as Lucene."""
    total = np.zeros(index.size, dtype=np.float64)
    for term in dict.fromkeys(terms):
        if (found := index._impacts(term)) is not None:
            total[found.rows] += found.impact
    return total.astype(np.float32).astype(np.float64)


def _ranked(index: bm25.Index, terms: list[str], k: int) -> list[tuple[int, float]]:
    """What top() must equal: every row scored, rounded, best first, equal
    rounded scores by row (one total order, whatever the cutoff); k of them.
    Scored from the posting lists (not the dense rows of the common terms)."""
    scores = _ranked_scores(index, terms)
    rows = [int(r) for r in np.flatnonzero(scores > 0)]
    return sorted(((r, round(float(scores[r]), bm25.SCORE_DECIMALS)) for r in rows), key=lambda rs: (-rs[1], rs[0]))[:k]


def test_top_on_long_posting_lists_equals_scoring_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above PRUNE_POSTINGS the rows that cannot reach the k best are not scored
    (MaxScore); the result must not change: words in every document, rare ones,
    repeated ones, k larger than the matches, ties."""
    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(400)]
    weights = [1 / (i + 1) ** 1.1 for i in range(len(vocabulary))]
    docs = []
    for i in range(11_000):
        words = [*rng.choices(vocabulary, weights, k=rng.randrange(0, 25)), "so", "test"]
        docs.append({w: words.count(w) for w in set(words)} if i % 50 else {"so": 1})
    index = bm25.Index.build(docs)
    assert len(index.postings["so"][0]) + len(index.postings["test"][0]) >= bm25.PRUNE_POSTINGS
    dense = [t for t in ("so", "test", *vocabulary) if (f := index._impacts(t)) is not None and f.dense is not None]
    assert {"so", "test"} < set(dense) and len(dense) < len(vocabulary)  # common terms dense, rare ones not
    real, pruned = bm25._pruned, []
    monkeypatch.setattr(bm25, "_pruned", lambda *a: pruned.append(1) or real(*a))
    for q in range(60):
        terms = ["so", "test", *rng.choices(vocabulary, weights, k=rng.randrange(1, 12)), "absent"]
        rng.shuffle(terms)
        k = (1, 5, 40, 100, 10_000)[q % 5]
        assert index.top(terms, k) == _ranked(index, terms, k), (terms, k)
        assert np.array_equal(index.scores(terms), _ranked_scores(index, terms))
    assert len(pruned) == 60  # every query took the pruned path


def test_best_first_breaks_ties_by_newer_then_id() -> None:
    def task(tid: str, score: float, done: str) -> TaskEvidence:
        return TaskEvidence(id=tid, score=score, completed_at=done, matched=(), files=())

    found = [task("b", 1.0, "2026-01-01"), task("a", 1.0, "2026-01-01"), task("c", 1.0, "2026-02-01"),
             task("d", 2.0, "2025-01-01")]
    assert [t.id for t in best_first(found)] == ["d", "c", "a", "b"]


def test_choose_files_takes_text_touched_successors_and_most_touched() -> None:
    rankable = {"pkg/a.py", "pkg/b.py", "pkg/data/x.py", "pkg/data/y.py", "pkg/z.py"}
    chosen = choose_files(text=["pkg/a.py", "gone.py"], touched=["pkg/b.py", "pkg/data.py"], rankable=rankable,
                          mapped_paths=sorted(rankable), most_touched=["pkg/z.py"])
    assert chosen == {"pkg/a.py", "pkg/b.py", "pkg/data/x.py", "pkg/data/y.py", "pkg/z.py"}
    # without a context map nothing is moved
    assert choose_files(text=[], touched=["pkg/data.py"], rankable=rankable, mapped_paths=None,
                        most_touched=[]) == set()


def test_scores_from_kept_statistics_equal_the_index() -> None:
    """A store that keeps a corpus's statistics itself (Neo4j: Lucene only finds
    the candidates) scores them as an index of the whole corpus does, to the bit."""
    rng = random.Random(11)
    vocabulary = [f"w{i}" for i in range(60)]
    docs = [{w: rng.randrange(1, 4) for w in rng.sample(vocabulary, rng.randrange(1, 40))} for _ in range(500)]
    docs[7] = {}  # an empty document counts for nothing
    index = bm25.Index.build(docs)
    count, total = sum(1 for d in docs if d), sum(sum(d.values()) for d in docs)
    df = {w: sum(1 for d in docs if w in d) for w in vocabulary}
    for _ in range(20):
        terms = [*rng.sample(vocabulary, rng.randrange(1, 12)), "absent"]
        rows = rng.sample(range(len(docs)), 50)
        found = bm25.score_documents(terms, [({t: docs[r][t] for t in terms if t in docs[r]}, sum(docs[r].values()))
                                             for r in rows], count=count, total=total, df=df)
        expected = [round(float(v), bm25.SCORE_DECIMALS) for v in index.scores(terms)[rows]]
        assert found == expected
