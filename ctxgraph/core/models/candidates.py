"""What the store's reads return: tag hits, dependencies with their handoffs,
recent tasks, blockers, counts, and — for one context — the query and the
candidates it gathers, before ranking."""

from __future__ import annotations

from pydantic import BaseModel

from ctxgraph.core.models.anchors import Anchor
from ctxgraph.core.models.base import VALUE
from ctxgraph.core.models.evidence import HistoryEvidence
from ctxgraph.core.models.files import FileEntry
from ctxgraph.core.models.knowledge import KnowledgeItem
from ctxgraph.core.models.memory import MemoryProject, MemoryRecall
from ctxgraph.core.models.tasks import Task


class KnowledgeHit(BaseModel):
    """A knowledge node found by a tag query, with the tags that matched."""

    model_config = VALUE

    item: KnowledgeItem
    matched_tags: tuple[str, ...]


class TaskHit(BaseModel):
    """A prior task found by a tag query, with the tags that matched."""

    model_config = VALUE

    task: Task
    matched_tags: tuple[str, ...]


class ReadNext(BaseModel):
    model_config = VALUE

    file: str
    reason: str = ""


class DependencyHandoff(BaseModel):
    """One dependency of a task as the store sees it, with its latest handoff."""

    model_config = VALUE

    task: Task
    summary: str | None = None
    files_to_read: tuple[ReadNext, ...] = ()
    files_created: tuple[ReadNext, ...] = ()
    knowledge: tuple[KnowledgeItem, ...] = ()


class ConcurrentTask(BaseModel):
    """Another task in progress, with the files it expects to change: those its
    text names (``mentioned``) and the file items of its latest delivered
    context, in rank order (``delivered``)."""

    model_config = VALUE

    id: str
    intent: str
    mentioned: tuple[str, ...] = ()
    delivered: tuple[str, ...] = ()


class RecentTask(BaseModel):
    model_config = VALUE

    id: str
    intent: str
    success: bool | None
    completed_at: str | None


class Blocker(BaseModel):
    model_config = VALUE

    id: str
    reason: str
    since: str | None


class Stats(BaseModel):
    model_config = VALUE

    labels: dict[str, int]
    relationships: dict[str, int]


class GatherQuery(BaseModel):
    """What one context asks of the store (one round trip on Neo4j)."""

    model_config = VALUE

    keywords: tuple[str, ...]
    domains: tuple[str, ...]
    files: tuple[str, ...]
    dep_ids: tuple[str, ...]
    exclude: tuple[str, ...]
    keyword_limit: int
    domain_limit: int
    related_limit: int
    recent_limit: int
    working_memory: bool
    #: the context map's candidates (not needed when the history ranks files)
    context_map: bool = True
    #: tags on more items than this are left out of the knowledge and related-task
    #: candidates (their rarity weight is next to nothing; reading their items is
    #: what grew with the graph); 0: no cap
    max_tag_df: int = 0
    #: the task whose concurrent work is read (the other tasks in progress, up to
    #: ``concurrent_limit``); None: not read
    concurrent_of: str | None = None
    concurrent_limit: int = 0
    #: read the stored code anchors of the candidates' owners
    #: (:meth:`Candidates.anchor_owners`) in the same read, into
    #: ``Candidates.anchors``: the context's just-in-time check then needs no
    #: read of its own (docs/freshness.md)
    anchors: bool = False


class Candidates(BaseModel):
    """Everything the store returned for one task, before ranking."""

    model_config = VALUE

    keyword_hits: tuple[KnowledgeHit, ...] = ()
    domain_hits: tuple[KnowledgeHit, ...] = ()
    dependencies: tuple[DependencyHandoff, ...] = ()
    context_map: tuple[FileEntry, ...] = ()
    context_map_total: int = 0
    related: tuple[TaskHit, ...] = ()
    recent_tasks: tuple[RecentTask, ...] = ()
    active_blockers: tuple[Blocker, ...] = ()
    #: the other tasks in progress (``GatherQuery.concurrent_of``)
    concurrent: tuple[ConcurrentTask, ...] = ()
    history: HistoryEvidence | None = None
    query_terms: tuple[str, ...] = ()
    #: every indexed project (the associative memory picks one)
    memory_projects: tuple[MemoryProject, ...] = ()
    #: (tag, degree) of every query tag found in the graph, and the number of
    #: taggable items (tasks and knowledge): the evidence of ``ctxgraph.core.rarity``
    tag_df: tuple[tuple[str, int], ...] = ()
    tagged_total: int = 0
    memory: MemoryRecall | None = None
    #: why the associative memory was skipped or partial (debug section only)
    memory_notes: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    #: the code anchors of the candidates: as stored, those of
    #: :meth:`anchor_owners` read by the gather (``GatherQuery.anchors``), by id;
    #: then as the work tree has them now (``ContextService`` checks them just
    #: in time; ``compute.freshness`` applies them, with those on gone files)
    anchors: tuple[Anchor, ...] = ()

    def anchor_owners(self) -> list[str]:
        """The owners whose code anchors a context checks, sorted: the
        dependencies' tasks, the knowledge of their handoffs with a location
        and the knowledge hits with one (``gather.cypher`` reads the same)."""
        owners = {d.task.id for d in self.dependencies}
        owners |= {k.id for d in self.dependencies for k in d.knowledge if k.location}
        owners |= {h.item.id for h in (*self.keyword_hits, *self.domain_hits) if h.item.location}
        return sorted(owners)
