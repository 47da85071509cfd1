"""Full-text terms: the words of a text as a search index sees them.

Lower-cased runs of two or more letters or digits, with ``camelCase`` and
``snake_case`` split into their parts (``FileStorage`` -> ``file``,
``storage``, ``filestorage``; ``shell_completion`` -> ``shell``,
``completion``), English stop words and bare numbers out. No model is needed:
this is cheap enough to run on every task and file at write time.
"""

from __future__ import annotations

import functools
import re

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]{2,}")
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[A-Za-z]+[a-z0-9]*[A-Z][A-Za-z0-9]*")


@functools.cache
def _stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def terms(text: str) -> list[str]:
    """The distinct terms of ``text``, in order of first appearance."""
    stop = _stop_words()
    out: dict[str, None] = {}
    for source in (_CAMEL.sub(" ", text), text):
        for word in _WORD.findall(source):
            low = word.lower()
            if low not in stop:
                out.setdefault(low, None)
    return list(out)


def path_terms(path: str) -> list[str]:
    """Terms of a file path: its folders and its name's parts (no extension)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return terms(stem.replace("/", " ").replace("-", " "))
