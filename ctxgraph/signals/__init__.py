"""Task text -> :class:`TaskSignals`: keywords, domains, mentioned files, task types.

    from ctxgraph.signals import SignalExtractor, extract_signals

    extract_signals("Add JWT validation to src/auth/login.ts").domains  # ('auth',)

spaCy is imported and its pipeline loaded only on first extraction.
"""

from __future__ import annotations

from ctxgraph.signals._domains import DEFAULT_DOMAINS
from ctxgraph.signals._extract import (
    DEFAULT_MODEL,
    SignalExtractor,
    TaskSignals,
    default_extractor,
    extract_signals,
)
from ctxgraph.signals._pipeline import SignalsFallbackWarning
from ctxgraph.signals._terms import path_terms, terms

__all__ = [
    "DEFAULT_DOMAINS",
    "DEFAULT_MODEL",
    "SignalExtractor",
    "SignalsFallbackWarning",
    "TaskSignals",
    "default_extractor",
    "extract_signals",
    "path_terms",
    "terms",
]
