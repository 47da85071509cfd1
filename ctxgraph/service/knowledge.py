"""Knowledge by hand (ADRs, plans, module memories, changelog entries; revision
chains), the context map,
and knowledge found by text with the tag matching a context uses."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ctxgraph.compute import limits as lim
from ctxgraph.compute.relevance import merge_hits, relevance
from ctxgraph.core.limits import MAX_ID_CHARS
from ctxgraph.core.models import FileEntry, KnowledgeItem, utcnow
from ctxgraph.core.models.knowledge import check_knowledge
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.errors import CtxgraphError, InvalidArgumentError
from ctxgraph.graph.records import stable_id
from ctxgraph.service.base import ServiceBase
from ctxgraph.signals import TaskSignals

#: Knowledge items a text search reads at most from each of its two tag queries.
SEARCH_WINDOW = 500


class KnowledgeMatch(BaseModel):
    """One knowledge item a text matched, with the tags it matched on and its relevance."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    item: KnowledgeItem
    matched_tags: tuple[str, ...]
    relevance: float


class KnowledgeMixin(ServiceBase):
    """Patterns, gotchas, decisions and the rest, written and found outside handoffs."""

    def _knowledge(self, kind: str, summary: str, tags: Iterable[str], now: str, **fields: Any) -> KnowledgeItem:
        sig = self.extractor.extract(summary)
        all_tags = [self.extractor.normalize_tag(t) for t in tags]
        all_tags = list(dict.fromkeys(t for t in [*all_tags, *sig.keywords, *sig.domains] if t))
        text = " ".join(x for x in (summary, fields.get("rationale") or "") if x)
        return KnowledgeItem(
            id=stable_id(kind, summary), kind=kind, summary=summary, tags=tuple(all_tags),  # type: ignore[arg-type]
            token_estimate=estimate_tokens(text), created_at=now, updated_at=now, **fields,
        )

    def add_knowledge(
        self,
        kind: str,
        summary: str,
        *,
        tags: Iterable[str] = (),
        scope: str = "global",
        importance: float = 0.5,
        location: str | None = None,
        rationale: str | None = None,
        severity: str | None = None,
    ) -> KnowledgeItem:
        """Add a pattern, gotcha, decision, ADR, plan, module memory or changelog entry.

        The values are checked first, with a handoff's limits
        (:class:`~ctxgraph.core.models.knowledge.KnowledgeInput`): anything over
        them is an :class:`~ctxgraph.errors.InvalidArgumentError` and nothing is written."""
        given = check_knowledge(kind=kind, summary=summary, tags=tags, scope=scope, importance=importance,
                                location=location, rationale=rationale, severity=severity)
        fields: dict[str, Any] = {"scope": given.scope, "importance": given.importance,
                                  "location": given.location, "rationale": given.rationale}
        if given.kind == "gotcha":
            fields["severity"] = given.severity or "medium"
        if given.kind == "decision":
            fields["status"] = "active"
        item = self._knowledge(given.kind, given.summary, given.tags, utcnow(), **fields)
        self.store.upsert_knowledge([item])
        return item

    def revise_knowledge(
        self, item_id: str, summary: str, *, rationale: str | None = None, importance: float | None = None
    ) -> KnowledgeItem:
        """A new version of a knowledge node: same chain, version + 1. Only the
        latest version of a chain is ever shown; a revised decision is superseded
        (``valid_until`` now) and the new one says what it replaces. The new
        summary, rationale and importance are checked as :meth:`add_knowledge`
        checks them, before anything is written."""
        old = self.get_knowledge(item_id)
        check_knowledge(kind=old.kind, summary=summary, rationale=rationale,
                        importance=0.5 if importance is None else importance)
        now = utcnow()
        fields: dict[str, Any] = {
            "scope": old.scope, "importance": old.importance if importance is None else importance,
            "location": old.location, "rationale": rationale if rationale is not None else old.rationale,
            "severity": old.severity, "status": old.status, "chain_id": old.chain_id or old.id,
            "version": old.version + 1,
        }
        if old.kind == "decision":  # rendered "(replaces: …)" (docs/decisions.md)
            fields["replaces"] = (old.summary,)
        new = self._knowledge(old.kind, summary, old.tags, now, **fields)
        if new.id == old.id:
            raise CtxgraphError("the new version must say something different from the old one")
        self.store.upsert_knowledge(
            [new, old.model_copy(update={"chain_id": old.chain_id or old.id})], supersedes=[(new.id, old.id, now)]
        )
        return new

    def get_knowledge(self, item_id: str) -> KnowledgeItem:
        if len(item_id) > MAX_ID_CHARS:
            raise InvalidArgumentError(f"invalid knowledge id: {len(item_id):,} characters; at most {MAX_ID_CHARS:,}")
        found = self.store.get_knowledge([item_id])
        if not found:
            raise CtxgraphError(f"unknown knowledge id: {item_id!r}")
        return found[0]

    def add_files(self, entries: Sequence[FileEntry]) -> None:
        """Add or update context-map entries (a file's component and notes)."""
        self.store.upsert_files(entries)

    def search_knowledge(
        self, text: str, *, kinds: Sequence[str] | None = None, window: int = SEARCH_WINDOW
    ) -> tuple[TaskSignals, list[KnowledgeMatch]]:
        """The knowledge a text's signals match, best first.

        The text's keywords and domains (the extractor a task's signals come
        from) are the tags; the store is asked for up to ``window`` items by
        keyword tags and as many by domain tags (tags on more than
        ``limits.TAG_DF_CAP`` items are not read, as for a context); the hits are
        merged, deduplicated and ranked by relevance (keyword tags 1, domain tags
        0.5), then the most recently updated, then the id. ``kinds`` keeps only
        those kinds (``pattern``, ``gotcha``...)."""
        signals = self.extractor.extract(text)
        keyword_hits = (self.store.knowledge_by_tags(signals.keywords, window, max_df=lim.TAG_DF_CAP)
                        if signals.keywords else [])
        domain_hits = (self.store.knowledge_by_tags(signals.domains, window, max_df=lim.TAG_DF_CAP)
                       if signals.domains else [])
        matched: dict[str, set[str]] = {}
        for hit in [*keyword_hits, *domain_hits]:
            matched.setdefault(hit.item.id, set()).update(hit.matched_tags)
        wanted = set(kinds) if kinds else None
        order = {tag: n for n, tag in enumerate((*signals.keywords, *signals.domains))}
        found = []
        for item, _ in merge_hits(keyword_hits, domain_hits, signals):
            if wanted is not None and item.kind not in wanted:
                continue
            tags = tuple(sorted(matched[item.id], key=lambda t: (order.get(t, len(order)), t)))
            found.append(KnowledgeMatch(item=item, matched_tags=tags, relevance=relevance(tags, signals)))
        return signals, found


__all__ = ["SEARCH_WINDOW", "KnowledgeMatch", "KnowledgeMixin"]
