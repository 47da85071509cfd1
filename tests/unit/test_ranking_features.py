"""The ranking features as a registry (ctxgraph.compute.features): every
feature is one module with its name, formula and default weights, and the
fusion, the weight settings, ``ctxgraph tune`` and ``context --explain`` read
the registry — a feature registered (here for the test's length only) is
ranked, tuned and explained with no other change."""

from __future__ import annotations

import math

import numpy as np

from ctxgraph.compute import tune
from ctxgraph.compute.context import compute_context
from ctxgraph.compute.features import Feature, QueryEvidence, features, names, registered_for_now
from ctxgraph.compute.limits import limits_for
from ctxgraph.compute.ranking import DEFAULT_WEIGHTS, PartWeights, RankingWeights, file_parts, rank_files
from ctxgraph.core.models import Candidates, FileEntry, FileEvidence, HistoryEvidence, Task, TaskEvidence
from ctxgraph.signals import TaskSignals

SIG = TaskSignals(keywords=("cookie",), domains=())
TASK = Task(id="t-new", name="Parse cookies", objective="Parse cookie headers", signals=SIG)


def _history() -> HistoryEvidence:
    files = tuple(FileEvidence(entry=FileEntry(path=p, component="pkg"), touches=t)
                  for p, t in (("pkg/a.py", 3), ("pkg/b.py", 1), ("pkg/zz.py", 0)))
    tasks = (TaskEvidence(id="t1", score=2.0, completed_at="2026-01-01T00:00:00Z", matched=("cookie",),
                          files=("pkg/a.py",)),
             TaskEvidence(id="t2", score=1.0, completed_at="2026-01-02T00:00:00Z", matched=("cookie",),
                          files=("pkg/b.py",)))
    return HistoryEvidence(n_tasks=4, tasks=tasks, files=files)


def _last_letter(ev: QueryEvidence) -> dict[str, float]:
    """1 for a file whose name ends in z (a toy)."""
    return {path: 1.0 if path.rsplit(".", 1)[0].endswith("z") else 0.0 for path in ev.paths}


TOY = Feature("zee", _last_letter, weight=10.0, dense_weight=10.0, order=99)


#: The features ctxgraph started the registry with, in their order (a new one may go anywhere among them).
BUILT_IN = ("votes", "text", "prior", "seed", "dense")


def test_every_feature_is_named_stated_and_weighed() -> None:
    assert tuple(n for n in names() if n in BUILT_IN) == BUILT_IN
    for one in features():
        assert one.formula, one.name  # its formula is its docstring
        assert one.weight >= 0 and one.dense_weight >= 0
    # the settings' weight sets are the registry's, with its defaults
    assert tuple(PartWeights.model_fields) == names()
    assert DEFAULT_WEIGHTS.full_text.model_dump() == {f.name: f.weight for f in features()}
    assert DEFAULT_WEIGHTS.dense.model_dump() == {f.name: f.dense_weight for f in features()}
    assert [f.name for f in features() if f.unit] == ["votes"]  # tune leaves the unit as it is
    assert features()[0].formula.startswith("sum over the NEIGHBOURS finished tasks")


def test_the_fusion_adds_the_weighted_features_in_order() -> None:
    ranked = rank_files(_history(), SIG)
    w = DEFAULT_WEIGHTS.full_text
    for _, score, parts in ranked:
        assert "dense" not in parts  # no neighbours by embedding: absent
        total = sum(getattr(w, name) * parts[name] for name in parts)
        assert math.isclose(score, round(total, 6))
    assert [e.path for e, _, _ in ranked][:2] == ["pkg/a.py", "pkg/b.py"]


def test_a_registered_feature_is_ranked_tuned_and_explained() -> None:
    before = [e.path for e, _, _ in rank_files(_history(), SIG)]
    assert "pkg/zz.py" not in before  # nothing speaks for it
    with registered_for_now(TOY):
        assert names()[-1] == "zee"
        parts = dict((e.path, p) for e, p in file_parts(_history(), SIG))
        assert parts["pkg/zz.py"]["zee"] == 1.0 and parts["pkg/a.py"]["zee"] == 0.0
        ranked = rank_files(_history(), SIG)
        assert ranked[0][0].path == "pkg/zz.py"  # its default weight, 10, puts it first
        # a weight set of the settings without it ranks with its default
        assert rank_files(_history(), SIG, RankingWeights())[0][0].path == "pkg/zz.py"
        # tune's columns are the registry's: one more column, weighed by its default
        width = len(names())
        case = tune.Case(0, ("pkg/a.py", "pkg/zz.py"), np.array([[1.0] + [0.0] * (width - 1), [0.0] * width]),
                         np.array([False, True]), 1)
        case.parts[1, names().index("zee")] = 1.0
        assert tune.replay_recall([case], PartWeights(), top=1) == 1.0
        ctx = compute_context(TASK, SIG, Candidates(history=_history()), limits_for("normal"),
                              complexity="normal", explain=True)
        assert ctx.code_references[0].file == "pkg/zz.py"
        shown = {e.id: e.features for e in ctx.explain or ()}
        assert shown["file:pkg/zz.py"]["zee"] == 1.0
        assert list(shown["file:pkg/a.py"]) == [n for n in names() if n != "dense"]  # absent: no embeddings
        assert list(shown["file:pkg/a.py"])[-1] == "zee"
    assert "zee" not in names()
    assert [e.path for e, _, _ in rank_files(_history(), SIG)] == before
