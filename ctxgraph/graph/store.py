"""The store port: what ctxgraph needs from a graph, and nothing more. Each
method has a caller outside the tests, and the tests read through the same
methods: the parts of a context — dependency handoffs, context-map
candidates, related tasks, recent tasks, blockers — through ``gather``, as
the service does, so each statement that reads them exists once.

Reads return candidates with their match evidence, never final rankings;
ranking is the compute pipeline's job. Both implementations (``Neo4jStore``
and ``LocalStore``) run the same test suite and must give the same answers.

Ordering contract for tag queries: the highest sum of the matched tags'
rarity weights first (``ctxgraph.core.rarity``; with equally rare tags, more
matched tags first), then the most recently updated, then the id ascending.
Tags on more than ``max_df`` items are not read (0: no cap).

The port is the union of its roles — :class:`StoreAdmin`, :class:`TaskStore`,
:class:`KnowledgeWrites`, :class:`GatherStore`, :class:`VectorStore`,
:class:`HistoryStore`, :class:`OutcomeStore`, :class:`AnchorStore`,
:class:`MemoryStore`, :class:`BackupStore` — each the methods one concern
of the service uses, so that a caller can ask for the role it needs only.
Each write is one transaction, and every write is idempotent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from ctxgraph.core.models import (
    Anchor,
    Candidates,
    FileEntry,
    FileStat,
    GatherQuery,
    HistoryEvidence,
    ImportBatch,
    ImportedFile,
    KnowledgeHit,
    KnowledgeItem,
    MemoryChunk,
    MemoryHit,
    MemoryProject,
    MemoryState,
    ReplayFile,
    ReplayTask,
    Stats,
    Task,
    TaskHit,
    TaskStatus,
)
from ctxgraph.errors import StoreUnavailableError
from ctxgraph.graph.records import HandoffRecord
from ctxgraph.outcomes.records import Delivery, DeliveryScore, StoredDelivery
from ctxgraph.signals import TaskSignals


class StoreAdmin(Protocol):
    """The store as a whole: where it is, its schema, its counts; emptying and closing it."""

    #: A short description for messages: the file path or the server URI.
    location: str

    def init_schema(self) -> None:
        """Create constraints and indexes (idempotent)."""

    def close(self) -> None: ...

    def stats(self) -> Stats: ...

    def clear(self) -> None:
        """Delete every node and relationship."""


class TaskStore(Protocol):
    """Tasks: their text and signals, status and dependencies."""

    def upsert_tasks(self, tasks: Sequence[Task]) -> None:
        """Create or update tasks, their tags (from their signals) and their
        DEPENDS_ON edges (``task.depends_on``; the dependencies must exist)."""

    def set_status(
        self, task_id: str, status: TaskStatus, *, reason: str | None, at: str
    ) -> None: ...

    def get_task(self, task_id: str) -> Task | None: ...

    def get_tasks(self, task_ids: Sequence[str]) -> list[Task]:
        """The tasks that exist among ``task_ids``, in id order."""

    def list_tasks(self, status: TaskStatus | None = None) -> list[Task]: ...

    def dependency_closure(self, task_ids: Sequence[str]) -> list[tuple[str, str]]:
        """The (task, dependency) pairs reachable from ``task_ids`` along
        DEPENDS_ON, sorted: all a cycle check through those tasks can visit."""

    def tasks_by_tags(self, tags: Sequence[str], limit: int, *, max_df: int = 0) -> list[TaskHit]:
        """Tasks of any status sharing a tag (their signals' keywords and
        domains), in the tag queries' order (``ctxgraph search``)."""


class KnowledgeWrites(Protocol):
    """Handoffs, knowledge and the context map: written, and read by id, kind or tag."""

    def upsert_files(self, files: Sequence[FileEntry]) -> None:
        """Context-map entries: create or overwrite component and notes."""

    def apply_handoffs(self, records: Sequence[HandoffRecord]) -> list[bool]:
        """Write a batch of handoffs in one transaction, leaving the graph that
        writing each record alone in turn leaves; per record, ``False`` when
        the same content was already there (stored, or earlier in the batch).
        A record whose task is missing raises ``UnknownTaskError`` and nothing
        of the batch is written."""

    def upsert_knowledge(
        self, items: Sequence[KnowledgeItem], supersedes: Sequence[tuple[str, str, str]] = ()
    ) -> None:
        """Knowledge added by hand, and (new id, old id, at) SUPERSEDES links: the
        old node holds from its ``created_at`` (``valid_from``) until the earliest
        ``at`` (``valid_until``); an old decision becomes superseded."""

    def get_knowledge(self, ids: Sequence[str]) -> list[KnowledgeItem]:
        """The knowledge nodes among ``ids``, in id order."""

    def decisions_in_force(self) -> list[KnowledgeItem]:
        """Every decision not superseded, in id order (``ctxgraph conflicts``)."""

    def list_knowledge(
        self, kinds: Sequence[str] | None = None, tags: Sequence[str] = (), task_id: str | None = None,
    ) -> list[tuple[KnowledgeItem, tuple[str, ...]]]:
        """The knowledge of ``kinds`` (None: every kind) carrying every one of
        ``tags`` and, with ``task_id``, discovered by that task's handoff; in id
        order, each with the ids of the tasks whose handoffs discovered it
        (sorted; none for knowledge added by hand). ``ctxgraph knowledge list``."""

    def knowledge_by_tags(self, tags: Sequence[str], limit: int, *, max_df: int = 0) -> list[KnowledgeHit]:
        """Patterns, gotchas, decisions and open questions sharing a tag."""


class GatherStore(Protocol):
    """What one context reads: its candidates, and the history's evidence beside them."""

    def gather(self, query: GatherQuery) -> Candidates:
        """Everything one context needs (one read; one round trip on Neo4j)."""

    def gather_with_history(
        self, query: GatherQuery, terms: Sequence[str], top_files: int = 10,
        vector: Sequence[float] | None = None,
    ) -> tuple[Candidates, HistoryEvidence]:
        """The history's evidence for a query's full-text ``terms`` (below), then
        ``gather(query)`` with the context map's candidates only when the history
        has no files. The history and the gather run side by side, each in its
        own read transaction (the embedded store's on a large history only, its
        gather on a second read-only connection).

        The history's evidence, as ``core.evidence`` bounds it: the finished tasks scoring best by BM25
        with their scores, and the rankable files (the context map's, else every
        file) with evidence — the best by the BM25 of their documents (with that
        score as ``text``), those the returned tasks touched (or, for a module
        gone from the map, the files of the folder it became —
        ``core.paths.moved_folder``), and the ``top_files`` most touched (path
        breaks ties).
        ``vector``: the query's embedding; the ``evidence.DENSE_VOTERS`` finished
        tasks with the most similar vectors (cosine, rounded to
        ``core.vectors.COSINE_DECIMALS``; ties: newer, then smaller id) come as
        ``neighbours``, with the query terms they mention, and their files are
        among the files returned."""


class VectorStore(Protocol):
    """The finished tasks' vectors and each task's query vector."""

    def tasks_to_embed(self, limit: int, ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """(id, text) of up to ``limit`` finished tasks, by id, whose text has no
        vector yet or one of another text (``records.text_hash``); ``ids``: only
        among these tasks."""

    def write_task_vectors(self, rows: Sequence[tuple[str, str, Sequence[float]]]) -> None:
        """Store (task id, text hash, vector) rows; rows of unknown tasks are skipped."""

    def task_query_vectors(self, ids: Sequence[str]) -> dict[str, tuple[str, list[float]]]:
        """The stored query vectors of these tasks (those that have one): id ->
        (``records.text_hash`` of the text it was made from, vector). A task's
        query vector is what its contexts search by (``QUERY_PIECES`` word
        pieces), kept apart from the finished tasks' vectors searched."""

    def task_with_query_vector(self, task_id: str) -> tuple[Task | None, tuple[str, list[float]] | None]:
        """``get_task`` and the task's stored query vector (``task_query_vectors``),
        in one read."""

    def write_task_query_vectors(self, rows: Sequence[tuple[str, str, Sequence[float]]]) -> None:
        """Store (task id, text hash, query vector) rows; rows of unknown tasks are skipped."""

    def has_task_vectors(self) -> bool:
        """Whether any task has a vector (without counting them)."""

    def task_vector_count(self) -> int:
        """How many tasks have a vector."""


class HistoryStore(Protocol):
    """Imported histories (``ctxgraph.service.history``; docs/history.md) and the
    corpus ``ctxgraph tune`` replays."""

    def import_history(self, tasks: Sequence[Task], records: Sequence[HandoffRecord]) -> list[bool]:
        """Write finished tasks with their handoffs (``records[i]`` is the handoff
        of ``tasks[i]``) in one transaction, leaving the graph ``upsert_tasks``
        then ``apply_handoffs`` leave; a task already stored (by an earlier
        import or by one running beside it) is left as it is. Per task: whether
        this call wrote it."""

    def set_statuses(self, task_ids: Sequence[str], status: TaskStatus, at: str) -> None:
        """``set_status`` (not blocked) for many tasks in one transaction; ids of
        no task are skipped."""

    def history_tasks(self, prefix: str) -> dict[str, tuple[str, str | None, bool]]:
        """Every task whose id starts with ``prefix``: its status, the content
        hash of its handoff ``handoff:<id>`` (None: none) and whether it has
        signals."""

    def write_task_signals(self, rows: Sequence[tuple[str, TaskSignals]]) -> None:
        """Set the signals of (task id, signals) and link each task to their tags
        instead of its old ones, in one transaction: what ``upsert_tasks`` writes
        of a task's signals, nothing else. Ids of no task are skipped."""

    def history_source(self, source_id: str) -> dict[str, Any] | None:
        """The record ``write_history_source`` last wrote under this id (None:
        none). Not part of ``stats`` or an export; ``clear`` removes it."""

    def write_history_source(self, props: dict[str, Any]) -> None:
        """Create or replace the record of an imported history (``props["id"]``)."""

    def replay_corpus(self) -> tuple[list[ReplayTask], list[ReplayFile]]:
        """Every finished task (by id) with its terms, signals, the files its
        handoff created or modified and its vector (None without one), and every
        file with its own terms: what ``ctxgraph tune`` replays. One snapshot."""


class OutcomeStore(Protocol):
    """Context outcomes (records and parsing: ``ctxgraph.outcomes.records``)."""

    def record_deliveries(self, deliveries: Sequence[Delivery], keep: int) -> None:
        """Store delivered contexts (one transaction); when ``outcomes.records.trim_due``,
        keep only the newest ``keep`` (by ``at``, then ``id``). A delivery of an id
        already stored replaces it, unscored. Not part of ``stats`` or ``export_rows``."""

    def deliveries(self, *, task_ids: Sequence[str] | None = None, since: str | None = None,
                   last: int | None = None) -> list[StoredDelivery]:
        """Stored deliveries oldest first (by ``at``, then ``id``), their JSON
        unparsed: those of ``task_ids``; else the newest ``last`` (None: all)
        made at or after ``since`` (an ISO time; None: any)."""

    def score_deliveries(self, scores: Sequence[tuple[str, DeliveryScore]]) -> None:
        """Set the score of each (delivery id, score); ids no longer stored are skipped."""

    def handoff_files(self, task_ids: Sequence[str]) -> dict[str, list[str]]:
        """The files the handoff of each of ``task_ids`` created or modified,
        sorted; tasks without such files are left out."""


class AnchorStore(Protocol):
    """Code anchors and the imports of the project's own files (``ctxgraph.core.models.anchors``,
    ``ctxgraph.sources``; not part of stats or an export)."""

    def write_anchors(self, anchors: Sequence[Anchor]) -> None:
        """Create or replace ``anchors`` by id, in one transaction. Idempotent."""

    def read_anchors(self, owners: Sequence[str] | None = None,
                     paths: Sequence[str] | None = None) -> list[Anchor]:
        """Every anchor (both None), else those whose ``owner`` is among
        ``owners`` or whose ``path`` or ``current_path`` is among ``paths``; by id."""

    def imported_files(self, source: str) -> list[ImportedFile]:
        """What the last import of ``source`` saw of each file, by path."""

    def write_import(self, source: str, batch: ImportBatch) -> None:
        """One transaction, in this order: delete the ``removed`` knowledge
        with its relationships and anchors; remove the SUPERSEDES links from
        the items written, then write them whole (properties and tags
        replaced; a decision something outside the batch still supersedes
        stays superseded, with its ``valid_until``); the ``supersedes`` links
        as ``upsert_knowledge`` writes them; the anchors (replaced by id); the
        ``files``' state, and none for the ``gone`` paths. Idempotent."""


class MemoryStore(Protocol):
    """The associative memory: chunks of indexed projects."""

    def memory_projects(self) -> list[MemoryProject]:
        """Every indexed project, by id."""

    def memory_state(self, project: str) -> MemoryState:
        """The project's record (None when never indexed) and, per indexed file,
        the sha256 and stat it had when its chunks were written."""

    def memory_vectors(self, project: str, paths: Sequence[str]) -> dict[str, dict[str, tuple[float, ...]]]:
        """The stored vectors of the chunks of ``paths`` in ``project``: path ->
        the chunk's ``text_hash`` -> its embedding (chunks without one left out)."""

    def touch_memory(self, project: str, stats: Mapping[str, FileStat]) -> None:
        """Record ``stats`` (mtime_ns, size) on the chunks of those files of
        ``project`` (their content is unchanged). Idempotent."""

    def write_memory(self, project: MemoryProject, chunks: Sequence[MemoryChunk], replaced: Sequence[str]) -> None:
        """In one transaction: remove the chunks of the ``replaced`` paths,
        write ``chunks`` as ``Chunk`` nodes ``IN_FILE`` their ``File`` (created
        when missing), and record ``project``. Idempotent."""

    def search_memory(
        self, project: str, vector: Sequence[float] | None, terms: Sequence[str], k: int,
    ) -> tuple[list[MemoryHit], list[MemoryHit]]:
        """The ``k`` chunks of ``project`` nearest to ``vector`` (cosine) and the
        ``k`` best full-text matches of ``terms`` (Lucene BM25), best first."""


class BackupStore(Protocol):
    """Export and import of the whole graph (file format and validation: ``ctxgraph.graph.backup``)."""

    def export_rows(self) -> Iterator[dict[str, Any]]:
        """The whole graph as export rows, from one consistent snapshot: every
        node ``{kind: "node", label, id, props}`` sorted by (label, id), then
        every relationship ``{kind: "rel", type, src: [label, id], dst: [label,
        id], props}`` sorted by (type, src, dst). Knowledge nodes carry their
        specific label only. Both stores give the same rows for the same graph."""

    def import_rows(self, rows: Iterable[dict[str, Any]]) -> None:
        """Write export rows (nodes before the relationships between them) in
        batches of ``backup.BATCH_SIZE``, one transaction each, with MERGE
        semantics: nodes by (label, id), relationships by (type, src, dst),
        properties replaced. Idempotent. Each row is checked; a bad row or a
        relationship whose end is missing raises ``InvalidDocumentError`` and
        rolls back its batch (earlier batches stay: validate a whole file with
        ``backup.ExportReader`` first)."""


class KnowledgeStore(StoreAdmin, TaskStore, KnowledgeWrites, GatherStore, VectorStore, HistoryStore, OutcomeStore,
                     AnchorStore, MemoryStore, BackupStore, Protocol):
    """A knowledge graph of tasks, handoffs, knowledge, files and tags: the
    full port, every role above. Each role has its contract tests
    (``tests/store/contract``), run on every store."""


class UnavailableStore:
    """Stands in for a store that could not be opened: every call raises
    :class:`StoreUnavailableError` with the original reason, so a context can
    still be computed (empty where the store would have answered) and says
    what is missing."""

    def __init__(self, location: str, reason: str) -> None:
        self.location = location
        self.reason = reason

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def unavailable(*args: object, **kwargs: object) -> Any:
            raise StoreUnavailableError(self.reason)

        return unavailable

    def close(self) -> None:
        """Nothing to close."""
