"""The demo project: a small realistic history shipped inside the package.

``project/`` holds ``tasks.yaml``, ``context_map.yaml`` and ``handoffs/`` (see
``examples/README.md``); it is package data, read with :mod:`importlib.resources`,
so ``ctxgraph demo`` works from any installed copy, not only a source checkout.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from ctxgraph.core.documents import DOCUMENT_SUFFIXES, load_context_map, load_handoff, load_tasks
from ctxgraph.errors import ConfigurationError
from ctxgraph.service import ContextService

#: The task whose context ``ctxgraph demo`` prints.
DEMO_TASK = "task-015"


def demo_dir() -> Traversable:
    """The demo project shipped in the package."""
    root = resources.files(__name__) / "project"
    if not (root / "tasks.yaml").is_file():
        raise ConfigurationError(f"demo data not found: no tasks.yaml in {root} (a damaged install: "
                                 "reinstall ctxgraph)")
    return root


def demo_task_ids(root: Traversable | None = None) -> set[str]:
    """The ids of the demo's tasks."""
    tasks_file = (root or demo_dir()) / "tasks.yaml"
    return {t.id for t in load_tasks(tasks_file.read_bytes(), str(tasks_file)).tasks}


def _documents(folder: Traversable) -> list[Traversable]:
    """The document files under ``folder``, recursively, in path order."""
    found: list[tuple[str, Traversable]] = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            name = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, f"{name}/")
            elif Path(child.name).suffix in DOCUMENT_SUFFIXES:
                found.append((name, child))

    walk(folder, "")
    return [doc for _, doc in sorted(found, key=lambda pair: pair[0])]


def load_project(
    svc: ContextService, root: Traversable, progress: Callable[[int], None] | None = None
) -> tuple[int, int, int]:
    """Load ``tasks.yaml``, ``context_map.yaml`` and ``handoffs/`` from ``root``
    (a folder, or the packaged ``project/``). Returns (tasks, files, handoffs) counts."""
    tasks_file = root / "tasks.yaml"
    tasks = load_tasks(tasks_file.read_bytes(), str(tasks_file)).tasks
    svc.add_tasks(tasks)
    map_file = root / "context_map.yaml"
    files = load_context_map(map_file.read_bytes(), str(map_file)) if map_file.is_file() else []
    if files:
        svc.add_files(files)
    handoffs = root / "handoffs"
    handoff_files = _documents(handoffs) if handoffs.is_dir() else []
    documents = [(str(p), p.read_bytes()) for p in handoff_files]
    if not svc.record_outcomes:
        svc.ingest_handoffs(documents, progress=progress)
        return len(tasks), len(files), len(handoff_files)
    # The project as its agents lived it: each task's context is computed (and
    # recorded) just before its handoff arrives, which scores it — so the demo
    # holds context outcomes (`ctxgraph outcomes`). All are validated first.
    parsed = [load_handoff(data, source)[0] for source, data in documents]
    for (source, data), doc in zip(documents, parsed, strict=True):
        svc.compute(doc.task_id)
        svc.ingest_handoffs([(source, data)], progress=progress)
    return len(tasks), len(files), len(handoff_files)
