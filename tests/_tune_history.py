"""A history that teaches ``ctxgraph tune`` something (store and CLI tests)."""

from __future__ import annotations

import random

from ctxgraph.core.models import FileEntry
from ctxgraph.service import ContextService

TOPICS = ("parser", "lexer", "render", "cache", "router", "auth")


def teach(svc: ContextService, n: int = 160, seed: int = 1) -> None:
    """A history where the context map's own score misleads: every task names
    the 'widget' component, whose files no task ever touches, while each task
    really changes the five files of its topic."""
    rng = random.Random(seed)
    files = [FileEntry(path=f"src/{t}/{k}.py", component=t, notes="") for t in TOPICS for k in range(5)]
    files += [FileEntry(path=f"src/widget/w{k}.py", component="widget", notes="widget helpers for the " + " ".join(TOPICS))
              for k in range(4)]
    svc.add_files(files)
    tasks, handoffs = [], []
    for i in range(n):
        topic = rng.choice(TOPICS)
        tid = f"t{i:04d}"
        tasks.append({"id": tid, "name": f"Change the {topic} widget step {i}",
                      "objective": f"Adjust {topic} handling of widget {rng.randint(0, 9)}"})
        handoffs.append((tid, {"task_id": tid, "summary": f"changed {topic}",
                               "completed_at": f"2026-01-01T{i // 60:02d}:{i % 60:02d}:00Z",
                               "files_modified": [{"path": f"src/{topic}/{k}.py"} for k in range(5)]}))
    svc.add_tasks(tasks)
    svc.ingest_handoffs(handoffs)
