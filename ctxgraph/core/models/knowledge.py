"""Knowledge: the patterns, gotchas, decisions and open questions learned from
handoffs (and the artifacts added by hand), with their kinds and labels; and
what a caller gives to add or revise one by hand, checked against the
handoff's limits (:class:`KnowledgeInput`)."""

from __future__ import annotations

import math
import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from ctxgraph.core.limits import (
    MAX_ITEMS,
    MAX_KNOWLEDGE_CHARS,
    MAX_PATH_BYTES,
    MAX_TEXT_CHARS,
    MAX_WORD_CHARS,
)
from ctxgraph.core.models.base import VALUE
from ctxgraph.errors import InvalidArgumentError


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


_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_WORD = re.compile(rf"\S{{{MAX_WORD_CHARS + 1},}}")
#: Problems one refusal names at most.
_MAX_PROBLEMS = 5


def _limit(message: str) -> PydanticCustomError:
    return PydanticCustomError("ctxgraph_limit", message)


def _unicode(text: str) -> None:
    if not text.isascii() and _SURROGATE.search(text):
        raise _limit("not valid Unicode (a lone surrogate: bytes that are not UTF-8, or a \\ud800 escape)")


class KnowledgeInput(BaseModel):
    """What a caller gives to add (``ctxgraph knowledge add``,
    ``ContextService.add_knowledge``) or revise a knowledge item, checked
    before any work with the limits a handoff's knowledge has
    (:mod:`ctxgraph.core.limits`): a summary of at most 10,000 characters and
    no word over 1,000 (its words become tags), at most 100 tags of 1,000
    characters, a rationale of 20,000, a location of 4,096 bytes. Items read
    back from a store are :class:`KnowledgeItem` and are not checked again."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    kind: KnowledgeKind
    summary: str
    tags: tuple[str, ...] = ()
    scope: Literal["global", "task", "path"] = "global"
    importance: float = 0.5
    location: str | None = None
    rationale: str | None = None
    severity: Severity | None = None

    @field_validator("summary")
    @classmethod
    def _summary(cls, value: str) -> str:
        _unicode(value)
        if not value.strip():
            raise _limit("empty (say what the knowledge is)")
        if len(value) > MAX_KNOWLEDGE_CHARS:
            raise _limit(f"text is {len(value):,} characters; at most {MAX_KNOWLEDGE_CHARS:,}")
        if _LONG_WORD.search(value):
            raise _limit(f"a word longer than {MAX_WORD_CHARS:,} characters (words become tags)")
        return value

    @field_validator("tags", mode="before")
    @classmethod
    def _tag_count(cls, value: Any) -> Any:
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list | tuple) and len(value) > MAX_ITEMS:
            raise _limit(f"{len(value):,} given; at most {MAX_ITEMS:,}")
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for n, tag in enumerate(value):
            _unicode(tag)
            if len(tag) > MAX_WORD_CHARS:
                raise _limit(f"tag {n + 1} is {len(tag):,} characters; at most {MAX_WORD_CHARS:,}")
        return value

    @field_validator("importance")
    @classmethod
    def _importance(cls, value: float) -> float:
        if not (math.isfinite(value) and 0 <= value <= 1):
            raise _limit(f"{value} is not between 0 and 1")
        return value

    @field_validator("location")
    @classmethod
    def _location(cls, value: str | None) -> str | None:
        if value is not None:
            _unicode(value)
            size = len(value.encode("utf-8"))
            if size > MAX_PATH_BYTES:
                raise _limit(f"path is {size:,} bytes in UTF-8; at most {MAX_PATH_BYTES:,}")
        return value

    @field_validator("rationale")
    @classmethod
    def _rationale(cls, value: str | None) -> str | None:
        if value is not None:
            _unicode(value)
            if len(value) > MAX_TEXT_CHARS:
                raise _limit(f"text is {len(value):,} characters; at most {MAX_TEXT_CHARS:,}")
        return value


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def check_knowledge(**fields: Any) -> KnowledgeInput:
    """``fields`` as a :class:`KnowledgeInput`, or :class:`InvalidArgumentError`
    with one line naming each field refused (``invalid knowledge: summary: text
    is 1,000,000 characters; at most 10,000``); no value is repeated."""
    tags = fields.get("tags")
    if tags is not None and not isinstance(tags, list | tuple | str):  # a generator, a set...: counted
        fields = {**fields, "tags": tuple(tags)}
    try:
        return KnowledgeInput.model_validate(fields)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False, include_input=False)[:_MAX_PROBLEMS]:
            where = ".".join(str(part) for part in err["loc"][:1])
            problems.append(f"{where}: {_one_line(err['msg'])}" if where else _one_line(err["msg"]))
        raise InvalidArgumentError("invalid knowledge: " + "; ".join(problems)) from None
