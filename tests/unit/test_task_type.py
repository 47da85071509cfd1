"""A task added without a type gets the first one its text names (fix, bug,
leak: bugfix; add, implement: feature; ...), else feature; a type given is kept."""

from __future__ import annotations

from pathlib import Path

from ctxgraph import ContextService, Task
from ctxgraph.graph.local import LocalStore
from ctxgraph.signals import SignalExtractor


def test_a_tasks_type_is_inferred_from_its_text_unless_given(tmp_path: Path, extractor: SignalExtractor) -> None:
    with ContextService(LocalStore.open(tmp_path / "graph.db"), extractor) as svc:
        svc.add_tasks([
            {"id": "t-1", "name": "Fix proxy auth header leak on redirect"},
            {"id": "t-2", "name": "Proxy auth header leak on redirect"},
            {"id": "t-3", "name": "Add a retry budget to the client"},
            {"id": "t-4", "name": "Speed up the parser"},
            {"id": "t-5", "name": "Fix the README's install line", "type": "docs"},
            {"id": "t-8", "name": "Memory leak in the watcher", "type": ""},  # what MCP's add_task sends by default
        ])
        svc.add_task(Task(id="t-6", name="Rename the session module"))
        svc.add_task(Task(id="t-7", name="Fix a crash", type="feature"))
        got = {t.id: t.type for t in svc.store.get_tasks([f"t-{n}" for n in range(1, 9)])}
    assert got == {"t-1": "bugfix", "t-2": "bugfix", "t-3": "feature", "t-4": "feature", "t-5": "docs",
                   "t-6": "refactor", "t-7": "feature", "t-8": "bugfix"}
