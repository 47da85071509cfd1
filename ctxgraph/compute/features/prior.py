"""The ``prior`` ranking feature."""

from __future__ import annotations

import math

from ctxgraph.compute.features.base import QueryEvidence, feature


@feature("prior", weight=0.2, order=30)
def prior(ev: QueryEvidence) -> dict[str, float]:
    """log(1 + finished tasks that touched the file) / log(1 + finished tasks):
    how often the file changes."""
    touches = {path: ev.files[path].touches for path in ev.paths}
    return {path: round(math.log(1 + n) / ev.log_n, 9) if n else 0.0 for path, n in touches.items()}
