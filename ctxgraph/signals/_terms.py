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
    """bm25s's English stop words, read from its ``stopwords`` module alone:
    importing it the usual way imports the whole ``bm25s`` package first (its
    BEIR and tokenization helpers, scipy's sparse matrices: 25 ms of CPU in
    a process that already has numpy, 140 ms in one that has not), for a
    tuple of words."""
    import importlib.util
    from pathlib import Path

    try:
        package = importlib.util.find_spec("bm25s")
        assert package is not None and package.submodule_search_locations
        path = Path(next(iter(package.submodule_search_locations))) / "stopwords.py"
        spec = importlib.util.spec_from_file_location("_ctxgraph_bm25s_stopwords", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return frozenset(module.STOPWORDS_EN)
    except Exception:  # another layout of the package: the usual import
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
