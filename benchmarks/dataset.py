"""The documents of one synthetic project (:class:`Dataset`) and what its
query tasks should find (:class:`Planted`); ``benchmarks.generator`` makes them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Planted:
    """What a query task should find: knowledge markers and file paths."""

    query: str
    words: tuple[str, str]
    knowledge: tuple[str, ...]  # markers at the start of the planted summaries
    files: tuple[str, ...]  # paths of the planted context-map files

    @property
    def items(self) -> tuple[str, ...]:
        return (*self.knowledge, *self.files)


@dataclass
class Dataset:
    """The documents of one synthetic project, in the order they are ingested."""

    nodes: int
    seed: int
    files: list[dict[str, str]]
    tasks: list[dict[str, Any]]
    handoffs: list[dict[str, Any]]
    queries: list[str]
    planted: dict[str, Planted]
    tag_counts: Counter[str] = field(default_factory=Counter)

    def counts(self) -> dict[str, int]:
        knowledge = sum(
            len(h.get(k, ()))
            for h in self.handoffs
            for k in ("patterns_discovered", "gotchas", "decisions", "open_questions")
        )
        counts = {
            "tasks": len(self.tasks),
            "handoffs": len(self.handoffs),
            "knowledge": knowledge,
            "files": len(self.files),
        }
        counts["total"] = sum(counts.values())
        return counts

    def write(self, folder: str | Path) -> Path:
        """The documents as ``ctxgraph/demo/project`` lays them out: ``tasks.yaml``,
        ``context_map.yaml`` and ``handoffs/<task>.yaml`` (for ``ctxgraph ingest``)."""
        import yaml

        root = Path(folder)
        (root / "handoffs").mkdir(parents=True, exist_ok=True)
        dump: dict[str, Any] = {"sort_keys": False, "allow_unicode": True, "width": 120}
        (root / "tasks.yaml").write_text(yaml.safe_dump({"tasks": self.tasks}, **dump), encoding="utf-8")
        (root / "context_map.yaml").write_text(yaml.safe_dump({"files": self.files}, **dump), encoding="utf-8")
        for h in self.handoffs:
            (root / "handoffs" / f"{h['task_id']}.yaml").write_text(yaml.safe_dump(h, **dump), encoding="utf-8")
        return root
