"""Graph-aware ranking of code references. Pure.

The seed scores a context-map file by the words of its path, component and
notes. The history knows more: which finished tasks resemble this one and
which files they changed. Four pieces of evidence, fused per file:

- **votes** — BM25 (k1 1.2, b 0.75) of the query's full-text terms against
  every finished task's terms; the :data:`NEIGHBOURS` most similar tasks
  vote for the files their handoffs touched, each vote its similarity
  relative to the best one, divided by the square root of how many files the
  task touched (a commit touching 30 files says little about each);
- **text** — BM25 of the query against one document per file: its own terms
  plus the terms of every finished task that touched it (what a file "is
  about", as its history describes it), scaled to the best vote;
- **prior** — how often the file changes: log(1 + touches) / log(1 + tasks);
- **seed** — the seed's own context-map score (component +2, location +1,
  domain in notes +1, mentioned file +3).

Only files of the context map are ranked when one was loaded; files known
only from handoffs count when there is none. A file gone from the map whose
path without its extension is now a folder of mapped files — a module turned
into a package, ``pkg/data.py`` into ``pkg/data/*.py`` — passes its votes on
to those files, each vote divided by the square root of how many there are
(its history describes code that now lives there; its text is not passed on,
it would make every file of the package look alike).

``score = votes + 2 x text + 0.2 x prior + 0.3 x seed`` — weights tuned on the
click and werkzeug evaluation sets (``ctxgraph eval``). The store returns the
evidence; every number is computed here, so both stores rank identically.
The store may bound it (``ctxgraph.graph.evidence``): the best matched tasks
only, and the files that can still reach the top, each carrying the counts of
its touching tasks' terms so that its text is scored as over every task.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

from ctxgraph.graph.evidence import K1, VOTERS, B, idf, task_scores, text_scores, touched_terms
from ctxgraph.graph.models import FileEntry, HistoryEvidence
from ctxgraph.graph.records import successors
from ctxgraph.signals import TaskSignals

NEIGHBOURS = VOTERS
TEXT_WEIGHT = 2.0
PRIOR_WEIGHT = 0.2
SEED_WEIGHT = 0.3
#: Terms in more than this share of the finished tasks are left out (no signal).
MAX_DF_SHARE = 0.2


def task_similarity(history: HistoryEvidence) -> list[tuple[float, str, int]]:
    """(score, task id, index) of every matched task, best first (newest, then id, break ties)."""
    return task_scores(history.n_tasks, history.total_task_len, history.tasks)


def rank_files(history: HistoryEvidence, signals: TaskSignals) -> list[tuple[FileEntry, float, dict[str, float]]]:
    """Context-map files with a positive fused score, best first (path breaks ties),
    each with its score parts."""
    from ctxgraph.compute.context import score_file as seed_score

    # A loaded context map is the authority on which files exist: files known only
    # from handoffs (perhaps deleted since) are ranked only when there is no map.
    mapped = [f for f in history.files if f.in_map]
    has_map = bool(mapped) if history.mapped is None else history.mapped
    files = {f.entry.path: f for f in (mapped if has_map else history.files)}
    votes: dict[str, float] = defaultdict(float)
    similar = task_similarity(history)[:NEIGHBOURS]
    moved = successors({p for _, _, i in similar for p in history.tasks[i].files if p not in files},
                       sorted(files)) if has_map else {}
    if similar and similar[0][0] > 0:
        top = similar[0][0]
        for score, _, i in similar:
            touched = [p for p in history.tasks[i].files if p in files or p in moved]
            for path in touched:
                vote = (score / top) / math.sqrt(len(touched))
                if path in files:
                    votes[path] += vote
                else:
                    for successor in moved[path]:
                        votes[successor] += vote / math.sqrt(len(moved[path]))

    # BM25 over per-file documents: own terms + the terms of the tasks that touched it
    # (counted by the store over every matched task when it bounded the evidence).
    term_tf: Mapping[str, Mapping[str, int]]
    if history.file_df is not None:
        term_tf = {p: dict(f.term_tf) for p, f in files.items() if f.term_tf}
    else:
        term_tf = touched_terms(history.tasks, files)
    own = {p: f.own_terms for p, f in files.items() if f.own_terms}
    lengths = {p: f.task_len + f.own_len for p, f in files.items()}
    n_files = len(files) if history.n_files is None else history.n_files
    total_len = sum(lengths.values()) if history.total_file_len is None else history.total_file_len
    text, _ = text_scores(term_tf, own, lengths, n_files, total_len,
                          None if history.file_df is None else dict(history.file_df))
    best_vote = max(votes.values(), default=0.0) or 1.0
    best_text = max(text.values(), default=0.0) or 1.0
    log_n = math.log(1 + history.n_tasks) if history.n_tasks else 1.0

    ranked = []
    for path, f in files.items():
        parts = {
            "votes": round(votes.get(path, 0.0), 9),
            "text": round(best_vote * text.get(path, 0.0) / best_text, 9),
            "prior": round(math.log(1 + f.touches) / log_n, 9) if f.touches else 0.0,
            "seed": float(seed_score(f.entry, signals)),
        }
        total = round(parts["votes"] + TEXT_WEIGHT * parts["text"] + PRIOR_WEIGHT * parts["prior"]
                      + SEED_WEIGHT * parts["seed"], 6)
        if total > 0:
            ranked.append((f.entry, total, parts))
    ranked.sort(key=lambda r: (-r[1], r[0].path))
    return ranked


__all__: Sequence[str] = ("K1", "MAX_DF_SHARE", "NEIGHBOURS", "B", "idf", "rank_files", "task_similarity")
