"""The ranking features of a context's files, one module each (issue 43).

Every module of this package but :mod:`.base` defines one feature with
:func:`~ctxgraph.compute.features.base.feature`: its name, its default
weights, its order, and its formula as the function's docstring. They are
all imported here, so the registry (:func:`features`) is complete whenever
this package is; the fusion (:func:`ctxgraph.compute.ranking.combine`), the
weight settings (:class:`ctxgraph.compute.ranking.PartWeights`), ``ctxgraph
tune`` and ``context --explain`` read it. A new feature is a new module here
(and its test): nothing else names the features. Pure (the import reads
this package's list of modules, as any import does)."""

from __future__ import annotations

import importlib
import pkgutil

from ctxgraph.compute.features.base import Feature, QueryEvidence, feature, registered, registered_for_now

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module != "base":
        importlib.import_module(f"{__name__}.{_module}")


def features() -> tuple[Feature, ...]:
    """Every ranking feature, in order."""
    return registered()


def names() -> tuple[str, ...]:
    """The features' names, in order."""
    return tuple(f.name for f in registered())


__all__ = ["Feature", "QueryEvidence", "feature", "features", "names", "registered_for_now"]
