"""Rows measured again on a kept graph (``python -m benchmarks --keep DIR``).

A 1,000,000-node row spends most of its hour loading. With ``--keep DIR`` a
row's graph stays where it was loaded — the embedded store's file in
``DIR/<store>-<nodes>-seed<seed>/``, Neo4j's on the server (not emptied after
the row) — beside ``loaded.json``: what was loaded and the load's figures. A
later run with the same ``DIR`` measures that graph again and reports the
load's figures from the file, when the file describes the same load (store,
size, seed, generator version, API-ingested tail, server, vectors or not) and the store still
holds as many graph nodes as were loaded; otherwise the row loads again.

The timed loops record deliveries, so a kept graph gains them (the outcome log
keeps the newest 10,000); nothing else in it changes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from benchmarks.generator import GENERATOR_VERSION
from ctxgraph.files import atomic_write

MARKER = "loaded.json"


def folder(keep: Path, store: str, nodes: int, seed: int) -> Path:
    """Where the row's graph (embedded) and its ``loaded.json`` are kept."""
    path = keep / f"{store}-{nodes}-seed{seed}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def identity(store: str, nodes: int, seed: int, tail: int, vectors: bool = True) -> dict[str, Any]:
    """What a kept graph must have been loaded as to be measured again
    (``vectors``: with the task and query vectors of ``benchmarks.vectors``)."""
    where = os.environ.get("NEO4J_URI", "") if store == "neo4j" else "embedded"
    return {"store": store, "nodes": nodes, "seed": seed, "generator": GENERATOR_VERSION, "tail": tail,
            "where": where, "vectors": vectors}


def read(path: Path, expect: dict[str, Any], graph_nodes: int) -> dict[str, Any] | None:
    """The kept load's figures, or None when ``path`` holds no such load or the
    store (``graph_nodes`` now) no longer holds it."""
    try:
        kept = json.loads((path / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("identity") != expect:
        return None
    facts = kept.get("load")
    if not isinstance(facts, dict) or facts.get("graph_nodes") != graph_nodes:
        return None
    return facts


def write(path: Path, expect: dict[str, Any], facts: dict[str, Any]) -> None:
    """Record a finished load (written last: an interrupted load leaves no file)."""
    with atomic_write(path / MARKER, text=True) as handle:
        handle.write(json.dumps({"identity": expect, "load": facts}, indent=2) + "\n")


def forget(path: Path) -> None:
    """Before a load: the file no longer describes what the store holds."""
    (path / MARKER).unlink(missing_ok=True)
