"""Bounding the history evidence (ctxgraph.core.evidence) and ranking what is left."""

from __future__ import annotations

import random

from ctxgraph.compute.ranking import NEIGHBOURS, rank_files
from ctxgraph.core.evidence import (
    FILE_TOP,
    TASK_TOP,
    MatchedTask,
    bound,
    task_scores,
    text_scores,
    touched_terms,
)
from ctxgraph.core.models import FileEntry, FileEvidence, HistoryEvidence, TaskEvidence
from ctxgraph.signals import TaskSignals

TERMS = [f"w{i}" for i in range(12)]


def _history(n_tasks: int, n_files: int, seed: int) -> tuple[list[MatchedTask], dict[str, tuple[str, ...]]]:
    """Random matched tasks (1-3 of 12 terms, 1-3 of the files) and files' own query terms."""
    rng = random.Random(seed)
    paths = [f"src/f{i:03d}.py" for i in range(n_files)]
    df = {t: rng.randint(1, n_tasks // 4) for t in TERMS}
    hits = [
        MatchedTask(f"t{i:03d}", rng.randint(5, 40), f"2026-01-{1 + i % 28:02d}T00:00:00Z",
                    tuple(sorted((t, df[t]) for t in rng.sample(TERMS, rng.randint(1, 3)))),
                    tuple(sorted(rng.sample(paths, rng.randint(1, 3)))))
        for i in range(n_tasks)
    ]
    own = {p: tuple(rng.sample(TERMS, 1)) for p in rng.sample(paths, n_files // 5)}
    return hits, own


def _bounded(hits: list[MatchedTask], own: dict[str, tuple[str, ...]], n_files: int, full: bool) -> HistoryEvidence:
    touches = {p: sum(p in h.files for h in hits) for h in hits for p in h.files}
    paths = sorted({*touches, *own})
    lengths = {p: 10 * touches.get(p, 0) + len(own.get(p, ())) for p in paths}
    total_len = sum(lengths.values()) + 7 * (n_files - len(paths))
    total_task_len = sum(h.term_count for h in hits) + 500
    kept = bound(hits, n_tasks=len(hits) + 20, total_task_len=total_task_len, own=own, lengths=lengths,
                 rankable=set(paths), mapped_paths=paths, n_files=n_files, total_file_len=total_len,
                 most_touched=sorted(touches, key=lambda p: (-touches[p], p))[:10])
    chosen = paths if full else sorted(kept.files)
    files = tuple(
        FileEvidence(entry=FileEntry(path=p), touches=touches.get(p, 0), task_len=10 * touches.get(p, 0),
                     own_len=len(own.get(p, ())), own_terms=own.get(p, ()),
                     term_tf=() if full else tuple(sorted(kept.term_tf.get(p, {}).items())))
        for p in chosen
    )
    tasks = tuple(TaskEvidence(**h._asdict()) for h in (hits if full else kept.tasks))
    return HistoryEvidence(n_tasks=len(hits) + 20, total_task_len=total_task_len, tasks=tasks, files=files,
                           n_files=n_files, total_file_len=total_len, mapped=True,
                           file_df=None if full else tuple(sorted(kept.file_df.items())))


def test_bound_keeps_the_best_tasks_and_what_they_touched() -> None:
    hits, own = _history(120, 60, seed=1)
    kept = bound(hits, n_tasks=140, total_task_len=3000, own=own, lengths=dict.fromkeys(
        {p for h in hits for p in h.files} | set(own), 20), rankable={p for h in hits for p in h.files} | set(own),
        mapped_paths=None, n_files=60, total_file_len=1200, most_touched=())
    best = {tid for _, tid, _ in task_scores(140, 3000, hits)[:TASK_TOP]}
    assert TASK_TOP >= 2 * NEIGHBOURS
    assert {h.id for h in kept.tasks} == best
    assert [h.id for h in kept.tasks] == sorted(best)
    assert {p for h in kept.tasks for p in h.files} <= kept.files


def test_bound_cuts_files_below_the_text_cutoff_only() -> None:
    hits, own = _history(400, 400, seed=2)
    paths = {p for h in hits for p in h.files} | set(own)
    lengths = dict.fromkeys(paths, 20)
    kept = bound(hits, n_tasks=400, total_task_len=8000, own=own, lengths=lengths, rankable=paths,
                 mapped_paths=None, n_files=400, total_file_len=8000, most_touched=())
    text, _ = text_scores(kept.term_tf, own, lengths, 400, 8000, kept.file_df)
    assert len(kept.files) < len(paths)  # something was cut
    full_text, _ = text_scores(touched_terms(hits, paths), own, lengths, 400, 8000)
    cutoff = sorted(full_text.values(), reverse=True)[FILE_TOP - 1]
    voted = {p for h in kept.tasks for p in h.files}
    for path in paths - kept.files:
        assert full_text.get(path, 0.0) <= cutoff and path not in voted
    # The kept files' text is what the whole history says about them.
    for path in kept.files & set(full_text):
        assert text[path] == full_text[path]


def test_ranking_bounded_evidence_equals_ranking_all_of_it() -> None:
    for seed in range(5):
        hits, own = _history(90, 40, seed=seed)
        signals = TaskSignals(keywords=("f001",))
        full = rank_files(_bounded(hits, own, 40, full=True), signals)
        cut = rank_files(_bounded(hits, own, 40, full=False), signals)
        assert [(e.path, s) for e, s, _ in cut[:10]] == [(e.path, s) for e, s, _ in full[:10]]
