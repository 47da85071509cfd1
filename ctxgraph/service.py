"""ContextService: the API. Wires a store, the signal extractor and compute.

    with ContextService.open() as svc:             # embedded store
        svc.add_task(Task(id="task-1", objective="Add JWT login"))
        ctx = svc.compute("task-1")
        print(ctx.markdown)
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from ctxgraph import outcomes as outcome_log
from ctxgraph.compute import limits as lim
from ctxgraph.compute import ranking
from ctxgraph.compute.config import STRATEGIES, ContextConfig, Strategy
from ctxgraph.compute.context import ComputedContext, compute_context
from ctxgraph.compute.outcomes import OutcomeReport
from ctxgraph.compute.tune import TuneResult, tune
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.errors import (
    CtxgraphError,
    DependencyCycleError,
    InvalidArgumentError,
    StoreUnavailableError,
    UnknownTaskError,
)
from ctxgraph.graph.dependencies import find_cycle
from ctxgraph.graph.documents import load_handoff, read_document
from ctxgraph.graph.handoff_batch import HANDOFF_BATCH
from ctxgraph.graph.local import LocalStore, default_path
from ctxgraph.graph.models import (
    Candidates,
    Complexity,
    FileEntry,
    GatherQuery,
    HandoffDoc,
    KnowledgeItem,
    MemoryRecall,
    Task,
    TaskDoc,
    TaskStatus,
    infer_component,
    utcnow,
)
from ctxgraph.graph.records import FileLink, HandoffRecord, canonical_json, stable_id
from ctxgraph.graph.store import KnowledgeStore, UnavailableStore
from ctxgraph.memory.embed import QUERY_PIECES
from ctxgraph.outcomes import DeliveryWriter
from ctxgraph.signals import SignalExtractor, TaskSignals, terms

log = logging.getLogger(__name__)

#: Task texts embedded per batch (``embed_tasks``) and the word pieces kept of each.
TASK_EMBED_BATCH = 64
TASK_PIECES = 256
#: Task vectors stored per write (``embed_tasks``).
TASK_WRITE_BATCH = 512
#: How often a service asks the store again whether any task has a vector.
VECTORS_RECHECK_SECONDS = 60.0

_RUNTIME_FIELDS = ("status", "success", "outcome_summary", "completed_at", "blocked_reason", "blocked_at")


class IngestResult(BaseModel):
    """What one handoff did: ``written`` is False when it was already there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    task_id: str
    written: bool
    knowledge: int
    files: int


class ContextService:
    """Computes task context from a knowledge store; owns the store it opened."""

    def __init__(
        self,
        store: KnowledgeStore,
        extractor: SignalExtractor | None = None,
        config: ContextConfig | None = None,
    ) -> None:
        self.store = store
        self.extractor = extractor or SignalExtractor()
        self.config = config or ContextConfig()
        #: Associative memory at context time: on by default (it is skipped,
        #: with a note, when no usable index exists).
        self.memory = True
        #: The indexed project to search (None: the only one indexed).
        self.memory_project: str | None = os.environ.get("CTXGRAPH_PROJECT") or None
        #: The sentence embedder (None: the shared all-MiniLM-L6-v2, loaded on first use).
        self.embedder: Any = None
        #: Neighbours by embedding at context time: the query's text is embedded
        #: when finished tasks have vectors (``embed_tasks``); off, or when the
        #: model cannot load, the history ranks by full text alone.
        self.task_vectors = os.environ.get("CTXGRAPH_TASK_VECTORS", "1") != "0"
        self._vectors_seen: tuple[float, bool] | None = None  # (monotonic time, any task vectors)
        #: Context outcomes (``ctxgraph.outcomes``): record every delivered context
        #: (on a store opened for writing) and score it when its task's handoff is
        #: ingested. The evaluation turns it off.
        self.record_outcomes = True
        self._deliveries: DeliveryWriter | None = None

    # -- lifecycle ---------------------------------------------------------------

    @classmethod
    def open(
        cls,
        store: str | os.PathLike[str] | None = None,
        *,
        neo4j_uri: str | None = None,
        neo4j_user: str | None = None,
        neo4j_password: str | None = None,
        neo4j_database: str | None = None,
        domains: Mapping[str, Iterable[str]] | None = None,
        config: ContextConfig | None = None,
        settings_file: str | os.PathLike[str] | None = None,
        read_only: bool = False,
    ) -> ContextService:
        """Open the embedded store (``store`` path, ``CTXGRAPH_STORE``, or the
        nearest ``.ctxgraph/graph.db`` from the current folder upwards, else
        ``./.ctxgraph/graph.db``) or, with ``neo4j_uri``, a Neo4j server.

        ``read_only`` opens the store for reading only: the embedded file with
        SQLite's ``mode=ro`` (it must exist; nothing is created), Neo4j with
        READ sessions and no schema statements. A write then fails with
        ``StoreUnavailableError``.

        Limiter settings and extra domains come from ``config``/``domains`` when
        given, else from ``settings_file``, else from the nearest
        ``ctxgraph.toml`` or ``[tool.ctxgraph]`` in ``pyproject.toml``.
        """
        from ctxgraph.settings import load_settings

        settings = load_settings(Path(settings_file) if settings_file else None)
        config = config or settings.context
        domains = domains or settings.domains
        if neo4j_uri:
            from ctxgraph.graph.neo4j_store import Neo4jSettings, Neo4jStore

            neo4j_settings = Neo4jSettings.from_env(
                uri=neo4j_uri, user=neo4j_user, password=neo4j_password, database=neo4j_database
            )
            opened: KnowledgeStore = Neo4jStore.connect(neo4j_settings, read_only=read_only)
        else:
            path = store or os.environ.get("CTXGRAPH_STORE") or default_path()
            opened = LocalStore.open(Path(path), read_only=read_only)
        return cls(opened, SignalExtractor(domains=domains) if domains else None, config)

    @classmethod
    def unavailable(cls, location: str, reason: str) -> ContextService:
        """A service whose store could not be opened: contexts of ``Task`` values
        are computed from nothing stored, and say what is missing."""
        from ctxgraph.graph.store import UnavailableStore
        from ctxgraph.settings import load_settings

        settings = load_settings()
        extractor = SignalExtractor(domains=settings.domains) if settings.domains else None
        return cls(UnavailableStore(location, reason), extractor, settings.context)

    def close(self) -> None:
        if self._deliveries is not None:
            self._deliveries.close()  # what is queued is written first
            self._deliveries = None
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
        signals = self.extractor.extract_many([t.text for t in given], [t.type for t in given])
        for task, sig in zip(given, signals, strict=True):
            old = existing.get(task.id)
            update: dict[str, Any] = {"signals": sig, "updated_at": now,
                                      "created_at": old.created_at if old else now}
            if old is not None:
                update["depends_on"] = tuple(sorted(set(old.depends_on) | set(task.depends_on)))
                if old.status in (TaskStatus.COMPLETED, TaskStatus.FAILED):
                    update.update({f: getattr(old, f) for f in _RUNTIME_FIELDS})
            if update.get("status", task.status) is TaskStatus.BLOCKED and not task.blocked_at:
                update.setdefault("blocked_at", now)
            prepared.append(task.model_copy(update=update))
        self.store.upsert_tasks(prepared)
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

    # -- knowledge by hand (ADR 007's artifacts, chains) ---------------------------

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
        """Add a pattern, gotcha, decision, ADR, plan, module memory or changelog entry."""
        fields: dict[str, Any] = {"scope": scope, "importance": importance, "location": location,
                                  "rationale": rationale}
        if kind == "gotcha":
            fields["severity"] = severity or "medium"
        if kind == "decision":
            fields["status"] = "active"
        try:
            item = self._knowledge(kind, summary, tags, utcnow(), **fields)
        except ValueError as exc:  # pydantic: an unknown kind, scope or severity
            raise CtxgraphError(f"invalid knowledge: {exc}".splitlines()[0]) from None
        self.store.upsert_knowledge([item])
        return item

    def revise_knowledge(
        self, item_id: str, summary: str, *, rationale: str | None = None, importance: float | None = None
    ) -> KnowledgeItem:
        """A new version of a knowledge node: same chain, version + 1. Only the
        latest version of a chain is ever shown; a revised decision is superseded."""
        found = self.store.get_knowledge([item_id])
        if not found:
            raise CtxgraphError(f"unknown knowledge id: {item_id!r}")
        old = found[0]
        now = utcnow()
        fields: dict[str, Any] = {
            "scope": old.scope, "importance": old.importance if importance is None else importance,
            "location": old.location, "rationale": rationale if rationale is not None else old.rationale,
            "severity": old.severity, "status": old.status, "chain_id": old.chain_id or old.id,
            "version": old.version + 1,
        }
        new = self._knowledge(old.kind, summary, old.tags, now, **fields)
        if new.id == old.id:
            raise CtxgraphError("the new version must say something different from the old one")
        self.store.upsert_knowledge(
            [new, old.model_copy(update={"chain_id": old.chain_id or old.id})], supersedes=[(new.id, old.id, now)]
        )
        return new

    def get_knowledge(self, item_id: str) -> KnowledgeItem:
        found = self.store.get_knowledge([item_id])
        if not found:
            raise CtxgraphError(f"unknown knowledge id: {item_id!r}")
        return found[0]

    # -- context map -----------------------------------------------------------

    def add_files(self, entries: Sequence[FileEntry]) -> None:
        self.store.upsert_files(entries)

    # -- handoffs ----------------------------------------------------------------

    def prepare_handoff(self, doc: HandoffDoc, raw: Mapping[str, Any]) -> HandoffRecord:
        """Turn a validated handoff into the record a store writes (no IO)."""
        return self.prepare_handoffs([(doc, raw)])[0]

    def prepare_handoffs(self, docs: Sequence[tuple[HandoffDoc, Mapping[str, Any]]]) -> list[HandoffRecord]:
        """:meth:`prepare_handoff` for many handoffs: the knowledge texts of all
        of them go through the signal extractor in one ``extract_many`` call
        (one ``nlp.pipe``), not a few texts per handoff."""
        items = [_handoff_items(doc) for doc, _ in docs]
        extracted = iter(self.extractor.extract_many([text for found in items for _, text, _, _ in found]))
        return [
            self._handoff_record(doc, raw, found, [next(extracted) for _ in found])
            for (doc, raw), found in zip(docs, items, strict=True)
        ]

    def _handoff_record(
        self, doc: HandoffDoc, raw: Mapping[str, Any], items: Sequence[_Item], extracted: Sequence[TaskSignals]
    ) -> HandoffRecord:
        """The record of one handoff, given its knowledge items and their signals."""
        completed_at = doc.completed_at or utcnow()
        knowledge: dict[str, KnowledgeItem] = {}
        for (kind, text, extra, applies_to), sig in zip(items, extracted, strict=True):
            tags = [self.extractor.normalize_tag(t) for t in applies_to]
            tags = list(dict.fromkeys(t for t in [*tags, *sig.keywords, *sig.domains] if t))
            item_id = stable_id(kind, text)
            item = KnowledgeItem(
                id=item_id, kind=kind, summary=text, tags=tuple(tags),  # type: ignore[arg-type]
                created_at=completed_at, updated_at=completed_at, **extra,
            )
            knowledge[item_id] = item.model_copy(update={"token_estimate": estimate_tokens(text)})

        files: dict[str, FileEntry] = {}
        links: dict[tuple[str, str], FileLink] = {}
        for rel, changes in (("CREATED", doc.files_created), ("MODIFIED", doc.files_modified)):
            for change in changes:
                note = change.purpose or change.description or ""
                files.setdefault(change.path, FileEntry(
                    path=change.path, component=infer_component(change.path), notes=note))
                links[(rel, change.path)] = FileLink(rel=rel, path=change.path, note=note, lines=change.lines)  # type: ignore[arg-type]
        for read in doc.dependencies_for_next:
            files.setdefault(read.file, FileEntry(path=read.file, component=infer_component(read.file)))
            links[("READ_NEXT", read.file)] = FileLink(rel="READ_NEXT", path=read.file, note=read.reason)

        raw_json = canonical_json(dict(raw))
        return HandoffRecord(
            id=f"handoff:{doc.task_id}",
            task_id=doc.task_id,
            summary=doc.summary,
            success=doc.success,
            completed_at=completed_at,
            raw=raw_json,
            content_hash=stable_id("sha1", raw_json).split(":", 1)[1],
            knowledge=tuple(knowledge.values()),
            files=tuple(files.values()),
            links=tuple(links.values()),
        )

    def ingest_handoff(
        self, handoff: HandoffDoc | Mapping[str, Any] | bytes | str | os.PathLike[str], *,
        source: str | None = None,
    ) -> IngestResult:
        """Validate and write one handoff whole; the same content twice is a no-op.

        ``handoff`` is a file (a ``Path``, or a ``str`` of one line that does
        not start with ``{``: its path), the document's text (any other
        ``str``: YAML or JSON), its bytes, a mapping or a ``HandoffDoc``.
        ``source`` names it in messages (default: the path, else
        ``<handoff>``)."""
        if isinstance(handoff, os.PathLike) or (isinstance(handoff, str) and _looks_like_path(handoff)):
            path = Path(handoff)
            return self.ingest_handoffs([(source or str(path), read_document(path))])[0]
        if isinstance(handoff, str):
            handoff = handoff.encode("utf-8")
        return self.ingest_handoffs([(source or "<handoff>", handoff)])[0]

    def ingest_handoffs(
        self,
        handoffs: Sequence[tuple[str, HandoffDoc | Mapping[str, Any] | bytes]],
        *,
        progress: Callable[[int], None] | None = None,
        batch_size: int = HANDOFF_BATCH,
    ) -> list[IngestResult]:
        """Validate and prepare every handoff first (nothing is written if one is
        bad), then write them in batches of ``batch_size``, one transaction each
        (``progress`` is called with the size of each batch once it committed).
        A batch leaves the graph that writing its handoffs one by one leaves."""
        if batch_size < 1:
            raise InvalidArgumentError(f"batch_size: {batch_size!r} is not a whole number of at least 1")
        docs = [(source, *_as_handoff(handoff, source)) for source, handoff in handoffs]
        wanted = sorted({doc.task_id for _, doc, _ in docs})
        found = {t.id for t in self.store.get_tasks(wanted)}
        for source, doc, _ in docs:
            if doc.task_id not in found:
                raise UnknownTaskError(doc.task_id, source=source)
        records = [
            record
            for start in range(0, len(docs), batch_size)
            for record in self.prepare_handoffs([(doc, raw) for _, doc, raw in docs[start:start + batch_size]])
        ]
        results: list[IngestResult] = []
        for start in range(0, len(records), batch_size):
            batch = records[start:start + batch_size]
            written = self.store.apply_handoffs(batch)
            results += [
                IngestResult(source=source, task_id=record.task_id, written=w,
                             knowledge=len(record.knowledge), files=len(record.files))
                for (source, _, _), record, w in zip(docs[start:start + batch_size], batch, written, strict=True)
            ]
            if progress:
                progress(len(batch))
        self._score_outcomes(records)
        return results

    # -- task vectors ----------------------------------------------------------------

    def _embedder(self) -> Any:
        if self.embedder is None:
            from ctxgraph.memory.embed import shared_embedder

            self.embedder = shared_embedder()
        return self.embedder

    def embed_tasks(self, pending: Sequence[tuple[str, str]] | None = None, *, batch: int = TASK_EMBED_BATCH,
                    progress: Callable[[int], None] | None = None) -> int:
        """Embed the finished tasks that have no vector of their current text
        (all-MiniLM-L6-v2, local), ``batch`` texts at a time, stored every
        :data:`TASK_WRITE_BATCH` vectors and at the end: an interrupted run keeps
        what it wrote. (On Neo4j each write adds a segment to the vector index,
        which a query searches one by one: 1,500 vectors written 64 at a time
        answer in ~25 ms, 512 at a time in ~6.) ``pending``: the store's
        ``tasks_to_embed`` when the caller has read them already. Returns how
        many were embedded; ``progress(n)`` after each batch of ``n``. Raises
        :class:`~ctxgraph.memory.embed.EmbeddingUnavailableError` when the model
        cannot load."""
        from ctxgraph.graph.records import text_hash

        if pending is None:
            pending = self.store.tasks_to_embed(10**9)
        if not pending:
            return 0
        embedder = self._embedder()
        done = 0
        unwritten: list[tuple[str, str, list[float]]] = []
        for start in range(0, len(pending), batch):
            chunk = pending[start:start + batch]
            vectors = embedder.embed([text for _, text in chunk], max_pieces=TASK_PIECES)
            unwritten += [(tid, text_hash(text), [float(x) for x in vec])
                          for (tid, text), vec in zip(chunk, vectors, strict=True)]
            done += len(chunk)
            if len(unwritten) >= TASK_WRITE_BATCH or done == len(pending):
                self.store.write_task_vectors(unwritten)
                unwritten = []
            if progress:
                progress(len(chunk))
        self._vectors_seen = None
        return done

    def _query_vector(self, text: str, notes: list[str]) -> list[float] | None:
        """The query's embedding when finished tasks have vectors (checked once a
        minute), else None; an embedding failure is a note, not an error."""
        if not self.task_vectors or not text.strip():
            return None
        now = time.monotonic()
        if self._vectors_seen is None or now - self._vectors_seen[0] > VECTORS_RECHECK_SECONDS:
            self._vectors_seen = (now, self.store.has_task_vectors())
        if not self._vectors_seen[1]:
            return None
        try:
            vector = self._embedder().embed([text], max_pieces=QUERY_PIECES)[0]
        except Exception as exc:  # any embedding failure only costs the neighbours by embedding
            log.warning("embedding the task failed: %s", exc)
            notes.append(f"history: embedding the task failed ({exc}); neighbours by full text only")
            return None
        return [float(x) for x in vector]

    # -- compute -------------------------------------------------------------------

    def gather(self, task: Task, signals: TaskSignals) -> Candidates:
        """Phase 2-4 candidates and working memory from the store (the IO half).

        One read transaction (two statements on Neo4j). If it fails (server down, timeout)
        the context is computed from nothing stored, with a note in the debug
        section saying what is missing.
        """
        query = GatherQuery(
            keywords=signals.keywords, domains=signals.domains, files=signals.files_mentioned,
            dep_ids=task.depends_on, exclude=(task.id, *task.depends_on),
            keyword_limit=lim.KEYWORD_QUERY_LIMIT, domain_limit=lim.DOMAIN_QUERY_LIMIT,
            related_limit=lim.RELATED_TASK_QUERY_LIMIT, recent_limit=lim.RECENT_TASKS,
            working_memory=task.requires_context, max_tag_df=lim.TAG_DF_CAP,
        )
        query_terms = tuple(terms(task.text))
        notes: list[str] = []
        try:
            vector = self._query_vector(task.text, notes)
            # The history ranks the files; the seed's context-map filter is the
            # fallback for a graph without files only. One read transaction.
            found, history = self.store.gather_with_history(query, query_terms, ranking.MAX_DF_SHARE,
                                                           lim.CONTEXT_MAP_TOP, vector)
            memory: MemoryRecall | None = None
            if self.memory:
                from ctxgraph.memory.recall import recall

                memory, memory_notes = recall(self.store, found.memory_projects, task.text, query_terms,
                                              project=self.memory_project,
                                              stale_hours=self.config.memory_stale_hours,
                                              embedder=self.embedder, query_vector=vector)
                notes += memory_notes
            return found.model_copy(update={"history": history, "query_terms": query_terms, "memory": memory,
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
    ) -> ComputedContext:
        """The computed context of a stored task (by id) or of a ``Task`` value.

        ``budget`` (tokens) and ``strategy`` override the settings for this call;
        ``explain`` adds every candidate with its score parts and fate.
        ``record=False``: not recorded as delivered (see :meth:`record_delivery`).
        """
        tier = _choice("complexity", complexity, Complexity) if complexity is not None else None
        if strategy is not None and strategy not in STRATEGIES:
            raise InvalidArgumentError(f"strategy: {strategy!r} is not one of {', '.join(STRATEGIES)}")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise InvalidArgumentError(f"budget: {budget!r} is not a whole number of tokens of at least 1")
        if isinstance(task, str):
            task = self.get_task(task)
        elif not isinstance(task, Task):
            raise InvalidArgumentError(f"task: expected a task id (str) or a Task, got {type(task).__name__}")
        signals = task.signals or self.signals_for(task)
        tier = tier or task.complexity
        config = self.config
        if budget is not None or strategy is not None:
            update: dict[str, Any] = {}
            if budget is not None:
                update["budget"] = budget
            if strategy is not None:
                update["strategy"] = strategy
            config = ContextConfig.model_validate({**config.model_dump(), **update})
        candidates = self.gather(task, signals)
        ctx = compute_context(
            task, signals, candidates, lim.limits_for(tier), complexity=tier.value, config=config,
            now=now, debug=debug, template=template, explain=explain,
        )
        if record:
            self.record_delivery(ctx)
        return ctx

    # -- context outcomes (ctxgraph.outcomes) ----------------------------------------

    def record_delivery(self, ctx: ComputedContext) -> None:
        """Record ``ctx`` as delivered now (``compute`` does it): queued and written
        by a background thread, only when ``record_outcomes`` is on and the store
        is open for writing. Never raises and never changes the context."""
        try:
            if not self.record_outcomes or isinstance(self.store, UnavailableStore) \
                    or getattr(self.store, "read_only", False) is True:
                return
            if self._deliveries is None:
                self._deliveries = DeliveryWriter(self.store, self.config.outcomes_keep)
            outcome_log.submit(self._deliveries, ctx)
        except Exception as exc:
            log.debug("delivery of %s not recorded: %s", ctx.task_id, exc)

    def flush_outcomes(self, timeout: float | None = None) -> bool:
        """Wait until the recorded deliveries are written; False on timeout."""
        return self._deliveries is None or self._deliveries.flush(timeout)

    def outcomes(self, *, since: str | datetime | None = None, last: int | None = None) -> OutcomeReport:
        """Hit rates, items used and tokens wasted of the newest ``last`` deliveries
        made at or after ``since`` (a date or an ISO time; naive means UTC)."""
        if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 1):
            raise InvalidArgumentError(f"last: {last!r} is not a whole number of at least 1")
        self.flush_outcomes()
        return outcome_log.report(self.store, since=_since(since), last=last)

    def _score_outcomes(self, records: Sequence[HandoffRecord]) -> None:
        if not self.record_outcomes or not records:
            return
        try:
            self.flush_outcomes()
            outcome_log.score_handoffs(self.store, records)
        except Exception as exc:  # scoring never fails an ingestion
            log.debug("deliveries of %d handoffs not scored: %s", len(records), exc)

    def tune(self, *, seed: int = 0, progress: Callable[[int, int], None] | None = None) -> TuneResult:
        """Fit the file ranking's weights on the finished history by replay
        (:mod:`ctxgraph.compute.tune`), starting from this service's weights;
        ``progress(done, total)`` follows the replayed queries.
        Nothing is written: the caller keeps ``result.weights`` (``ctxgraph
        tune`` writes them to the settings file)."""
        tasks, files = self.store.replay_corpus()
        return tune(tasks, files, self.config.ranking, max_df_share=ranking.MAX_DF_SHARE, seed=seed,
                    progress=progress)

    def stats(self) -> dict[str, dict[str, int]]:
        s = self.store.stats()
        return {"labels": s.labels, "relationships": s.relationships}


def _as_task(value: Task | TaskDoc | Mapping[str, Any]) -> Task:
    if isinstance(value, Task):
        return value
    if isinstance(value, TaskDoc):
        return value.to_task()
    from ctxgraph.graph.documents import validate

    return validate(TaskDoc, dict(value), "<task>").to_task()


#: A knowledge item a handoff names: (kind, text, extra fields, applies_to).
_Item = tuple[str, str, dict[str, Any], list[str]]


def _handoff_items(doc: HandoffDoc) -> list[_Item]:
    """The knowledge items a handoff names, in document order."""
    items: list[_Item] = []
    for p in doc.patterns_discovered:
        items.append(("pattern", p.pattern, {"location": p.location}, p.applies_to))
    for g in doc.gotchas:
        items.append(("gotcha", g.issue, {"severity": g.severity}, g.applies_to))
    for d in doc.decisions:
        items.append(("decision", d.decision, {"rationale": d.rationale, "status": "active"}, d.applies_to))
    for q in doc.open_questions:
        items.append(("open_question", q.question, {"context": q.context,
                      "recommendation": q.recommendation, "blocking": q.blocking}, q.applies_to))
    return items


def _as_handoff(
    value: HandoffDoc | Mapping[str, Any] | bytes, source: str
) -> tuple[HandoffDoc, Mapping[str, Any]]:
    if isinstance(value, HandoffDoc):
        return value, value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, bytes):
        return load_handoff(value, source)
    if isinstance(value, str):
        return load_handoff(value.encode("utf-8"), source)
    if not isinstance(value, Mapping):
        raise InvalidArgumentError(f"{source}: a handoff is a HandoffDoc, a mapping, YAML/JSON text or bytes, "
                                   f"not {type(value).__name__}")
    from ctxgraph.graph.documents import validate

    raw = dict(value)
    return validate(HandoffDoc, raw, source), raw


def _since(value: str | datetime | None) -> str | None:
    """``value`` as the ISO text deliveries' times compare with, or an error naming it."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidArgumentError(f"since: {value!r} is not a date (YYYY-MM-DD) or an ISO time") from None
    if not isinstance(value, datetime):
        raise InvalidArgumentError(f"since: expected a date or an ISO time, got {type(value).__name__}")
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _looks_like_path(text: str) -> bool:
    """A one-line ``str`` not starting with ``{`` is a file name, not a document."""
    return bool(text.strip()) and "\n" not in text and not text.lstrip().startswith("{")


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


__all__ = ["ContextService", "IngestResult"]
