"""ContextService: the API. Wires a store, the signal extractor and compute.

    with ContextService.open() as svc:             # embedded store
        svc.add_task(Task(id="task-1", objective="Add JWT login"))
        ctx = svc.compute("task-1")
        print(ctx.markdown)

This module opens and closes the service, keeps the tasks and computes their
context; the rest is in the mixins it joins (:mod:`.ingest`, :mod:`.knowledge`,
:mod:`.feedback`, :mod:`.admin`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ctxgraph.compute import limits as lim
from ctxgraph.compute.config import STRATEGIES, ContextConfig, Strategy
from ctxgraph.core.documents import validate
from ctxgraph.core.models import (
    Candidates,
    Complexity,
    GatherQuery,
    MemoryRecall,
    Task,
    TaskDoc,
    TaskStatus,
    utcnow,
)
from ctxgraph.errors import (
    CtxgraphError,
    DependencyCycleError,
    InvalidArgumentError,
    StoreUnavailableError,
    UnknownTaskError,
)
from ctxgraph.graph.dependencies import find_cycle
from ctxgraph.graph.factory import StoreLocation, chosen_location, open_store
from ctxgraph.graph.store import UnavailableStore
from ctxgraph.service.admin import AdminMixin
from ctxgraph.service.decisions import DecisionsMixin
from ctxgraph.service.feedback import FeedbackMixin
from ctxgraph.service.ingest import IngestMixin
from ctxgraph.service.knowledge import KnowledgeMixin
from ctxgraph.service.past import PastMixin
from ctxgraph.service.vectors import VectorsMixin
from ctxgraph.signals import SignalExtractor, TaskSignals, terms

if TYPE_CHECKING:
    from ctxgraph.compute.output import ComputedContext

log = logging.getLogger(__name__)

_RUNTIME_FIELDS = ("status", "success", "outcome_summary", "completed_at", "blocked_reason", "blocked_at")


class ContextService(PastMixin, AdminMixin, KnowledgeMixin, IngestMixin, VectorsMixin, FeedbackMixin,
                     DecisionsMixin):
    """Computes task context from a knowledge store; owns the store it opened."""

    # -- lifecycle ---------------------------------------------------------------

    @classmethod
    def open(
        cls,
        store: StoreLocation | str | os.PathLike[str] | None = None,
        *,
        neo4j_uri: str | None = None,
        neo4j_user: str | None = None,
        neo4j_password: str | None = None,
        neo4j_database: str | None = None,
        domains: Mapping[str, Iterable[str]] | None = None,
        config: ContextConfig | None = None,
        settings_file: str | os.PathLike[str] | None = None,
        read_only: bool = False,
        root: str | os.PathLike[str] | None = None,
    ) -> ContextService:
        """Open the store ``store`` names (a path, ``sqlite:///PATH`` or a Neo4j
        URI: :func:`ctxgraph.graph.factory.parse_location`), else the embedded
        store ``CTXGRAPH_STORE`` names, else the nearest ``.ctxgraph/graph.db``
        from the current folder upwards, else ``./.ctxgraph/graph.db``; with
        ``neo4j_uri``, that Neo4j server.

        ``read_only`` opens the store for reading only: the embedded file with
        SQLite's ``mode=ro`` (it must exist; nothing is created), Neo4j with
        READ sessions and no schema statements. A write then fails with
        ``StoreUnavailableError``.

        Limiter settings and extra domains come from ``config``/``domains`` when
        given, else from ``settings_file``, else from the nearest
        ``ctxgraph.toml`` or ``[tool.ctxgraph]`` in ``pyproject.toml``.

        The project's root (:attr:`root`) is ``root``, else found from the
        settings file and the store (:func:`ctxgraph.service.root.find_root`).
        """
        from ctxgraph.service.root import find_root
        from ctxgraph.settings import load_settings

        settings = load_settings(Path(settings_file) if settings_file else None)
        config = config or settings.context
        domains = domains or settings.domains
        location = chosen_location(store, neo4j_uri=neo4j_uri, database=neo4j_database)
        opened = open_store(location, read_only=read_only, user=neo4j_user, password=neo4j_password)
        store_path = location.path
        svc = cls(opened, SignalExtractor(domains=domains) if domains else None, config)
        from ctxgraph.memory.secrets import SecretFilter

        svc.secrets = SecretFilter(settings.secret_files, settings.secret_patterns)
        svc.root = find_root(Path(root) if root is not None else None, settings_source=settings.source,
                             store_path=store_path)
        return svc

    @classmethod
    def unavailable(cls, location: str, reason: str) -> ContextService:
        """A service whose store could not be opened: contexts of ``Task`` values
        are computed from nothing stored, and say what is missing."""
        from ctxgraph.settings import load_settings

        settings = load_settings()
        extractor = SignalExtractor(domains=settings.domains) if settings.domains else None
        return cls(UnavailableStore(location, reason), extractor, settings.context)

    def close(self) -> None:
        """Write the recorded deliveries still queued, then close the store."""
        self._close_outcomes()
        self.store.close()

    def __enter__(self) -> ContextService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tasks -------------------------------------------------------------------

    def signals_for(self, task: Task) -> TaskSignals:
        return self.extractor.extract(task.text, task.type)

    def add_task(self, task: Task | TaskDoc | Mapping[str, Any]) -> Task:
        return self.add_tasks([task])[0]

    def add_tasks(self, tasks: Sequence[Task | TaskDoc | Mapping[str, Any]]) -> list[Task]:
        """Create or update tasks with their signals and dependencies, as one write.

        A task that already finished keeps its outcome: re-adding it updates its
        text but never turns it back to pending. Unknown dependencies and
        cycles are refused before anything is written.
        """
        given = [_as_task(t) for t in tasks]
        typed = [_type_given(t) for t in tasks]
        ids = [t.id for t in given]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise CtxgraphError(f"task ids given twice: {', '.join(dupes)}")
        existing = {t.id: t for t in self.store.get_tasks(ids)}
        known = set(ids)
        missing = sorted({d for t in given for d in t.depends_on if d not in known})
        if missing:
            found = {t.id for t in self.store.get_tasks(missing)}
            for dep in missing:
                if dep not in found:
                    raise UnknownTaskError(dep)
        self._check_cycles([(t.id, d) for t in given for d in t.depends_on])
        now = utcnow()
        prepared = []
        # A task given no type gets the first its text names (fix/bug/leak -> bugfix, ...), else feature.
        signals = self.extractor.extract_many([t.text for t in given],
                                              [t.type if known_type else None for t, known_type in zip(given, typed,
                                                                                                         strict=True)])
        for task, sig, known_type in zip(given, signals, typed, strict=True):
            old = existing.get(task.id)
            update: dict[str, Any] = {"signals": sig, "updated_at": now,
                                      "created_at": old.created_at if old else now}
            if not known_type:
                update["type"] = sig.task_types[0] if sig.task_types else "feature"
            if old is not None:
                update["depends_on"] = tuple(sorted(set(old.depends_on) | set(task.depends_on)))
                if old.status in (TaskStatus.COMPLETED, TaskStatus.FAILED):
                    update.update({f: getattr(old, f) for f in _RUNTIME_FIELDS})
            if update.get("status", task.status) is TaskStatus.BLOCKED and not task.blocked_at:
                update.setdefault("blocked_at", now)
            prepared.append(task.model_copy(update=update))
        self.store.upsert_tasks(prepared)
        self.store_query_vectors(prepared)  # after the write, one batch: their contexts read them
        return prepared

    def add_dependency(self, task_id: str, depends_on: str) -> None:
        """Make ``task_id`` depend on ``depends_on``; refused if it closes a cycle."""
        tasks = {t.id: t for t in self.store.get_tasks([task_id, depends_on])}
        for tid in (task_id, depends_on):
            if tid not in tasks:
                raise UnknownTaskError(tid)
        if task_id == depends_on:
            raise DependencyCycleError([task_id, task_id])
        self._check_cycles([(task_id, depends_on)])
        task = tasks[task_id]
        if depends_on in task.depends_on:
            return
        self.store.upsert_tasks(
            [task.model_copy(update={"depends_on": (*task.depends_on, depends_on), "updated_at": utcnow()})]
        )

    def _check_cycles(self, new_edges: Sequence[tuple[str, str]]) -> None:
        """Refuse ``new_edges`` if they close a cycle. Only the part of the
        graph reachable from their ends is read: a depth-first search from the
        new edges' sources visits nothing else, so it finds the same cycle (the
        same message) as one over every edge, at a cost proportional to the new
        edges' reach rather than to the store."""
        if not new_edges:
            return
        reach = self.store.dependency_closure(sorted({t for edge in new_edges for t in edge}))
        cycle = find_cycle(reach, new_edges)
        if cycle is not None:
            raise DependencyCycleError(cycle)

    def get_task(self, task_id: str) -> Task:
        task = self.store.get_task(task_id)
        if task is None:
            raise UnknownTaskError(task_id)
        return task

    def list_tasks(self, status: TaskStatus | str | None = None) -> list[Task]:
        return self.store.list_tasks(None if status is None else _choice("status", status, TaskStatus))

    def block(self, task_id: str, reason: str) -> None:
        self.store.set_status(task_id, TaskStatus.BLOCKED, reason=reason, at=utcnow())

    def unblock(self, task_id: str) -> None:
        self.store.set_status(task_id, TaskStatus.PENDING, reason=None, at=utcnow())

    # -- compute -------------------------------------------------------------------

    def gather_query(self, task: Task, signals: TaskSignals) -> GatherQuery:
        """What a context of ``task`` asks of the store (:meth:`gather`)."""
        return GatherQuery(
            keywords=signals.keywords, domains=signals.domains, files=signals.files_mentioned,
            dep_ids=task.depends_on, exclude=(task.id, *task.depends_on),
            keyword_limit=lim.KEYWORD_QUERY_LIMIT, domain_limit=lim.DOMAIN_QUERY_LIMIT,
            related_limit=lim.RELATED_TASK_QUERY_LIMIT, recent_limit=lim.RECENT_TASKS,
            working_memory=task.requires_context, max_tag_df=lim.TAG_DF_CAP,
            # (a finished task's context, replayed, has no concurrent work)
            concurrent_of=None if task.status in (TaskStatus.COMPLETED, TaskStatus.FAILED)
            or lim.CONCURRENT_TASKS_LIMIT <= 0 else task.id,
            concurrent_limit=lim.CONCURRENT_TASKS_LIMIT,
            # the anchors the just-in-time check needs, read with the rest (``_fresh``)
            anchors=self._checks_anchors(),
        )

    def gather(self, task: Task, signals: TaskSignals, *, stored: bool = False,
               query_vector: tuple[str, list[float]] | None = None, memory: bool | None = None,
               memory_project: str | None = None, config: ContextConfig | None = None) -> Candidates:
        """Phase 2-4 candidates and working memory from the store (the IO half).
        ``stored``: ``task`` was read from the store, with ``query_vector`` (its
        stored query vector: text hash, vector), used when of its current text;
        one made here is stored with it. ``memory``, ``memory_project`` and
        ``config``: as for :meth:`compute`.

        One read transaction (two statements on Neo4j). If it fails (server down, timeout)
        the context is computed from nothing stored, with a note in the debug
        section saying what is missing.
        """
        query = self.gather_query(task, signals)
        query_terms = tuple(terms(task.text))
        notes: list[str] = []
        try:
            vector = self._query_vector(task, notes, stored=stored, known=query_vector)
            # The history ranks the files; the context map's own filter is the
            # fallback for a graph without files only. One read transaction.
            found, history = self.store.gather_with_history(query, query_terms, lim.CONTEXT_MAP_TOP, vector)
            recalled: MemoryRecall | None = None
            use = self.memory and (config or self.config).memory if memory is None else memory
            if memory is None and self.memory and not use:
                notes.append("associative memory off: memory = false in the settings")
            if use:
                from ctxgraph.memory.recall import recall
                from ctxgraph.service.root import pick_project

                wanted, chosen = pick_project(found.memory_projects, memory_project or self.memory_project,
                                              self.root)
                if chosen:
                    notes.append(chosen)
                if vector is None and any(p.embeddings for p in found.memory_projects):
                    vector = self._query_vector(task, notes, stored=stored, known=query_vector, needed=True)
                recalled, memory_notes = recall(self.store, found.memory_projects, task.text, query_terms,
                                                project=wanted,
                                                stale_hours=(config or self.config).memory_stale_hours,
                                                embedder=self.embedder, query_vector=vector,
                                                check_files=self.check_memory, secrets=self.secrets)
                notes += memory_notes
            return found.model_copy(update={"history": history, "query_terms": query_terms, "memory": recalled,
                                            "memory_notes": tuple(notes)})
        except StoreUnavailableError as exc:
            log.warning("context of %s computed without the store: %s", task.id, exc)
            return Candidates(notes=(f"missing knowledge, dependency handoffs, context map, related tasks "
                                     f"and working memory: {exc}",))

    def compute(
        self,
        task: str | Task,
        *,
        complexity: Complexity | str | None = None,
        budget: int | None = None,
        strategy: Strategy | None = None,
        debug: bool = False,
        explain: bool = False,
        template: str | None = None,
        now: datetime | None = None,
        record: bool = True,
        memory: bool | None = None,
        memory_project: str | None = None,
        config: ContextConfig | None = None,
    ) -> ComputedContext:
        """The computed context of a stored task (by id) or of a ``Task`` value.

        ``budget`` (tokens) and ``strategy`` override the settings for this call;
        ``explain`` adds every candidate with its score parts and fate.
        ``record=False``: not recorded as delivered (see :meth:`record_delivery`).
        ``memory`` (use the associative memory), ``memory_project`` (the indexed
        project to search) and ``config`` (the settings) are this call's, instead
        of the service's ``memory``, ``memory_project`` and ``config``.
        """
        tier = _choice("complexity", complexity, Complexity) if complexity is not None else None
        if strategy is not None and strategy not in STRATEGIES:
            raise InvalidArgumentError(f"strategy: {strategy!r} is not one of {', '.join(STRATEGIES)}")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise InvalidArgumentError(f"budget: {budget!r} is not a whole number of tokens of at least 1")
        stored, known = isinstance(task, str), None
        if isinstance(task, str):
            found, known = self.store.task_with_query_vector(task)
            if found is None:
                raise UnknownTaskError(task)
            task = found
        elif not isinstance(task, Task):
            raise InvalidArgumentError(f"task: expected a task id (str) or a Task, got {type(task).__name__}")
        signals = task.signals or self.signals_for(task)
        tier = tier or task.complexity
        config = config or self.config
        if budget is not None or strategy is not None:
            update: dict[str, Any] = {}
            if budget is not None:
                update["budget"] = budget
            if strategy is not None:
                update["strategy"] = strategy
            config = ContextConfig.model_validate({**config.model_dump(), **update})
        from ctxgraph.compute.context import compute_context  # here: commands computing no context skip it

        candidates, files = self._fresh(self.gather(task, signals, stored=stored, query_vector=known,
                                                    memory=memory, memory_project=memory_project, config=config))
        ctx = compute_context(
            task, signals, candidates, lim.limits_for(tier), complexity=tier.value, config=config,
            now=now, debug=debug, template=template, explain=explain, files=files,
        )
        if record:
            self.record_delivery(ctx)
        return ctx


def _type_given(value: Task | TaskDoc | Mapping[str, Any]) -> bool:
    """Whether a task to add names its type (else it is inferred from its text)."""
    if isinstance(value, Task | TaskDoc):
        return "type" in value.model_fields_set
    return bool(value.get("type"))


def _as_task(value: Task | TaskDoc | Mapping[str, Any]) -> Task:
    if isinstance(value, Task):
        return value
    if isinstance(value, TaskDoc):
        return value.to_task()
    return validate(TaskDoc, dict(value), "<task>").to_task()


E = TypeVar("E", bound=Enum)


def _choice(name: str, value: object, allowed: type[E]) -> E:
    """``value`` as a member of ``allowed``, or an error naming the argument and its values."""
    if isinstance(value, allowed):
        return value
    try:
        return allowed(value)
    except ValueError:
        choices = ", ".join(str(m.value) for m in allowed)
        raise InvalidArgumentError(f"{name}: {value!r} is not one of {choices}") from None


__all__ = ["ContextService"]
