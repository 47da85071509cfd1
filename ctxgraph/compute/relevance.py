"""Tag relevance (phase 2) and the context-map filter (phase 4): how well a
candidate matches the task's signals. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ctxgraph.compute.limits import CONTEXT_MAP_TOP
from ctxgraph.compute.map_score import map_score
from ctxgraph.compute.output import CodeRef
from ctxgraph.core.models import Candidates, FileEntry, KnowledgeHit, KnowledgeItem
from ctxgraph.core.rarity import tag_weights
from ctxgraph.signals import TaskSignals

#: Weight of one matched keyword tag and one matched domain tag.
KEYWORD_WEIGHT = 1.0
DOMAIN_WEIGHT = 0.5
#: Added to the tag relevance of knowledge a task's own dependencies discovered.
DEPENDENCY_BONUS = 2.0
#: Digits a tag relevance is rounded to (the rarity weights make it a real number).
RELEVANCE_DIGITS = 4


def relevance(matched: Sequence[str], signals: TaskSignals, weights: Mapping[str, float] | None = None) -> float:
    """Keyword tags count 1, domain tags 0.5 (a tag that is both counts once, as a
    keyword), each times its rarity weight (``weights``; 1 for a tag without one)."""
    return tag_relevance(matched, frozenset(signals.keywords), frozenset(signals.domains), weights or {})


def tag_relevance(
    matched: Iterable[str], keywords: frozenset[str], domains: frozenset[str], weights: Mapping[str, float]
) -> float:
    """:func:`relevance` over the signals' keyword and domain sets, taken once by the caller."""
    score = 0.0
    for tag in matched:
        if tag in keywords:
            score += KEYWORD_WEIGHT * weights.get(tag, 1.0)
        elif tag in domains:
            score += DOMAIN_WEIGHT * weights.get(tag, 1.0)
    return round(score, RELEVANCE_DIGITS)


def rarity_weights(candidates: Candidates) -> dict[str, float]:
    """The query tags' rarity weights from the degrees the store returned (finding 3
    of benchmarks/README.md): two rare matched tags outrank several common ones."""
    return tag_weights(candidates.tag_df, candidates.tagged_total)


def merge_hits(
    keyword_hits: Sequence[KnowledgeHit], domain_hits: Sequence[KnowledgeHit], signals: TaskSignals,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[KnowledgeItem, float]]:
    """Phase 2: merge both queries, dedupe by id, sort by relevance (then recency, id)."""
    merged: dict[str, tuple[KnowledgeItem, set[str]]] = {}
    for hit in [*keyword_hits, *domain_hits]:
        if hit.item.id in merged:
            merged[hit.item.id][1].update(hit.matched_tags)
        else:
            merged[hit.item.id] = (hit.item, set(hit.matched_tags))
    kw, dom = frozenset(signals.keywords), frozenset(signals.domains)
    scored = [(item, tag_relevance(tags, kw, dom, weights or {})) for item, tags in merged.values()]
    scored.sort(key=lambda pair: pair[0].id)
    scored.sort(key=lambda pair: pair[0].updated_at or "", reverse=True)
    scored.sort(key=lambda pair: pair[1], reverse=True)
    return scored


def filter_context_map(entries: Sequence[FileEntry], signals: TaskSignals) -> list[CodeRef]:
    """Phase 4: entries with a positive score, highest first (path breaks ties), top 10."""
    refs = [
        CodeRef(file=e.location, component=e.component, notes=e.notes, relevance=s, seed_score=s)
        for e in entries
        if (s := map_score(e, signals)) > 0
    ]
    refs.sort(key=lambda r: (-r.relevance, r.file))
    return refs[:CONTEXT_MAP_TOP]
