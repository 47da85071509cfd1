"""The full-text terms of chunks, as both stores index them.

A chunk's ``search_text`` is its path's terms followed by every term of its
text, in order and with repetitions (BM25 counts them), separated by single
spaces: Neo4j's ``whitespace`` analyzer and the embedded store's index split
it the same way. Terms are made as for the rest of ctxgraph's full-text
(:mod:`ctxgraph.signals._terms`): lower-cased runs of letters and digits,
``camelCase`` and ``snake_case`` split into their parts (the whole word kept
too), English stop words out.
"""

from __future__ import annotations

from ctxgraph.signals._terms import _CAMEL, _WORD, _stop_words, path_terms


def text_terms(text: str) -> list[str]:
    """Every term of ``text`` in order, repetitions kept."""
    stop = _stop_words()
    out: list[str] = []
    for word in _WORD.findall(text):
        low = word.lower()
        if low not in stop and not low.isdigit():
            out.append(low)
        parts = _CAMEL.sub(" ", word).split()
        if len(parts) > 1:
            out.extend(p.lower() for p in parts if len(p) > 1 and p.lower() not in stop and not p.isdigit())
    return out


def search_text(path: str, text: str) -> str:
    return " ".join([*path_terms(path), *text_terms(text)])
