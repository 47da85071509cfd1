"""Helpers shared by the reliability tests (imported as ``_reliability``)."""

from __future__ import annotations

import os
from collections import Counter

from hypothesis import HealthCheck, settings

#: test id -> fuzz cases tried; printed at the end of the run by conftest.py.
FUZZ_CASES: Counter[str] = Counter()

#: Scales every fuzz test's max_examples (CTXGRAPH_FUZZ_SCALE=10 for a long run).
FUZZ_SCALE = float(os.environ.get("CTXGRAPH_FUZZ_SCALE", "1"))


def fuzz_settings(examples: int) -> settings:
    """Deterministic by default (the same cases on every run, CI included);
    CTXGRAPH_FUZZ_RANDOM=1 draws new ones. No example database is written."""
    return settings(
        max_examples=max(1, int(examples * FUZZ_SCALE)),
        deadline=None,
        database=None,
        derandomize=os.environ.get("CTXGRAPH_FUZZ_RANDOM", "") != "1",
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                               HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
