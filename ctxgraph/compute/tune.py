"""Learn the file ranking's weights from the project's own history. Pure.

``ctxgraph tune`` replays the finished history the way an orchestrator met
it (:mod:`ctxgraph.compute.replay`): the older :data:`START_SHARE` of the
tasks, in completion order, is the first graph; the rest is cut into
:data:`BLOCKS` blocks of consecutive tasks, and every task of a block is
asked as a new query against the graph as it stood when the block began
(the tasks of its own block are not in it yet, as a batch of queued tasks
does not see its own results). A query's answer is the ranked context-map
files; its gold is the rankable files its handoff really created or
modified. The score is recall at :data:`TOP` files, the first files a
context names.

The evidence of every query is built once; a weight set only re-weighs the
parts (:func:`~ctxgraph.compute.ranking.file_parts`), so a search over
thousands of weight sets takes seconds. The search is a coordinate ascent
from the current weights over multiples of each weight (:data:`STEPS`), in an
order drawn from ``seed``: deterministic for a seed.

Validated by time: the weights are fitted on every block but the newest and
scored on the newest. They are adopted only when they beat the current ones
there by at least :data:`MIN_GAIN`; otherwise the current ones stay (a
smaller gain is a query or two of the block: noise, not knowledge). One set
is learnt for the history ranked by full text alone and, when finished tasks
have vectors, one for the history with neighbours by embedding.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ctxgraph.compute.features import features, names
from ctxgraph.compute.ranking import PartWeights, RankingWeights, file_parts, weight_of
from ctxgraph.compute.replay import Replay
from ctxgraph.core.models import ReplayFile, ReplayTask

#: Share of the history that is only ever the graph, never a query.
START_SHARE = 0.5
#: Blocks of queries after it; the newest one validates.
BLOCKS = 5
#: Files a context names first (the eval's recall@5).
TOP = 5
#: Multiples of a weight the search tries (0 switches a part off).
STEPS = (0.0, 0.5, 0.7, 1.0, 1.4, 2.0)
#: Rounds of the coordinate ascent at most.
ROUNDS = 4
#: Recall gain on the newest block the fitted weights need to be adopted.
MIN_GAIN = 0.01
#: Fewest replayed queries with gold files for a fit (fewer: nothing is learnt).
MIN_QUERIES = 30

#: ``progress(done, total)``: replayed queries so far, of how many.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Case:
    """One replayed query: its block, its rankable files' parts and which are gold."""

    block: int
    paths: tuple[str, ...]
    parts: np.ndarray  # one row per path, a column per ranking feature (compute.features, in order)
    gold: np.ndarray  # bool per path
    n_gold: int


@dataclass(frozen=True)
class WeightFit:
    """What tuning one weight set found."""

    kind: str  # "full_text" or "dense"
    queries: int  # replayed queries (with gold files)
    fit_queries: int
    validation_queries: int
    before: PartWeights
    fitted: PartWeights
    fit_recall_before: float
    fit_recall_after: float
    validation_recall_before: float
    validation_recall_after: float
    adopted: bool
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind, "queries": self.queries, "fit_queries": self.fit_queries,
            "validation_queries": self.validation_queries, "before": self.before.model_dump(),
            "fitted": self.fitted.model_dump(), "fit_recall_before": round(self.fit_recall_before, 4),
            "fit_recall_after": round(self.fit_recall_after, 4),
            "validation_recall_before": round(self.validation_recall_before, 4),
            "validation_recall_after": round(self.validation_recall_after, 4),
            "adopted": self.adopted, "reason": self.reason,
        }


@dataclass(frozen=True)
class TuneResult:
    """The weights to use (the adopted fits over the current weights) and each fit."""

    weights: RankingWeights
    fits: tuple[WeightFit, ...]
    tasks: int

    @property
    def changed(self) -> bool:
        return any(f.adopted for f in self.fits)


def replay_cases(replay: Replay, *, vectors: bool, progress: Callable[[], None] | None = None) -> list[Case]:
    """Every replayed query with gold files (see the module's docstring)."""
    n = len(replay.tasks)
    start = int(n * START_SHARE)
    size = max(1, -(-(n - start) // BLOCKS))
    cases = []
    for index in range(start, n):
        block = (index - start) // size
        gold = set(replay.gold(index))
        if gold:
            evidence = replay.evidence(index, known=start + block * size, vectors=vectors)
            if vectors and not evidence.neighbours:
                continue  # a query without neighbours is ranked by the other set
            ranked = file_parts(evidence, replay.tasks[index].signals)
            paths = tuple(entry.path for entry, _ in ranked)
            columns = names()
            parts = np.array([[p.get(k, 0.0) for k in columns] for _, p in ranked], dtype=np.float64)
            cases.append(Case(block, paths, parts.reshape(len(paths), len(columns)),
                              np.array([p in gold for p in paths], dtype=bool), len(gold)))
        if progress is not None:
            progress()
    return cases


def replay_recall(cases: Sequence[Case], weights: PartWeights, top: int = TOP) -> float:
    """Mean share of each case's gold files among its ``top`` best-scored files
    (score as :func:`~ctxgraph.compute.ranking.combine`: rounded, positive only,
    path breaking ties)."""
    if not cases:
        return 0.0
    w = np.array([weight_of(weights, f) for f in features()], dtype=np.float64)
    total = 0.0
    for case in cases:
        scores = np.round(case.parts @ w, 6)
        order = sorted((i for i in range(len(case.paths)) if scores[i] > 0),
                       key=lambda i: (-scores[i], case.paths[i]))[:top]
        total += float(case.gold[order].sum()) / case.n_gold
    return total / len(cases)


def fit_weights(cases: Sequence[Case], start: PartWeights, *, seed: int = 0) -> PartWeights:
    """Coordinate ascent of :func:`replay_recall` from ``start`` (the unit
    feature, ``votes``, stays the unit the others are measured in)."""
    rng = random.Random(seed)
    best, best_recall = start, replay_recall(cases, start)
    every = features()
    used = np.any([c.parts.any(axis=0) for c in cases], axis=0) if cases else np.zeros(len(every), dtype=bool)
    tuned = [f.name for i, f in enumerate(every) if not f.unit and used[i]]
    by_name = {f.name: f for f in every}
    for _ in range(ROUNDS):
        improved = False
        order = list(tuned)
        rng.shuffle(order)
        for name in order:
            base = weight_of(start, by_name[name]) or 1.0
            for step in STEPS:
                trial = best.model_copy(update={name: round(base * step, 4)})
                found = replay_recall(cases, trial)
                if found > best_recall + 1e-9:
                    best, best_recall, improved = trial, found, True
        if not improved:
            break
    return best


def tune_set(kind: str, cases: Sequence[Case], current: PartWeights, *, seed: int = 0) -> WeightFit:
    """Fit on every block but the newest, validate on the newest."""
    newest = max((c.block for c in cases), default=0)
    older = [c for c in cases if c.block < newest]
    val = [c for c in cases if c.block == newest]
    if len(cases) < MIN_QUERIES or not older or not val:
        return WeightFit(kind, len(cases), len(older), len(val), current, current, 0.0, 0.0, 0.0, 0.0, False,
                   f"too few replayed queries ({len(cases)}; {MIN_QUERIES} needed)")
    fitted = fit_weights(older, current, seed=seed)
    before_fit, after_fit = replay_recall(older, current), replay_recall(older, fitted)
    before_val, after_val = replay_recall(val, current), replay_recall(val, fitted)
    gain = after_val - before_val
    adopted = fitted != current and gain >= MIN_GAIN
    if fitted == current:
        reason = "the current weights are the best found"
    elif adopted:
        reason = f"recall@{TOP} on the newest block {before_val:.3f} -> {after_val:.3f}"
    else:
        reason = (f"not adopted: recall@{TOP} on the newest block {before_val:.3f} -> {after_val:.3f} "
                  f"(a gain of {MIN_GAIN} is needed)")
    return WeightFit(kind, len(cases), len(older), len(val), current, fitted, before_fit, after_fit, before_val,
               after_val, adopted, reason)


def tune(tasks: Sequence[ReplayTask], files: Sequence[ReplayFile], current: RankingWeights, *,
         seed: int = 0, progress: Progress | None = None) -> TuneResult:
    """Replay the history and fit each weight set (see the module's docstring)."""
    replay = Replay(tasks, files)
    kinds = ["full_text", *(["dense"] if any(t.vector for t in tasks) else [])]
    total = (len(replay.tasks) - int(len(replay.tasks) * START_SHARE)) * len(kinds)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    fits = [tune_set(kind, replay_cases(replay, vectors=kind == "dense", progress=tick), getattr(current, kind),
                     seed=seed) for kind in kinds]
    update = {f.kind: f.fitted for f in fits if f.adopted}
    return TuneResult(current.model_copy(update=update), tuple(fits), len(replay.tasks))


__all__ = ["BLOCKS", "MIN_GAIN", "START_SHARE", "Case", "TuneResult", "WeightFit", "fit_weights", "replay_cases",
           "replay_recall", "tune", "tune_set"]
