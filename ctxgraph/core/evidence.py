"""How much of the history a store returns for one query, and the BM25 it is measured with.

``ctxgraph.compute.ranking`` fuses four pieces of evidence per file; two of
them need only a few of the matched tasks and files:

- the **votes** come from the :data:`VOTERS` most similar finished tasks, so
  a store returns the :data:`TASK_TOP` best (twice as many: a store may do
  the arithmetic in its own language, and rounding at the boundary must not
  change who votes);
- the **text** of a file is BM25 over its document — its own terms plus the
  terms of every matched task that touched it. A store counts those terms
  per file over *every* matched task (``FileEvidence.term_tf``), counts the
  files per term (``HistoryEvidence.file_df``) and returns the
  :data:`FILE_TOP` files whose text scores best, besides the files the
  returned tasks touched (and, for a module that became a package, the
  package's files), and the most touched files (their change-frequency prior).

So a context reads every matched task's terms and files but builds and ranks
a bounded set: on the benchmarks' 10,000-node graph 40 tasks and ~140 files
instead of ~700 and ~950. Whatever is cut has no votes and a text score below the
:data:`FILE_TOP`-th; it could still have reached the top ten only through
the seed's context-map score, which the store does not know. Graphs with
fewer than :data:`FILE_TOP` files with evidence (the evaluation sets) are not
cut at all.

The embedded store calls :func:`bound`; ``cypher/history.cypher`` does the
same arithmetic on the server, so that only the chosen tasks and files are
sent (``tests/store`` holds both to the same evidence, cut and uncut). The
ranking scores it with :func:`task_scores` and :func:`text_scores`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Container, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import NamedTuple, Protocol

from ctxgraph.core.paths import successors

K1 = 1.2
B = 0.75
#: The most similar matched tasks that vote for their files (``compute.ranking``).
VOTERS = 20
#: The finished tasks nearest to the query by embedding that vote
#: (``compute.ranking``); a store returns this many neighbours.
DENSE_VOTERS = 10
#: Matched tasks a store returns: the voters and as many again.
TASK_TOP = 2 * VOTERS
#: Files a store returns for their text score alone.
FILE_TOP = 100
#: Terms in more finished tasks than this are left out of the history whatever
#: their share (``compute.ranking.MAX_DF_SHARE``): their weight is small (an
#: idf of at most ln(n / 1000)) and their mentions were what made a context's
#: cost grow with the graph (benchmarks/README.md). Graphs of fewer than 5,000
#: finished tasks never reach it at a share of 0.2; the evaluation sets have
#: 875 and 1,500.
TERM_DF_CAP = 1_000


def max_term_df(n_tasks: int, max_df_share: float) -> int:
    """The most finished tasks a query term may be in to count: a share of them
    (at least 1), and at most :data:`TERM_DF_CAP`."""
    return min(max(1, int(n_tasks * max_df_share)), TERM_DF_CAP)


class _Hit(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def term_count(self) -> int: ...
    @property
    def completed_at(self) -> str: ...
    @property
    def matched(self) -> tuple[tuple[str, int], ...]: ...
    @property
    def files(self) -> tuple[str, ...]: ...


class MatchedTask(NamedTuple):
    """A matched finished task as a store reads it (``TaskEvidence`` without validation)."""

    id: str
    term_count: int
    completed_at: str
    matched: tuple[tuple[str, int], ...]
    files: tuple[str, ...]


class Bounded(NamedTuple):
    """What :func:`bound` keeps: the best tasks (by id), the chosen files, and per
    file the matched terms its touching tasks mention (how many of them each)."""

    tasks: list[MatchedTask]
    files: set[str]
    term_tf: dict[str, Counter[str]]
    file_df: dict[str, int]


def idf(n: int, df: int) -> float:
    """BM25's (Lucene's) inverse document frequency."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def task_scores(n_tasks: int, total_task_len: int, hits: Sequence[_Hit]) -> list[tuple[float, str, int]]:
    """(score, task id, index in ``hits``) of every hit, best first; ties go to the
    newer task, then to the smaller id. BM25 of the query's terms against the
    task's terms (each matched term counted once)."""
    avg = total_task_len / n_tasks if n_tasks else 1.0
    scored = []
    for i, task in enumerate(hits):
        norm = K1 * (1 - B + B * task.term_count / (avg or 1.0))
        score = sum(idf(n_tasks, df) for _, df in task.matched) * (K1 + 1) / (1 + norm)
        scored.append((round(score, 9), task.completed_at, task.id, i))
    # Stable sorts, least significant key first: id, then completed_at
    # descending, then score descending.
    scored.sort(key=itemgetter(2))
    scored.sort(key=itemgetter(1), reverse=True)
    scored.sort(key=itemgetter(0), reverse=True)
    return [(s[0], s[2], s[3]) for s in scored]


def touched_terms(hits: Iterable[_Hit], rankable: Container[str]) -> dict[str, Counter[str]]:
    """Per rankable file, each matched term with the number of hits touching the
    file that mention it."""
    tf: dict[str, Counter[str]] = defaultdict(Counter)
    for task in hits:
        for path in task.files:
            if path in rankable:
                counts = tf[path]
                for term, _ in task.matched:
                    counts[term] += 1
    return tf


def text_scores(
    term_tf: Mapping[str, Mapping[str, int]],
    own: Mapping[str, Sequence[str]],
    lengths: Mapping[str, int],
    n_files: int,
    total_len: int,
    file_df: Mapping[str, int] | None = None,
) -> tuple[dict[str, float], dict[str, int]]:
    """BM25 of the query against each file's document (``term_tf`` plus its
    ``own`` query terms; ``lengths``: its whole document's length), and the
    number of files having each term (counted here when not given)."""
    docs: dict[str, Mapping[str, int]] = {}
    for path, counts in term_tf.items():
        if counts:
            docs[path] = counts
    for path, terms in own.items():
        if not terms:
            continue
        merged = dict(docs.get(path, {}))
        for term in terms:
            merged[term] = merged.get(term, 0) + 1
        docs[path] = merged
    if file_df is None:
        file_df = Counter(term for counts in docs.values() for term in counts)
    avg_len = (total_len / n_files) if n_files else 1.0
    weights = {term: idf(n_files, df) * (K1 + 1) for term, df in file_df.items()}
    scores: dict[str, float] = {}
    for path, counts in docs.items():
        norm = K1 * (1 - B + B * lengths[path] / (avg_len or 1.0))
        scores[path] = round(sum(weights[term] * c / (c + norm) for term, c in counts.items()), 9)
    return scores, dict(file_df)


def bound(
    hits: Sequence[MatchedTask],
    *,
    n_tasks: int,
    total_task_len: int,
    own: Mapping[str, Sequence[str]],
    lengths: Mapping[str, int],
    rankable: Container[str],
    mapped_paths: Sequence[str] | None,
    n_files: int,
    total_file_len: int,
    most_touched: Iterable[str],
    also: Iterable[str] = (),
) -> Bounded:
    """Choose the evidence a store returns (see the module's docstring).

    ``hits``: every matched task; ``own``: the rankable files having query
    terms of their own, with those terms; ``lengths``: the document length of
    every file in ``own`` or touched by a hit; ``mapped_paths``: the context
    map's paths, sorted (None: no map is loaded, nothing moved);
    ``most_touched``: the rankable files with the most touches, most first;
    ``also``: files to keep besides (those the neighbours by embedding touched)."""
    order = task_scores(n_tasks, total_task_len, hits)[:TASK_TOP]
    best = sorted((hits[i] for _, _, i in order), key=lambda h: h.id)
    tf = touched_terms(hits, rankable)
    text, file_df = text_scores(tf, own, lengths, n_files, total_file_len)
    chosen = set(sorted(text, key=lambda p: (-text[p], p))[:FILE_TOP])
    touched = {p for h in best for p in h.files}
    touched.update(also)
    chosen.update(p for p in touched if p in rankable)
    if mapped_paths is not None:
        for kids in successors((p for p in touched if p not in rankable), mapped_paths).values():
            chosen.update(kids)
    chosen.update(most_touched)
    return Bounded(tasks=best, files=chosen, term_tf={p: tf[p] for p in chosen if p in tf}, file_df=file_df)


__all__: Sequence[str] = (
    "DENSE_VOTERS",
    "FILE_TOP",
    "K1",
    "TASK_TOP",
    "VOTERS",
    "B",
    "Bounded",
    "MatchedTask",
    "bound",
    "idf",
    "task_scores",
    "text_scores",
    "touched_terms",
)
