"""The demo project: a small realistic history shipped in ``examples/demo``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ctxgraph.errors import ConfigurationError
from ctxgraph.graph.documents import expand_paths, load_context_map, load_tasks
from ctxgraph.service import ContextService

#: The task whose context ``ctxgraph demo`` prints.
DEMO_TASK = "task-015"


def demo_dir() -> Path:
    """``CTXGRAPH_EXAMPLES`` if set, else ``examples/demo`` of the source tree."""
    env = os.environ.get("CTXGRAPH_EXAMPLES")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parent.parent / "examples" / "demo")
    for path in candidates:
        if (path / "tasks.yaml").is_file():
            return path
    raise ConfigurationError(
        "demo data not found: run from a source checkout (examples/demo) or set CTXGRAPH_EXAMPLES"
    )


def load_project(
    svc: ContextService, root: Path, progress: Callable[[int], None] | None = None
) -> tuple[int, int, int]:
    """Load ``tasks.yaml``, ``context_map.yaml`` and ``handoffs/`` from ``root``.

    Returns (tasks, files, handoffs) counts.
    """
    tasks_file = root / "tasks.yaml"
    tasks = load_tasks(tasks_file.read_bytes(), str(tasks_file)).tasks
    svc.add_tasks(tasks)
    map_file = root / "context_map.yaml"
    files = load_context_map(map_file.read_bytes(), str(map_file)) if map_file.is_file() else []
    if files:
        svc.add_files(files)
    handoff_files = expand_paths([root / "handoffs"]) if (root / "handoffs").is_dir() else []
    svc.ingest_handoffs([(str(p), p.read_bytes()) for p in handoff_files], progress=progress)
    return len(tasks), len(files), len(handoff_files)
