"""``ContextService.tune`` on both stores: the replay sees what a store would
have answered, the fit is deterministic and learns what the history shows."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from _tune_history import teach

from ctxgraph.compute import limits as lim
from ctxgraph.compute.ranking import PartWeights, RankingWeights, rank_files
from ctxgraph.compute.replay import Replay
from ctxgraph.compute.tune import MIN_GAIN
from ctxgraph.core.vectors import DIMENSIONS
from ctxgraph.evaluation.dataset import load_set
from ctxgraph.service import ContextService
from ctxgraph.signals import terms
from tests._reads import history_of

TINY = Path(__file__).resolve().parents[1] / "data" / "eval_tiny"
#: Weights that trust the context map's own score, which the taught history
#: makes misleading (every task names the widget component, whose files no task touches).
MISLED = RankingWeights(full_text=PartWeights(votes=0.1, text=0.1, seed=5.0))


def _vector(rng: random.Random) -> list[float]:
    v = [rng.gauss(0, 1) for _ in range(DIMENSIONS)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def test_replay_evidence_ranks_as_the_store_does(svc: ContextService) -> None:
    """A finished task replayed against the history before it gets the ranking
    the store gave it when that history was all there was."""
    svc.task_vectors = False
    eval_set = load_set(TINY)
    history = list(eval_set.history)
    rng = random.Random(7)
    vectors = {line.id: _vector(rng) for line in history}
    svc.add_files(list(eval_set.files))
    last = len(history) - 1
    for step, lines in enumerate((history[:last], history[last:])):
        svc.add_tasks([line.task() for line in lines])
        svc.ingest_handoffs([(f"h{n}", line.handoff_doc()) for n, line in enumerate(lines)])
        svc.store.write_task_vectors([(line.id, "h", vectors[line.id]) for line in lines])
        if step == 0:
            query = history[last].task()
            stored = {}
            for vector in (None, vectors[query.id]):
                evidence = history_of(svc.store, terms(query.text), lim.CONTEXT_MAP_TOP, vector)
                stored[vector is None] = [(e.path, s) for e, s, _ in rank_files(evidence, svc.signals_for(query))]
    tasks, files = svc.store.replay_corpus()
    replay = Replay(tasks, files)
    index = [t.id for t in replay.tasks].index(history[last].id)
    signals = replay.tasks[index].signals
    for text_only in (True, False):
        evidence = replay.evidence(index, vectors=not text_only)
        assert bool(evidence.neighbours) is not text_only
        replayed = [(e.path, s) for e, s, _ in rank_files(evidence, signals)]
        assert replayed == stored[text_only] and replayed


def test_tune_learns_from_the_history_and_is_deterministic(svc: ContextService) -> None:
    svc.task_vectors = False
    teach(svc)
    svc.config = svc.config.model_copy(update={"ranking": MISLED})
    first = svc.tune(seed=3)
    assert first.tasks == 160
    assert [f.kind for f in first.fits] == ["full_text"]  # no task has a vector
    fit = first.fits[0]
    assert fit.adopted, fit.reason
    assert fit.validation_recall_after >= fit.validation_recall_before + MIN_GAIN
    assert first.weights.full_text == fit.fitted != MISLED.full_text
    assert first.weights.dense == MISLED.dense
    again = svc.tune(seed=3)
    assert again == first


def test_tune_with_too_little_history_keeps_the_weights(svc: ContextService) -> None:
    teach(svc, n=20)
    result = svc.tune()
    assert not result.changed
    assert result.weights == svc.config.ranking
    assert "too few" in result.fits[0].reason


def test_tuned_weights_rank_the_context(svc: ContextService) -> None:
    svc.task_vectors = False
    teach(svc)
    svc.config = svc.config.model_copy(update={"ranking": MISLED})
    svc.add_task({"id": "next", "name": "Change the parser widget", "objective": "Adjust parser handling of widget"})
    before = {r.file: r.relevance for r in svc.compute("next").code_references}
    tuned = svc.tune().weights
    svc.config = svc.config.model_copy(update={"ranking": tuned})
    after = {r.file: r.relevance for r in svc.compute("next").code_references}
    assert list(after)[:5] == [f"src/parser/{k}.py" for k in range(5)]
    assert after.get("src/widget/w0.py", 0.0) < before["src/widget/w0.py"]
    assert tuned.full_text.seed / tuned.full_text.votes < MISLED.full_text.seed / MISLED.full_text.votes


@pytest.mark.parametrize("seed", [0, 11])
def test_fits_do_not_depend_on_the_store(svc: ContextService, seed: int) -> None:
    """The figures are computed from the replay corpus alone (checked against
    numbers both stores gave on this history)."""
    svc.task_vectors = False
    teach(svc)
    fit = svc.tune(seed=seed).fits[0]
    assert (fit.queries, fit.fit_queries, fit.validation_queries) == (80, 64, 16)
