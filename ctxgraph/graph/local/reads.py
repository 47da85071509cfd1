"""The embedded store's reads: tasks, knowledge, files, dependencies, the
working memory, the tag queries and ``gather`` (a context's candidates).
Each call is one read transaction (a consistent snapshot)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from ctxgraph.core import rarity
from ctxgraph.core.models import (
    KIND_LABELS,
    Blocker,
    Candidates,
    ConcurrentTask,
    DependencyHandoff,
    FileEntry,
    GatherQuery,
    KnowledgeHit,
    KnowledgeItem,
    ReadNext,
    RecentTask,
    Stats,
    Task,
    TaskHit,
    TaskStatus,
)
from ctxgraph.graph.local import anchors, memory, nodes, sql
from ctxgraph.graph.local.connection import Connection
from ctxgraph.graph.records import concurrent_from_props, file_from_props, knowledge_from_props, task_from_props

_TAGGABLE_LABELS = json.dumps(["Task", *nodes.KNOWLEDGE_LABELS])


def _weighted(dfs: dict[str, int], total: int, tags: Sequence[str], max_df: int) -> str:
    """JSON [[tag, weight], ...] of the tags a candidate query reads (``max_df``: 0 for no cap)."""
    return json.dumps(rarity.weighted(tags, dfs, total, max_df))


def _deps(cur: sqlite3.Cursor, task_id: str) -> list[str]:
    rows = cur.execute(sql.TASK_DEPENDENCIES, (task_id,)).fetchall()
    return sorted(r[0] for r in rows)


def _task(cur: sqlite3.Cursor, task_id: str) -> Task | None:
    props = nodes.node(cur, "Task", task_id)
    return None if props is None else task_from_props(props, _deps(cur, task_id))


def _knowledge_hits(cur: sqlite3.Cursor, weighted: str, limit: int) -> list[KnowledgeHit]:
    rows = cur.execute(sql.KNOWLEDGE_BY_TAGS, (weighted, json.dumps(nodes.KNOWLEDGE_LABELS), limit)).fetchall()
    return [
        KnowledgeHit(
            item=knowledge_from_props(nodes.loads(props)),
            matched_tags=tuple(sorted(matched.split("\x1f"))),
        )
        for props, matched, _ in rows
    ]


class Reads:
    """The reads over one connection; keeps the number of taggable items
    (the ``n`` of the tag rarity) until the database changes."""

    def __init__(self, db: Connection) -> None:
        self.db = db
        self._tagged_cache: tuple[tuple[int, int], int] | None = None  # (data version, count)

    def get_knowledge(self, ids: Sequence[str]) -> list[KnowledgeItem]:
        with self.db.read() as cur:
            rows = cur.execute(
                sql.KNOWLEDGE_GET, (json.dumps(sorted(set(ids))), json.dumps(nodes.KNOWLEDGE_LABELS)),
            ).fetchall()
        return [knowledge_from_props(nodes.loads(r[0])) for r in rows]

    def decisions_in_force(self) -> list[KnowledgeItem]:
        with self.db.read() as cur:
            rows = cur.execute(sql.DECISIONS_IN_FORCE).fetchall()
        return [knowledge_from_props(nodes.loads(r[0])) for r in rows]

    def list_knowledge(
        self, kinds: Sequence[str] | None = None, tags: Sequence[str] = (), task_id: str | None = None,
    ) -> list[tuple[KnowledgeItem, tuple[str, ...]]]:
        labels = nodes.KNOWLEDGE_LABELS if kinds is None else [KIND_LABELS[k] for k in kinds if k in KIND_LABELS]
        with self.db.read() as cur:
            rows = cur.execute(sql.KNOWLEDGE_LIST, (json.dumps(sorted(set(labels))), json.dumps(list(tags)),
                                                    task_id)).fetchall()
        return [(knowledge_from_props(nodes.loads(props)), tuple(sorted(set(json.loads(tasks)))))
                for props, tasks in rows]

    def get_task(self, task_id: str) -> Task | None:
        with self.db.read() as cur:
            return _task(cur, task_id)

    def _get_task_in(self, cur: sqlite3.Cursor, task_id: str) -> Task | None:
        """``get_task`` within the read ``cur``."""
        return _task(cur, task_id)

    def get_tasks(self, task_ids: Sequence[str]) -> list[Task]:
        with self.db.read() as cur:
            found = (_task(cur, tid) for tid in sorted(set(task_ids)))
            return [t for t in found if t is not None]

    def list_tasks(self, status: TaskStatus | None = None) -> list[Task]:
        with self.db.read() as cur:
            rows = cur.execute(sql.TASKS_LIST, (status, status)).fetchall()
            deps: dict[str, list[str]] = {}
            for src, dst in cur.execute(sql.DEPENDS_ON_ALL):
                deps.setdefault(src, []).append(dst)
            out = []
            for (text,) in rows:
                props = nodes.loads(text)
                out.append(task_from_props(props, deps.get(props["id"], [])))
            return out

    def dependency_closure(self, task_ids: Sequence[str]) -> list[tuple[str, str]]:
        with self.db.read() as cur:
            rows = cur.execute(sql.DEPENDENCY_CLOSURE, (json.dumps(sorted(set(task_ids))),)).fetchall()
            return [(a, b) for a, b in rows]

    # -- tags ---------------------------------------------------------------------

    def _tagged_total(self, cur: sqlite3.Cursor) -> int:
        """Tasks and knowledge items: the ``n`` of the tag rarity (cached until the database changes)."""
        version = self.db.version(cur)
        if self._tagged_cache is None or self._tagged_cache[0] != version:
            kept = self.db.has_aggregates(cur)
            (total,) = cur.execute(sql.TAGGED_TOTAL_KEPT if kept else sql.TAGGED_TOTAL,
                                   (_TAGGABLE_LABELS,)).fetchone()
            self._tagged_cache = (version, int(total))
        return self._tagged_cache[1]

    def _tag_stats(self, cur: sqlite3.Cursor, tags: Sequence[str]) -> tuple[dict[str, int], int]:
        """Degree of each tag of ``tags`` in the graph (absent tags left out), and the taggable items."""
        if not tags:
            return {}, 0
        statement = sql.TAG_DEGREES_KEPT if self.db.has_aggregates(cur) else sql.TAG_DEGREES
        rows = cur.execute(statement, (json.dumps(list(dict.fromkeys(tags))),)).fetchall()
        return {name: int(df) for name, df in rows}, self._tagged_total(cur)

    def knowledge_by_tags(self, tags: Sequence[str], limit: int, *, max_df: int = 0) -> list[KnowledgeHit]:
        if not tags or limit <= 0:
            return []
        with self.db.read() as cur:
            dfs, total = self._tag_stats(cur, tags)
            return _knowledge_hits(cur, _weighted(dfs, total, tags, max_df), limit)

    def tasks_by_tags(self, tags: Sequence[str], limit: int, *, max_df: int = 0) -> list[TaskHit]:
        if not tags or limit <= 0:
            return []
        with self.db.read() as cur:
            dfs, total = self._tag_stats(cur, tags)
            rows = cur.execute(sql.KNOWLEDGE_BY_TAGS, (_weighted(dfs, total, tags, max_df), '["Task"]', limit))
            found = [(nodes.loads(props)["id"], tuple(sorted(matched.split("\x1f")))) for props, matched, _ in rows]
        return self._task_hits(found)

    def _task_hits(self, found: Sequence[tuple[str, tuple[str, ...]]]) -> list[TaskHit]:
        """The tasks of (id, matched tags) pairs (``History.related``), in their
        order; one deleted since is left out."""
        if not found:
            return []
        ids = json.dumps([tid for tid, _ in found])
        with self.db.read() as cur:
            props = {p["id"]: p for p in (nodes.loads(text) for (text,) in cur.execute(sql.TASKS_GET, (ids,)))}
            deps: dict[str, list[str]] = {}
            for src, dst in cur.execute(sql.TASKS_DEPENDENCIES, (ids,)):
                deps.setdefault(src, []).append(dst)
        return [TaskHit(task=task_from_props(props[tid], sorted(deps.get(tid, ()))), matched_tags=matched)
                for tid, matched in found if tid in props]

    # -- a context's candidates ---------------------------------------------------------

    def _dependency_handoffs(self, task_ids: Sequence[str]) -> list[DependencyHandoff]:
        with self.db.read() as cur:
            out = []
            for dep_id in sorted(set(task_ids)):
                dep = _task(cur, dep_id)
                if dep is None:
                    continue
                row = cur.execute(sql.LAST_HANDOFF, (dep_id,)).fetchone()
                if row is None:
                    out.append(DependencyHandoff(task=dep))
                    continue
                handoff = nodes.node(cur, "Handoff", row[0]) or {}
                links = cur.execute(sql.HANDOFF_LINKS, (row[0],)).fetchall()
                to_read, created, knowledge = [], [], []
                for rel, dst_label, dst_id, props_text in links:
                    props = nodes.loads(props_text)
                    if rel == "READ_NEXT":
                        to_read.append(ReadNext(file=dst_id, reason=props.get("reason", "")))
                    elif rel == "CREATED":
                        created.append(ReadNext(file=dst_id, reason=props.get("purpose", "")))
                    elif rel == "DISCOVERED":
                        found = nodes.node(cur, dst_label, dst_id)
                        if found is not None:
                            knowledge.append(knowledge_from_props(found))
                out.append(
                    DependencyHandoff(
                        task=dep,
                        summary=handoff.get("summary"),
                        files_to_read=tuple(to_read),
                        files_created=tuple(created),
                        knowledge=tuple(sorted(knowledge, key=lambda k: (k.kind, k.id))),
                    )
                )
            return out

    def _context_map(
        self, keywords: Sequence[str], domains: Sequence[str], files: Sequence[str]
    ) -> list[FileEntry]:
        with self.db.read() as cur:
            rows = cur.execute(
                sql.CONTEXT_MAP, (json.dumps(list(keywords)), json.dumps(list(domains)), json.dumps(list(files))),
            ).fetchall()
        return [file_from_props(nodes.loads(r[0])) for r in rows]

    def _recent_tasks(self, n: int) -> list[RecentTask]:
        with self.db.read() as cur:
            if self.db.has_index(cur, "tasks_finished"):
                rows = cur.execute(sql.RECENT_INDEXED, (n,)).fetchall()
            else:
                rows = cur.execute(sql.RECENT, (n,)).fetchall()
        out = []
        for (text,) in rows:
            task = task_from_props(nodes.loads(text))
            out.append(
                RecentTask(id=task.id, intent=task.intent, success=task.success,
                           completed_at=task.completed_at)
            )
        return out

    def _active_blockers(self) -> list[Blocker]:
        with self.db.read() as cur:
            if self.db.has_index(cur, "tasks_blocked"):
                rows = cur.execute(sql.BLOCKED_INDEXED).fetchall()
            else:
                rows = cur.execute(sql.BLOCKED).fetchall()
        out = []
        for (text,) in rows:
            props = nodes.loads(text)
            out.append(
                Blocker(id=props["id"], reason=props.get("blocked_reason") or "",
                        since=props.get("blocked_at"))
            )
        return out

    def _concurrent(self, task_id: str, limit: int) -> list[ConcurrentTask]:
        """The other tasks in progress with their latest delivered context's record."""
        with self.db.read() as cur:
            statement = sql.IN_PROGRESS_INDEXED if self.db.has_index(cur, "tasks_in_progress") else sql.IN_PROGRESS
            found = [nodes.loads(text) for (text,) in cur.execute(statement, (task_id, limit))]
            if not found or not self.db.has_index(cur, "deliveries_by_task"):
                return [concurrent_from_props(props, None) for props in found]
            out = []
            for props in found:
                row = cur.execute(sql.LATEST_DELIVERY, (props["id"],)).fetchone()
                out.append(concurrent_from_props(props, row[0] if row else None))
            return out

    def _count(self, label: str) -> int:
        with self.db.read() as cur:
            statement = sql.COUNT_LABEL_KEPT if self.db.has_aggregates(cur) else sql.COUNT_LABEL
            row = cur.execute(statement, (label,)).fetchone()
        return int(row[0]) if row else 0

    def stats(self) -> Stats:
        with self.db.read() as cur:
            labels = dict(cur.execute(sql.STATS_LABELS))
            rels = dict(cur.execute(sql.STATS_RELATIONSHIPS))
        return Stats(labels=labels, relationships=rels)

    def gather(self, query: GatherQuery) -> Candidates:
        """A context's candidates but the related tasks, which the history finds
        (``History.related``) from the tag degrees returned here. In-process:
        the per-part queries cost no round trips."""
        wm = query.working_memory
        tags = [*query.keywords, *query.domains]
        with self.db.read() as cur:  # one snapshot: the parts' own reads join it
            dfs, total = self._tag_stats(cur, tags)
            knowledge_limits = ((query.keywords, query.keyword_limit), (query.domains, query.domain_limit))
            keyword_hits, domain_hits = (
                _knowledge_hits(cur, _weighted(dfs, total, part, query.max_tag_df), limit)
                if part and limit > 0 else []
                for part, limit in knowledge_limits
            )
            found = Candidates(
                keyword_hits=tuple(keyword_hits),
                domain_hits=tuple(domain_hits),
                dependencies=tuple(self._dependency_handoffs(query.dep_ids)) if query.dep_ids else (),
                context_map=tuple(self._context_map(query.keywords, query.domains, query.files))
                if query.context_map else (),
                context_map_total=self._count("File"),
                recent_tasks=tuple(self._recent_tasks(query.recent_limit)) if wm else (),
                active_blockers=tuple(self._active_blockers()) if wm else (),
                concurrent=tuple(self._concurrent(query.concurrent_of, query.concurrent_limit))
                if query.concurrent_of is not None and query.concurrent_limit > 0 else (),
                memory_projects=tuple(memory.projects(self.db)),
                tag_df=tuple(sorted(dfs.items())),
                tagged_total=total,
            )
            if query.anchors:  # the just-in-time check's anchors, in this read (as gather.cypher)
                found = found.model_copy(update={"anchors": tuple(anchors.of(cur, found.anchor_owners(), ()))})
            return found
