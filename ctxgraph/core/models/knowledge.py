"""Knowledge: the patterns, gotchas, decisions and open questions learned from
handoffs (and the artifacts added by hand), with their kinds and labels."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel

from ctxgraph.core.models.base import VALUE


class Severity(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


KnowledgeKind = Literal[
    "pattern", "gotcha", "decision", "open_question", "adr", "plan", "module_memory", "changelog"
]

#: Neo4j label of each knowledge kind (every knowledge node also has ``Knowledge``).
#: The last four are artifacts added by hand (``ctxgraph knowledge add``), never found in a handoff.
KIND_LABELS: dict[str, str] = {
    "pattern": "Pattern",
    "gotcha": "Gotcha",
    "decision": "Decision",
    "open_question": "OpenQuestion",
    "adr": "ADR",
    "plan": "Plan",
    "module_memory": "ModuleMemory",
    "changelog": "ChangelogEntry",
}


class KnowledgeItem(BaseModel):
    """A pattern, gotcha, decision or open question learned from a handoff."""

    model_config = VALUE

    id: str
    kind: KnowledgeKind
    summary: str
    tags: tuple[str, ...] = ()
    location: str | None = None  # pattern
    severity: Severity | None = None  # gotcha
    rationale: str | None = None  # decision
    status: str | None = None  # decision: active | superseded
    #: a superseded item: when it held (its ``created_at``) and until when (the
    #: time of the first item that superseded it)
    valid_from: str | None = None
    valid_until: str | None = None
    #: the summaries of the items this one superseded (rendered "(replaces: …)")
    replaces: tuple[str, ...] = ()
    context: str | None = None  # open question
    recommendation: str | None = None  # open question
    blocking: bool | None = None  # open question
    importance: float = 0.5
    scope: Literal["global", "task", "path"] = "global"
    chain_id: str | None = None
    version: int = 1
    token_estimate: int = 0
    created_at: str | None = None
    updated_at: str | None = None

    @property
    def label(self) -> str:
        return KIND_LABELS[self.kind]
