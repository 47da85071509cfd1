"""The ``prior`` ranking feature."""

from __future__ import annotations

import math

from ctxgraph.compute.features.base import QueryEvidence, feature


@feature("prior", weight=0.2, order=30)
def prior(ev: QueryEvidence, path: str) -> float:
    """log(1 + finished tasks that touched the file) / log(1 + finished tasks):
    how often the file changes."""
    touches = ev.files[path].touches
    return round(math.log(1 + touches) / ev.log_n, 9) if touches else 0.0
