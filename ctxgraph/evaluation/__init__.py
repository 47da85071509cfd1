"""Retrieval evaluation on real project histories (``ctxgraph eval DIR``).

``protocol`` holds the arithmetic (pure), ``dataset`` reads a set,
``baselines`` the systems ctxgraph is measured against, ``runner`` one run;
``checkout`` and ``repo`` a run from the project's repository (``--repo``),
``knowledge`` the imported knowledge's precision, ``source`` the release's source.
"""

from __future__ import annotations

from ctxgraph.evaluation.dataset import EvalSet, load_set
from ctxgraph.evaluation.protocol import QueryOutcome, SystemMetrics
from ctxgraph.evaluation.runner import SYSTEMS, EvalReport, run_eval

__all__ = ["SYSTEMS", "EvalReport", "EvalSet", "QueryOutcome", "SystemMetrics", "load_set", "run_eval"]
