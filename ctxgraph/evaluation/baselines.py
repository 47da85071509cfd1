"""The baselines a run measures ctxgraph against, each rendered as Markdown
so their token counts compare with ctxgraph's.

* ``bm25`` — BM25 (the ``bm25s`` library, Lucene variant, k1 1.5, b 0.75)
  over one document per context-map file: its path, component and notes and
  the messages (name and objective) of every history task whose handoff
  touched it. The query is the task's name and objective. Files with a
  positive score, best first (path breaks ties), at most :data:`BM25_TOP` —
  the context map's cap, so the list is as long as the ``seed`` row's and as
  ctxgraph's code references on the normal tier.
* ``seed`` — the context map's own scoring alone (the row keeps its name)
  (:func:`ctxgraph.compute.relevance.filter_context_map`), top 10.
* ``all`` — every context-map file and every history task with the files it
  touched, oldest first: the accumulated-context extreme.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import bm25s

from ctxgraph.compute.limits import CONTEXT_MAP_TOP
from ctxgraph.compute.relevance import filter_context_map
from ctxgraph.compute.render import cell, code, fold, inline
from ctxgraph.core.models import FileEntry
from ctxgraph.evaluation.dataset import HistoryLine
from ctxgraph.signals import TaskSignals

# bm25s sets its own logger to DEBUG on import; let it follow the root
# logger's level like every other library (ctxgraph --verbose shows INFO).
logging.getLogger("bm25s").setLevel(logging.NOTSET)

#: How many files the bm25 baseline lists.
BM25_TOP = CONTEXT_MAP_TOP
#: Words of two or more letters or digits: ``shell_completion.py`` gives
#: ``shell``, ``completion``, ``py``; English stop words are dropped.
TOKEN_PATTERN = r"(?u)[^\W_]{2,}"


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased word tokens of each text, English stop words out."""
    tokens: list[list[str]] = bm25s.tokenize(
        list(texts), lower=True, token_pattern=TOKEN_PATTERN, stopwords="english",
        return_ids=False, show_progress=False,
    )
    return [[t for t in doc if t] for doc in tokens]


def file_documents(files: Sequence[FileEntry], history: Sequence[HistoryLine]) -> list[str]:
    """One text per context-map file: path, component, notes, then the
    messages of the history tasks that touched it (oldest first)."""
    messages: dict[str, list[str]] = {}
    for line in history:
        for path in line.files:
            messages.setdefault(path, []).append(line.message)
    return [
        "\n".join([f.path, f.component, f.notes, *messages.get(f.path, [])])
        for f in files
    ]


class Bm25Files:
    """BM25 over the files of a context map (see the module docstring)."""

    def __init__(self, files: Sequence[FileEntry], history: Sequence[HistoryLine]) -> None:
        self.paths = [f.path for f in files]
        self._model = bm25s.BM25()
        corpus = tokenize(file_documents(files, history))
        if self.paths:
            self._model.index(corpus, show_progress=False)

    def scores(self, query: str) -> dict[str, float]:
        """Every file's score for ``query`` (0.0 for all when nothing matches)."""
        tokens = tokenize([query])[0]
        if not tokens or not self.paths:
            return dict.fromkeys(self.paths, 0.0)
        raw = self._model.get_scores(tokens)
        return {path: float(score) for path, score in zip(self.paths, raw, strict=True)}

    def rank(self, query: str, top: int | None = BM25_TOP) -> list[str]:
        """Files with a positive score, best first, path breaking ties."""
        ranked = sorted((-score, path) for path, score in self.scores(query).items() if score > 0)
        paths = [path for _, path in ranked]
        return paths if top is None else paths[:top]


def map_score_paths(files: Sequence[FileEntry], signals: TaskSignals) -> list[str]:
    """The context-map filter alone: scored files, best first, top 10."""
    return [ref.file for ref in filter_context_map(files, signals)]


def render_paths(paths: Sequence[str], title: str = "Code References") -> str:
    """A plain Markdown list of paths under one heading (each as inline code, escaped as a context's)."""
    if not paths:
        return f"### {title}\nNo files found.\n"
    return f"### {title}\n" + "".join(f"- {code(p)}\n" for p in paths)


def render_all(files: Sequence[FileEntry], history: Sequence[HistoryLine]) -> str:
    """Every context-map file, then every history task (oldest first) with the
    files its handoff touched."""
    out = ["## Context (Everything)\n\n### Code References\n"]
    out.extend(f"- {code(f.location)}{' — ' + cell(f.notes) if f.notes else ''}\n" for f in files)
    out.append("\n### Task History\n")
    for line in history:
        touched = ", ".join(code(p) for p in line.files)
        out.append(f"- {inline(line.id)}: {fold(line.name or line.objective)}{' — ' + touched if touched else ''}\n")
    return "".join(out)


__all__ = ["BM25_TOP", "Bm25Files", "file_documents", "map_score_paths", "render_all", "render_paths", "tokenize"]
