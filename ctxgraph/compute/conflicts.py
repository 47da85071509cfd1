"""Likely conflicts among decisions in force: the rule, in one place. Pure.

Two decisions *likely conflict* when both are in force (not superseded; the
older versions of a revised decision are), share their subject tags — at least
:data:`MIN_SHARED_TAGS` tags and a Jaccard similarity of their tag sets of at
least :data:`TAG_SIMILARITY_MIN` — and yet say different things: the Jaccard
similarity of the words of their texts is below :data:`TEXT_NEAR_DUPLICATE`
(at or above it they are restatements, not rivals). Words are the text
lower-cased and split at blanks and the punctuation in :data:`WORD_DELIMITERS`.
``ctxgraph conflicts`` lists them, a context that shows both says so, and the
saved query ``decision_conflicts.cypher`` applies the same rule in Neo4j
Browser (docs/decisions.md).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations

from pydantic import BaseModel, ConfigDict

from ctxgraph.core.models import KnowledgeItem

#: Tags two decisions must share at least.
MIN_SHARED_TAGS = 3
#: |shared tags| / |all their tags| at least this.
TAG_SIMILARITY_MIN = 0.4
#: Texts whose word sets have a Jaccard similarity at least this are the same decision said twice.
TEXT_NEAR_DUPLICATE = 0.8
#: A tag carried by more decisions in force than this is too general to pair
#: decisions by: pairs are looked for through the other tags (a pair sharing
#: none of them is not seen); every tag counts in the similarity. Keeps
#: ``ctxgraph conflicts`` from comparing every pair of a large project's decisions.
PAIRING_TAG_CAP = 200
#: What words are split at (besides blanks); the saved query splits at the same.
WORD_DELIMITERS = ",.;:()[]!?\"'/"
_SPLIT = re.compile(r"[\s" + re.escape(WORD_DELIMITERS) + r"]+")


class Conflict(BaseModel):
    """Two decisions in force that likely contradict each other (``first`` has the smaller id)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    first_id: str
    first: str
    second_id: str
    second: str
    shared_tags: tuple[str, ...]
    tag_similarity: float
    text_similarity: float


def words(text: str) -> frozenset[str]:
    """The words of a text as the rule compares them."""
    return frozenset(w for w in _SPLIT.split(text.lower()) if w)


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    union = len(sa | sb)
    return len(sa & sb) / union if union else 0.0


def in_force(item: KnowledgeItem) -> bool:
    return item.kind == "decision" and item.status != "superseded"


def conflict_of(a: KnowledgeItem, b: KnowledgeItem) -> Conflict | None:
    """The conflict of two decisions under the rule (see the module), or None."""
    if a.id == b.id or not (in_force(a) and in_force(b)):
        return None
    if a.id > b.id:
        a, b = b, a
    shared = sorted(set(a.tags) & set(b.tags))
    tag_sim = jaccard(a.tags, b.tags)
    if len(shared) < MIN_SHARED_TAGS or tag_sim < TAG_SIMILARITY_MIN:
        return None
    text_sim = jaccard(words(a.summary), words(b.summary))
    if text_sim >= TEXT_NEAR_DUPLICATE:
        return None
    return Conflict(first_id=a.id, first=a.summary, second_id=b.id, second=b.summary,
                    shared_tags=tuple(shared), tag_similarity=round(tag_sim, 4), text_similarity=round(text_sim, 4))


def likely_conflicts(items: Sequence[KnowledgeItem]) -> list[Conflict]:
    """Every likely conflict among ``items`` (others than decisions in force are
    ignored), most similar tags first, then by ids. Pairs are found through
    shared tags (an inverted index), not by comparing every pair."""
    decisions = {k.id: k for k in items if in_force(k)}
    by_tag: dict[str, list[str]] = {}
    for k in decisions.values():
        for tag in set(k.tags):
            by_tag.setdefault(tag, []).append(k.id)
    shared: Counter[tuple[str, str]] = Counter()
    capped = 0
    for ids in by_tag.values():
        if len(ids) > PAIRING_TAG_CAP:
            capped += 1
            continue
        for a, b in combinations(sorted(ids), 2):
            shared[(a, b)] += 1
    # (a pair may also share every capped tag: those that could reach the minimum are checked)
    least = max(1, MIN_SHARED_TAGS - capped)
    found = [c for (a, b), n in shared.items() if n >= least
             if (c := conflict_of(decisions[a], decisions[b])) is not None]
    return sorted(found, key=lambda c: (-c.tag_similarity, c.first_id, c.second_id))


__all__ = [
    "MIN_SHARED_TAGS", "PAIRING_TAG_CAP", "TAG_SIMILARITY_MIN", "TEXT_NEAR_DUPLICATE", "WORD_DELIMITERS",
    "Conflict", "conflict_of", "in_force", "jaccard", "likely_conflicts", "words",
]
