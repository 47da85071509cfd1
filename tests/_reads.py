"""Reads for tests through the paths ctxgraph itself reads by: a context's
candidates through the store's ``gather`` (as the service asks for them), the
history's evidence through ``gather_with_history`` (as a context reads it), the
files' entries through ``export_rows`` (as ``ctxgraph export`` writes them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxgraph.core.models import Candidates, GatherQuery, HistoryEvidence
from ctxgraph.graph.store import KnowledgeStore


def gathered(store: KnowledgeStore, *, keywords: tuple[str, ...] = (), domains: tuple[str, ...] = (),
             files: tuple[str, ...] = (), dep_ids: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
             related_limit: int = 10, recent_limit: int = 10) -> Candidates:
    """The store's ``gather`` with working memory and the context map on."""
    return store.gather(GatherQuery(keywords=keywords, domains=domains, files=files, dep_ids=dep_ids,
                                    exclude=exclude, keyword_limit=10, domain_limit=10,
                                    related_limit=related_limit, recent_limit=recent_limit,
                                    working_memory=True))


#: A gather that asks for nothing: ``history_of`` reads the history alone.
NOTHING = GatherQuery(keywords=(), domains=(), files=(), dep_ids=(), exclude=(), keyword_limit=0,
                      domain_limit=0, related_limit=0, recent_limit=0, working_memory=False, context_map=False)


def history_of(store: KnowledgeStore, terms: Sequence[str], top_files: int = 10,
               vector: Sequence[float] | None = None) -> HistoryEvidence:
    """The history's evidence for ``terms`` (and ``vector``) as a context reads it."""
    return store.gather_with_history(NOTHING, terms, top_files, vector)[1]


def stored_files(store: KnowledgeStore) -> dict[str, dict[str, Any]]:
    """Every ``File`` node's properties by path, in path order."""
    return {row["id"]: row["props"] for row in store.export_rows()
            if row["kind"] == "node" and row["label"] == "File"}


def dependency_edges(store: KnowledgeStore) -> list[tuple[str, str]]:
    """Every (task, dependency) pair, sorted, as the tasks list them."""
    return sorted((t.id, d) for t in store.list_tasks() for d in t.depends_on)
