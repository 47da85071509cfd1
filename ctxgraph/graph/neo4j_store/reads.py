"""Reads: tasks, knowledge and files, the dependency closure, knowledge by
tags (rarity weights from ``ctxgraph.core.rarity``), ``gather`` (every
candidate of a context in one statement) and counts — each in a managed read
transaction, or in the one its caller already runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import ManagedTransaction

from ctxgraph.core import rarity
from ctxgraph.core.models import (
    Anchor,
    Blocker,
    Candidates,
    DependencyHandoff,
    GatherQuery,
    KnowledgeHit,
    KnowledgeItem,
    MemoryProject,
    ReadNext,
    RecentTask,
    Stats,
    Task,
    TaskHit,
    TaskStatus,
)
from ctxgraph.graph.dependencies import reachable_edges
from ctxgraph.graph.neo4j_store.connection import Neo4jConnection
from ctxgraph.graph.records import concurrent_from_props, file_from_props, knowledge_from_props, task_from_props

#: Up to this many start tasks, a dependency closure is one variable-length pattern.
CLOSURE_PATTERN_STARTS = 32
#: Levels of a breadth-first dependency search (one round trip each) before reading every edge.
CLOSURE_MAX_LEVELS = 16


class Reads(Neo4jConnection):
    def get_knowledge(self, ids: Sequence[str]) -> list[KnowledgeItem]:
        wanted = sorted(set(ids))
        rows = self._read(lambda tx: self._rows(tx, "knowledge_get", ids=wanted))
        return [knowledge_from_props(r["props"]) for r in rows]

    def decisions_in_force(self) -> list[KnowledgeItem]:
        rows = self._read(lambda tx: self._rows(tx, "decisions_in_force"))
        return [knowledge_from_props(r["props"]) for r in rows]

    def list_knowledge(
        self, kinds: Sequence[str] | None = None, tags: Sequence[str] = (), task_id: str | None = None,
    ) -> list[tuple[KnowledgeItem, tuple[str, ...]]]:
        wanted = None if kinds is None else sorted(set(kinds))
        rows = self._read(lambda tx: self._rows(tx, "knowledge_list", kinds=wanted, tags=list(tags), task=task_id))
        return [(knowledge_from_props(r["props"]), tuple(sorted(set(r["tasks"])))) for r in rows]

    def get_task(self, task_id: str) -> Task | None:
        found = self.get_tasks([task_id])
        return found[0] if found else None

    def task_with_query_vector(self, task_id: str) -> tuple[Task | None, tuple[str, list[float]] | None]:
        rows = self._read(lambda tx: self._rows(tx, "task_get", ids=[task_id]))
        if not rows:
            return None, None
        props = rows[0]["props"]
        vector, digest = props.get("query_vector"), props.get("query_hash")
        found = (str(digest), [float(x) for x in vector]) if vector is not None and digest else None
        return task_from_props(props, rows[0]["deps"]), found

    def get_tasks(self, task_ids: Sequence[str]) -> list[Task]:
        ids = sorted(set(task_ids))
        rows = self._read(lambda tx: self._rows(tx, "task_get", ids=ids))
        return [task_from_props(r["props"], r["deps"]) for r in rows]

    def list_tasks(self, status: TaskStatus | None = None) -> list[Task]:
        value = status.value if status else None
        rows = self._read(lambda tx: self._rows(tx, "tasks_list", status=value))
        return [task_from_props(r["props"], r["deps"]) for r in rows]

    def _dependency_edges(self) -> list[tuple[str, str]]:
        """Every DEPENDS_ON edge: ``dependency_closure`` past its levels."""
        rows = self._read(lambda tx: self._rows(tx, "dependency_edges"))
        return [(r["task"], r["dependency"]) for r in rows]

    def dependency_closure(self, task_ids: Sequence[str]) -> list[tuple[str, str]]:
        """A few starts: one variable-length pattern (13 ms for 10 starts on the
        10,000-node benchmark graph, whose chains are deep). Many: it searches
        from each start on its own (1.6 s for 1,900 starts, where every edge
        reads in 72 ms), so a breadth-first search with one visited set runs
        instead, one statement per level, and past ``CLOSURE_MAX_LEVELS`` levels
        every edge is read."""
        ids = sorted(set(task_ids))
        if len(ids) <= CLOSURE_PATTERN_STARTS:
            rows = self._read(lambda tx: self._rows(tx, "dependency_closure", ids=ids))
            return sorted({(r["task"], r["dependency"]) for r in rows})

        def step(tx: ManagedTransaction, frontier: list[str]) -> list[tuple[str, str]]:
            return [(r["task"], r["dependency"]) for r in self._rows(tx, "dependency_step", ids=frontier)]

        found = self._read(lambda tx: reachable_edges(lambda f: step(tx, f), ids, max_levels=CLOSURE_MAX_LEVELS))
        return self._dependency_edges() if found is None else found

    def _tag_stats(self, tx: ManagedTransaction, tags: Sequence[str]) -> tuple[dict[str, int], int]:
        """The degree of each of ``tags`` in the graph (absent ones left out) and the taggable items."""
        stats = self._rows(tx, "tag_stats", tags=list(tags))[0]
        return {name: df for name, df in stats["dfs"]}, stats["total"]

    def _weighted(self, tx: ManagedTransaction, tags: Sequence[str], max_df: int) -> list[tuple[str, float]]:
        """(tag, rarity weight) of the tags under the degree cap (``max_df``: 0 for none)."""
        dfs, total = self._tag_stats(tx, tags)
        return rarity.weighted(tags, dfs, total, max_df)

    def knowledge_by_tags(self, tags: Sequence[str], limit: int, *, max_df: int = 0) -> list[KnowledgeHit]:
        if not tags or limit <= 0:
            return []

        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            return self._rows(tx, "knowledge_by_tags", weighted=self._weighted(tx, tags, max_df), limit=limit)

        return [_hit(r) for r in self._read(work)]

    def tasks_by_tags(self, tags: Sequence[str], limit: int, *, max_df: int = 0) -> list[TaskHit]:
        if not tags or limit <= 0:
            return []

        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            return self._rows(tx, "tasks_by_tags", weighted=self._weighted(tx, tags, max_df), limit=limit)

        return [TaskHit(task=task_from_props(r["props"], r["deps"]), matched_tags=tuple(sorted(r["matched"])))
                for r in self._read(work)]

    def gather(self, query: GatherQuery) -> Candidates:
        def work(tx: ManagedTransaction) -> Candidates:
            return self._gather(tx, query, *self._tag_stats(tx, [*query.keywords, *query.domains]))

        return self._read(work)

    def _gather(self, tx: ManagedTransaction, query: GatherQuery, dfs: dict[str, int], total: int) -> Candidates:
        """``gather.cypher`` given the query tags' degrees and the taggable items (the tag rarity's evidence)."""
        return candidates_of_row(query, self._gather_row(tx, query, dfs, total), dfs, total)

    def _gather_row(self, tx: ManagedTransaction, query: GatherQuery, dfs: dict[str, int],
                    total: int) -> dict[str, Any]:
        """``gather.cypher``'s one row, as ``_gather`` asks for it."""
        def under_cap(tags: Sequence[str]) -> list[tuple[str, float]]:
            return rarity.weighted(tags, dfs, total, query.max_tag_df)

        row = self._rows(
            tx, "gather", keywords=list(query.keywords), domains=list(query.domains), files=list(query.files),
            dep_ids=sorted(set(query.dep_ids)), keyword_limit=query.keyword_limit, domain_limit=query.domain_limit,
            keyword_weighted=under_cap(query.keywords), domain_weighted=under_cap(query.domains),
            related_weighted=under_cap([*query.keywords, *query.domains]), exclude=list(query.exclude),
            related_limit=query.related_limit, working_memory=query.working_memory,
            recent_limit=query.recent_limit, context_map=query.context_map,
            concurrent_of=query.concurrent_of, concurrent_limit=query.concurrent_limit, anchors=query.anchors,
        )[0]
        return row

    def stats(self) -> Stats:
        def work(tx: ManagedTransaction) -> Stats:
            labels = {r["label"]: r["count"] for r in self._rows(tx, "stats_labels")}
            rels = {r["type"]: r["count"] for r in self._rows(tx, "stats_relationships")}
            return Stats(labels=labels, relationships=rels)

        return self._read(work)


def candidates_of_row(query: GatherQuery, r: dict[str, Any], dfs: dict[str, int], total: int) -> Candidates:
    """The ``gather`` statement's one row as candidates."""
    recent = [task_from_props(p) for p in r["recent"]]
    return Candidates(
        keyword_hits=tuple(_hit(h) for h in r["keyword_hits"]) if query.keywords else (),
        domain_hits=tuple(_hit(h) for h in r["domain_hits"]) if query.domains else (),
        dependencies=tuple(_dependency(d) for d in r["dependencies"]),
        context_map=tuple(file_from_props(p) for p in r["files"]),
        context_map_total=r["file_count"],
        related=tuple(
            TaskHit(task=task_from_props(t["props"], t["deps"]), matched_tags=tuple(sorted(t["matched"])))
            for t in r["related"]
        ),
        recent_tasks=tuple(RecentTask(id=t.id, intent=t.intent, success=t.success, completed_at=t.completed_at)
                           for t in recent),
        active_blockers=tuple(Blocker(id=b["id"], reason=b["reason"], since=b["since"]) for b in r["blockers"]),
        concurrent=tuple(concurrent_from_props(c["props"], c["record"]) for c in r["concurrent"]),
        memory_projects=tuple(MemoryProject(**p) for p in r["projects"]),
        tag_df=tuple(sorted(dfs.items())),
        tagged_total=total,
        anchors=tuple(sorted((Anchor.model_validate(p) for p in r["anchors"]), key=lambda a: a.id)),
    )


def _dependency(r: dict[str, Any]) -> DependencyHandoff:
    to_read = sorted((r["to_read"] or []), key=lambda x: x["file"])
    created = sorted((r["created"] or []), key=lambda x: x["file"])
    knowledge = sorted((knowledge_from_props(p) for p in (r["knowledge"] or [])), key=lambda k: (k.kind, k.id))
    return DependencyHandoff(
        task=task_from_props(r["task"], r["deps"]),
        summary=r["summary"],
        files_to_read=tuple(ReadNext(file=x["file"], reason=x["reason"] or "") for x in to_read),
        files_created=tuple(ReadNext(file=x["file"], reason=x["reason"] or "") for x in created),
        knowledge=tuple(knowledge),
    )


def _hit(r: dict[str, Any]) -> KnowledgeHit:
    return KnowledgeHit(item=knowledge_from_props(r["props"]), matched_tags=tuple(sorted(r["matched"])))
