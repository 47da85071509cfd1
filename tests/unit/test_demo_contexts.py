"""The demo's contexts, pinned: each of its 17 tasks at its own tier and at
``easy``, computed on the embedded store at a fixed time, byte for byte as
recorded before the pipeline became stages and the ranking a registry
(issue 43). The other store gives the same (tests/store/test_parity.py).
A change that moves one must say so: rewrite the file with
``CTXGRAPH_PIN_DEMO=1 pytest tests/unit/test_demo_contexts.py``."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from importlib.resources.abc import Traversable
from pathlib import Path

from ctxgraph.demo import load_project
from ctxgraph.graph.local import LocalStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor

PINNED = Path(__file__).resolve().parents[1] / "data" / "demo_contexts.json"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_demo_contexts_are_as_pinned(tmp_path: Path, demo_root: Traversable,
                                         extractor: SignalExtractor) -> None:
    store = LocalStore.open(tmp_path / "graph.db")
    try:
        svc = ContextService(store, extractor)
        load_project(svc, demo_root)
        found = {}
        for task in svc.list_tasks():
            for tier in (None, "easy"):
                ctx = svc.compute(task.id, complexity=tier, now=NOW, record=False)
                found[f"{task.id} {tier or 'own'}"] = ctx.markdown
    finally:
        store.close()
    if os.environ.get("CTXGRAPH_PIN_DEMO") == "1":
        PINNED.write_text(json.dumps(found, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    assert len(found) == 34 == len(pinned)
    for key, markdown in found.items():
        assert markdown == pinned[key], key
