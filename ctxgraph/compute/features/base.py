"""A ranking feature: one number about a candidate file, with its name, its
formula (the function's docstring) and its default weights; and the
registry the fusion, ``ctxgraph tune``, ``context --explain`` and the
evaluation read. Pure."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from ctxgraph.core.models import FileEvidence
from ctxgraph.signals import TaskSignals


@dataclass(frozen=True)
class QueryEvidence:
    """What the history says of one query's rankable files, computed once
    (:func:`ctxgraph.compute.ranking.evidence_of`); every feature reads it."""

    signals: TaskSignals
    #: path -> the history's file (its entry, touches, text score)
    files: Mapping[str, FileEvidence]
    #: the rankable files' paths, sorted
    paths: tuple[str, ...]
    #: path -> the votes of the neighbours by full text (routed for moved modules)
    votes: Mapping[str, float]
    #: path -> the votes of the neighbours by embedding
    dense: Mapping[str, float]
    #: whether the history has neighbours by embedding (the ``dense`` weight set ranks then)
    embedded: bool
    #: path -> the store's BM25 of the query against the file's document (positive ones)
    text: Mapping[str, float]
    best_vote: float
    best_text: float
    #: log(1 + finished tasks), 1.0 without any
    log_n: float
    n_tasks: int

    @staticmethod
    def log_tasks(n_tasks: int) -> float:
        return math.log(1 + n_tasks) if n_tasks else 1.0


#: A feature's value for every rankable file of the query (path -> value, every
#: path of ``QueryEvidence.paths``); None: absent for this query.
Compute = Callable[[QueryEvidence], "Mapping[str, float] | None"]


@dataclass(frozen=True)
class Feature:
    """One ranking feature (see :func:`feature`)."""

    name: str
    compute: Compute
    #: its weight when the history is ranked by full text alone
    weight: float
    #: its weight when the history has neighbours by embedding
    dense_weight: float
    #: where it stands among the features (the order their weighted values are added in)
    order: int
    #: the unit the other weights are measured in: ``ctxgraph tune`` leaves it as it is
    unit: bool = False

    @property
    def formula(self) -> str:
        """The feature's formula, as its function's docstring states it."""
        return " ".join((self.compute.__doc__ or "").split())


_REGISTRY: dict[str, Feature] = {}
#: the registry in order, made again when it changes
_ORDERED: list[tuple[Feature, ...]] = []


def register(one: Feature) -> Feature:
    if one.name in _REGISTRY and _REGISTRY[one.name] != one:
        raise ValueError(f"ranking feature {one.name!r} is registered twice")
    _REGISTRY[one.name] = one
    _ORDERED.clear()
    return one


def feature(name: str, *, weight: float, dense_weight: float | None = None, order: int = 100,
            unit: bool = False) -> Callable[[Compute], Compute]:
    """Register the decorated function as the ranking feature ``name``, with
    its default ``weight`` (``dense_weight`` with neighbours by embedding: the
    same unless given) and its ``order`` among the features."""
    def add(compute: Compute) -> Compute:
        register(Feature(name, compute, weight, weight if dense_weight is None else dense_weight, order, unit))
        return compute
    return add


def registered() -> tuple[Feature, ...]:
    """Every registered feature, by ``order`` (then name)."""
    if not _ORDERED:
        _ORDERED.append(tuple(sorted(_REGISTRY.values(), key=lambda f: (f.order, f.name))))
    return _ORDERED[0]


@contextmanager
def registered_for_now(one: Feature) -> Iterator[Feature]:
    """``one`` registered while the block runs (a test's feature)."""
    register(one)
    try:
        yield one
    finally:
        _REGISTRY.pop(one.name, None)
        _ORDERED.clear()


__all__ = ["Compute", "Feature", "QueryEvidence", "feature", "register", "registered", "registered_for_now"]
