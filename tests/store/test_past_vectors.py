"""The imported history's tasks get their vectors after the import (issue
44): for at most a given time, the rest left ``pending`` (``partial``) for the
next run, which goes on where the last stopped; on both stores, the model
installed."""

from __future__ import annotations

from pathlib import Path

from ctxgraph.service import ContextService
from ctxgraph.service.history import HistoryOptions
from ctxgraph.service.past import tasks_line
from tests._history_repo import project


def test_the_imported_tasks_are_embedded_in_time_slices(svc: ContextService, tmp_path: Path) -> None:
    project(tmp_path / "repo")
    svc.import_history(tmp_path / "repo", HistoryOptions())
    assert len(svc.store.tasks_to_embed(100)) == 6
    stopped = svc.embed_past(0.0)  # out of time before the first batch
    assert (stopped.embedded, stopped.pending, stopped.partial, stopped.skipped) == (0, 6, True, "")
    assert "6 not yet: partial" in str(tasks_line(stopped))
    seen: list[tuple[int, int]] = []
    done = svc.embed_past(60.0, progress=lambda n, total: seen.append((n, total)))
    assert (done.embedded, done.pending, done.partial) == (6, 0, False)
    assert seen[-1] == (6, 6) and svc.store.tasks_to_embed(100) == []
    assert str(tasks_line(done)).endswith("; complete")
    assert svc.embed_past(60.0).embedded == 0  # nothing left: nothing to say
    assert tasks_line(svc.embed_past(60.0)) is None


def test_sync_goes_on_where_the_import_stopped(svc: ContextService, tmp_path: Path) -> None:
    project(tmp_path / "repo")
    first = svc.import_past(tmp_path / "repo", embed_seconds=0.0)
    assert first.tasks is not None and first.tasks.pending == 6
    assert first.as_dict()["tasks"]["partial"] is True
    later = svc.import_past(tmp_path / "repo", kept_only=True, embed_seconds=60.0)
    assert later.tasks is not None and (later.tasks.embedded, later.tasks.pending) == (6, 0)
    svc.task_vectors = False
    off = svc.embed_past(60.0)
    assert off.skipped.startswith("task vectors are turned off") and tasks_line(off) == (
        "tasks: not embedded: task vectors are turned off (CTXGRAPH_TASK_VECTORS=0)")
