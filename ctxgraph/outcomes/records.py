"""Context outcomes: what a delivered context held, and how its task's handoff scored it.

A *delivery* is one context handed to an agent: its task, its time (UTC, ISO
8601 with microseconds, so text order is time order), the tokens of each
rendered section, the items it named per section with their rank and tokens,
and the files it named in order of first appearance. A *score* is what the
task's handoff made of it (:mod:`ctxgraph.outcomes.scoring`). Both are stored as
compact JSON beside the delivery's id, task and time — in the ``deliveries``
table of the embedded store, on ``Delivery`` nodes in Neo4j — and parsed here,
tolerantly: a record that is not what this module writes reads as ``None``
and is skipped, never an error.

Deliveries are an operational log, not knowledge: ``stats``, ``export`` and
``import`` leave them out (as they leave out task vectors), and each store
keeps only the newest ``keep`` (:data:`DEFAULT_KEEP`, the settings file's
``outcomes_keep``), trimming the log back to them whenever it exceeds them
by 1 % (:func:`trim_due`).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

log = logging.getLogger(__name__)

#: Deliveries a store keeps (the newest); ``outcomes_keep`` in the settings file.
DEFAULT_KEEP = 10_000
def trim_due(count: int, keep: int) -> bool:
    """Whether a store holding ``count`` deliveries trims them to the newest
    ``keep`` now: once they exceed it by 1 % (at least 1), so that trimming —
    a sort of the whole log on Neo4j — runs once per ``keep // 100`` writes."""
    return count > keep + max(0, keep // 100)


#: The version of the record's JSON.
RECORD_VERSION = 1

#: Item sections, in the order the default template renders them.
KNOWLEDGE_SECTIONS = ("patterns", "warnings", "decisions", "blocking_questions")
TASK_SECTIONS = ("prior_work", "related_tasks")
FILE_SECTIONS = ("codebase_context", "code_references")
ITEM_SECTIONS = ("patterns", "warnings", "decisions", "prior_work", "codebase_context", "code_references",
                 "blocking_questions", "related_tasks")

_VALUE = ConfigDict(defer_build=True, frozen=True, extra="forbid")


class DeliveredItem(BaseModel):
    """One item of a delivered context: knowledge id, task id or file path."""

    model_config = _VALUE
    section: str
    id: str
    rank: int  # 1-based, within its section
    tokens: int


class Delivery(BaseModel):
    """One delivered context."""

    model_config = _VALUE
    id: str
    task_id: str
    at: str
    tokens: int = 0
    #: tokens of each section of the rendered Markdown
    sections: dict[str, int] = {}
    items: tuple[DeliveredItem, ...] = ()
    #: every file the context names, in order of first appearance (rank = position + 1)
    files: tuple[str, ...] = ()


class SectionScore(BaseModel):
    model_config = _VALUE
    delivered: int = 0
    used: int = 0
    tokens: int = 0  # of the items delivered
    wasted: int = 0  # of the items not used


class DeliveryScore(BaseModel):
    """A delivery as its task's handoff scored it."""

    model_config = _VALUE
    #: the content hash of the handoff that scored it (re-ingesting the same one changes nothing)
    handoff: str
    #: distinct files the handoff created or modified
    changed: int
    #: files delivered, and how many of the changed files were among the first 5 / 10 of them
    files: int
    hit5: int
    hit10: int
    items: int
    used: int
    wasted: int
    sections: dict[str, SectionScore] = {}
    #: ``section:id`` of each item used, in delivery order
    used_items: tuple[str, ...] = ()


class StoredDelivery(BaseModel):
    """A delivery as a store holds it: the JSON texts unparsed (``None`` when missing)."""

    model_config = _VALUE
    id: str
    task_id: str
    at: str
    record: str | None = None
    score: str | None = None


def record_json(delivery: Delivery) -> str:
    """The compact JSON stored for a delivery (its id, task and time are stored beside it)."""
    return json.dumps({
        "v": RECORD_VERSION, "tokens": delivery.tokens, "sections": delivery.sections,
        "items": [[i.section, i.id, i.rank, i.tokens] for i in delivery.items],
        "files": list(delivery.files),
    }, separators=(",", ":"), ensure_ascii=False)


def score_json(score: DeliveryScore) -> str:
    return score.model_dump_json()


def score_props(score: DeliveryScore) -> dict[str, Any]:
    """The flat properties a scored ``Delivery`` node carries for Cypher (Neo4j Browser)."""
    return {"hit5": score.hit5, "hit10": score.hit10, "changed": score.changed, "files": score.files,
            "items": score.items, "items_used": score.used, "wasted_tokens": score.wasted}


def delivered_files(record: str | None) -> tuple[str, ...]:
    """The file items of a delivery's record (its snippets, then its code
    references), in rank order; ``()`` when the record is unreadable. Read for
    the concurrent-work warnings of other contexts (docs/decisions.md)."""
    try:
        data = json.loads(record or "")
        items = data["items"] if isinstance(data, dict) and data.get("v") == RECORD_VERSION else []
        found = sorted((FILE_SECTIONS.index(i[0]), int(i[2]), str(i[1])) for i in items if i[0] in FILE_SECTIONS)
    except (ValueError, TypeError, KeyError, IndexError):
        return ()
    return tuple(dict.fromkeys(path for _, _, path in found))


def parse_delivery(stored: StoredDelivery) -> Delivery | None:
    """The delivery ``stored`` holds, or ``None`` when its record is unreadable."""
    try:
        data = json.loads(stored.record or "")
        if not isinstance(data, dict) or data.get("v") != RECORD_VERSION:
            raise ValueError(f"not a version {RECORD_VERSION} record")
        items = tuple(DeliveredItem(section=s, id=i, rank=r, tokens=t) for s, i, r, t in data["items"])
        return Delivery(id=stored.id, task_id=stored.task_id, at=stored.at, tokens=data["tokens"],
                        sections=data["sections"], items=items, files=tuple(data["files"]))
    except (ValueError, TypeError, KeyError, ValidationError) as exc:
        log.debug("delivery %s: unreadable record skipped: %s", stored.id, exc)
        return None


def parse_score(stored: StoredDelivery) -> DeliveryScore | None:
    """The score ``stored`` holds, or ``None`` when it has none or it is unreadable."""
    if stored.score is None:
        return None
    try:
        return DeliveryScore.model_validate_json(stored.score)
    except (ValueError, ValidationError) as exc:
        log.debug("delivery %s: unreadable score ignored: %s", stored.id, exc)
        return None


def stored(value: Any, field: str) -> str | None:
    """A stored text property as text (another type, e.g. from a hand edit, reads as ``None``)."""
    return value if isinstance(value, str) else None if value is None else f"<{field}: not text>"
