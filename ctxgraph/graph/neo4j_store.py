"""Neo4jStore: the knowledge graph on a Neo4j 5.26 server.

Every statement is a parameterized file in ``ctxgraph/cypher``; writes run in
managed write transactions (retried by the driver on transient errors — a
deadlock, a leader switch, a server that went away and came back — for up to
``Neo4jSettings.max_retry_time`` seconds) and reads in managed read
transactions (routed to readers on a cluster). The driver is created by
:meth:`Neo4jStore.connect` or handed in by the caller; ``__init__`` does no IO.

``Neo4jStore.connect(settings, read_only=True)`` applies no schema and opens
every session with READ access: the server itself refuses a write in it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import neo4j
from neo4j import Driver, GraphDatabase, ManagedTransaction
from neo4j import exceptions as neo4j_errors

from ctxgraph import cypher
from ctxgraph.core import evidence
from ctxgraph.core.rarity import tag_weights
from ctxgraph.core.vectors import DIMENSIONS
from ctxgraph.errors import (
    AuthenticationError,
    ConfigurationError,
    CtxgraphError,
    InvalidDocumentError,
    StoreUnavailableError,
    UnknownTaskError,
)
from ctxgraph.graph import neo4j_outcomes
from ctxgraph.graph.backup import KNOWLEDGE_LABELS, node_row, rel_row, sorted_rows
from ctxgraph.graph.backup import batches as backup_batches
from ctxgraph.graph.dependencies import reachable_edges
from ctxgraph.graph.handoff_batch import HandoffBatch, link_props, plan_handoffs
from ctxgraph.graph.memory_records import (
    BM25_DECIMALS,
    COSINE_DECIMALS,
    chunk_from_props,
    chunk_props,
    fulltext_query,
    ranked,
)
from ctxgraph.graph.models import (
    Blocker,
    Candidates,
    DependencyHandoff,
    FileEntry,
    FileEvidence,
    GatherQuery,
    HistoryEvidence,
    KnowledgeHit,
    KnowledgeItem,
    MemoryChunk,
    MemoryHit,
    MemoryProject,
    MemoryState,
    NeighbourEvidence,
    ReadNext,
    RecentTask,
    Stats,
    Task,
    TaskEvidence,
    TaskHit,
    TaskStatus,
)
from ctxgraph.graph.outcome_records import Delivery, DeliveryScore, StoredDelivery
from ctxgraph.graph.records import (
    HandoffRecord,
    file_from_props,
    file_props,
    knowledge_from_props,
    knowledge_props,
    task_from_props,
    task_props,
    task_tags,
    task_text,
    text_hash,
)
from ctxgraph.graph.replay_records import ReplayFile, ReplayTask, replay_task

log = logging.getLogger(__name__)

T = TypeVar("T")

_SCHEMES = ("neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc")


#: Default for how long the driver retries a transaction that failed transiently.
DEFAULT_MAX_RETRY_TIME = 15.0
RETRY_TIME_ENV = "CTXGRAPH_NEO4J_RETRY_SECONDS"


@dataclass(frozen=True)
class Neo4jSettings:
    """Where and how to connect. ``from_env`` reads ``NEO4J_*`` variables.

    The password is never part of ``repr`` or ``str``; it comes from the
    caller, ``NEO4J_PASSWORD`` or the file named by ``NEO4J_PASSWORD_FILE`` —
    there is no default.
    """

    uri: str
    user: str = "neo4j"
    password: str | None = field(default=None, repr=False)
    database: str | None = None
    max_retry_time: float = DEFAULT_MAX_RETRY_TIME

    @classmethod
    def from_env(
        cls,
        uri: str | None = None,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        env: dict[str, str] | None = None,
    ) -> Neo4jSettings:
        env = dict(os.environ) if env is None else env
        uri = uri or env.get("NEO4J_URI")
        if not uri:
            raise ConfigurationError("no Neo4j URI: pass --neo4j URI or set NEO4J_URI")
        if "@" in urllib.parse.urlsplit(uri).netloc:
            # Never echo the URI: it may hold a password.
            raise ConfigurationError(
                "the Neo4j URI must not contain credentials (user:password@): "
                "set NEO4J_USER and NEO4J_PASSWORD or NEO4J_PASSWORD_FILE instead"
            )
        if not password:
            password = env.get("NEO4J_PASSWORD") or None
        if password is None and env.get("NEO4J_PASSWORD_FILE"):
            path = env["NEO4J_PASSWORD_FILE"]
            try:
                with open(path, encoding="utf-8") as fh:
                    password = fh.read().strip() or None
            except OSError as exc:
                raise ConfigurationError(
                    f"cannot read NEO4J_PASSWORD_FILE {path}: {exc.strerror}"
                ) from None
            if password is None:
                raise ConfigurationError(f"NEO4J_PASSWORD_FILE {path} is empty")
        retry = env.get(RETRY_TIME_ENV)
        try:
            max_retry_time = float(retry) if retry else DEFAULT_MAX_RETRY_TIME
        except ValueError:
            raise ConfigurationError(f"{RETRY_TIME_ENV} must be a number of seconds, not {retry!r}") from None
        return cls(
            uri=uri,
            user=user or env.get("NEO4J_USER") or env.get("NEO4J_USERNAME") or "neo4j",
            password=password,
            database=database or env.get("NEO4J_DATABASE") or None,
            max_retry_time=max(0.0, max_retry_time),
        )

    def __repr__(self) -> str:  # never show the password
        return f"Neo4jSettings(uri={self.uri!r}, user={self.user!r}, database={self.database!r})"

    __str__ = __repr__


def make_driver(settings: Neo4jSettings) -> Driver:
    """The driver for ``settings``, without connecting (the first query does).

    TLS comes from the URI scheme alone: ``neo4j+s``/``bolt+s`` verify the
    server's certificate, ``+ssc`` accepts a self-signed one.
    """
    scheme = settings.uri.split("://", 1)[0].lower()
    if scheme not in _SCHEMES:
        raise ConfigurationError(
            f"unsupported Neo4j URI scheme {scheme!r}: use one of {', '.join(_SCHEMES)}"
        )
    auth = (settings.user, settings.password) if settings.password is not None else None
    try:
        return GraphDatabase.driver(
            settings.uri, auth=auth, connection_timeout=10.0,
            max_transaction_retry_time=settings.max_retry_time,
            notifications_min_severity="OFF",
        )
    except (neo4j_errors.ConfigurationError, ValueError) as exc:
        raise ConfigurationError(f"bad Neo4j settings for {settings.uri}: {_first_line(exc)}") from None


def _row(record: neo4j.Record) -> dict[str, Any]:
    return dict(record)


#: Up to this many start tasks, a dependency closure is one variable-length pattern.
CLOSURE_PATTERN_STARTS = 32
#: Levels of a breadth-first dependency search (one round trip each) before reading every edge.
CLOSURE_MAX_LEVELS = 16


class Neo4jStore:
    """The store on a Neo4j server. Use :meth:`connect`, or pass your own driver."""

    def __init__(
        self, driver: Driver, *, database: str | None = None, location: str = "neo4j", read_only: bool = False
    ) -> None:
        self._driver = driver
        self._database = database
        self.location = location
        self.read_only = read_only
        #: Statements sent through ``_rows`` (each one round trip), for tests and benchmarks.
        self.statements_run = 0
        #: Managed transactions started, by kind ("read", "write", "schema"), for tests.
        self.transactions: Counter[str] = Counter()
        #: Seconds a write is re-run after a connection lost during its commit.
        self.max_retry_time = DEFAULT_MAX_RETRY_TIME
        #: The read transaction this thread's work runs in (``_read`` joins it).
        self._open_read = threading.local()

    # -- lifecycle ----------------------------------------------------------------

    @classmethod
    def connect(cls, settings: Neo4jSettings, *, read_only: bool = False) -> Neo4jStore:
        """Connect and check the credentials; apply the schema unless ``read_only``."""
        driver = make_driver(settings)
        try:
            driver.verify_connectivity()
        except neo4j_errors.AuthError:
            driver.close()
            if settings.password is None:
                raise AuthenticationError(
                    f"Neo4j at {settings.uri} needs a password for user {settings.user!r}: set "
                    "NEO4J_PASSWORD or NEO4J_PASSWORD_FILE, or use --password-stdin"
                ) from None
            raise AuthenticationError(
                f"Neo4j at {settings.uri} refused the credentials of user {settings.user!r} "
                "(check NEO4J_USER / NEO4J_PASSWORD)"
            ) from None
        except neo4j_errors.ClientError as exc:
            driver.close()
            if exc.code == _RATE_LIMITED:
                raise AuthenticationError(_rate_limited(settings.uri, settings.user)) from None
            raise
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, OSError) as exc:
            driver.close()
            raise StoreUnavailableError(
                f"cannot reach Neo4j at {settings.uri}: {_first_line(exc)}"
            ) from None
        except (neo4j_errors.ConfigurationError, ValueError) as exc:
            driver.close()
            raise ConfigurationError(f"bad Neo4j settings for {settings.uri}: {_first_line(exc)}") from None
        store = cls(driver, database=settings.database, location=settings.uri, read_only=read_only)
        store.max_retry_time = settings.max_retry_time
        if not read_only:
            try:
                store.init_schema()
            except BaseException:
                store.close()
                raise
        return store

    def close(self) -> None:
        self._driver.close()

    def __enter__(self) -> Neo4jStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -----------------------------------------------------------------

    def _session(self, access: str = neo4j.WRITE_ACCESS) -> neo4j.Session:
        if self.read_only:
            access = neo4j.READ_ACCESS
        return self._driver.session(database=self._database, default_access_mode=access)

    def _call(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except neo4j_errors.AuthError:
            raise AuthenticationError(f"Neo4j at {self.location} refused the credentials") from None
        except neo4j_errors.ClientError as exc:
            if exc.code == _RATE_LIMITED:
                raise AuthenticationError(_rate_limited(self.location, None)) from None
            raise
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired) as exc:
            raise StoreUnavailableError(f"Neo4j at {self.location} is unavailable: {_first_line(exc)}") from None
        except neo4j_errors.TransientError as exc:  # still failing when the retry time ran out
            raise StoreUnavailableError(
                f"Neo4j at {self.location} kept failing transiently: {exc.code or _first_line(exc)}"
            ) from None

    def _read(self, work: Callable[[ManagedTransaction], T]) -> T:
        """Run ``work`` in a managed read transaction; a read made inside another
        one's work joins that transaction (so several reads can share one)."""
        joined: ManagedTransaction | None = getattr(self._open_read, "tx", None)
        if joined is not None:
            return work(joined)

        def in_tx(tx: ManagedTransaction) -> T:
            self._open_read.tx = tx
            try:
                return work(tx)
            finally:
                self._open_read.tx = None

        def run() -> T:
            self.transactions["read"] += 1
            with self._session(neo4j.READ_ACCESS) as session:
                return session.execute_read(in_tx)

        return self._call(run)

    def _refuse_write(self, what: str) -> None:
        if self.read_only:
            raise StoreUnavailableError(f"Neo4j at {self.location} was opened read-only; {what} needs write access")

    def _write(self, work: Callable[[ManagedTransaction], T]) -> T:
        self._refuse_write("this command")

        def run() -> T:
            # The driver retries a transaction that failed before its commit; a
            # connection lost *during* the commit (IncompleteCommit) it does not,
            # as it cannot know whether the commit landed. Every write ctxgraph
            # makes is idempotent, so running it again is safe either way.
            deadline = time.monotonic() + self.max_retry_time
            delay = 0.5
            while True:
                self.transactions["write"] += 1
                try:
                    with self._session() as session:
                        return session.execute_write(work)
                except neo4j_errors.IncompleteCommit:
                    if time.monotonic() + delay > deadline:
                        raise
                    log.info("Neo4j at %s: connection lost during a commit; writing again in %.1fs",
                                self.location, delay)
                    time.sleep(delay)
                    delay = min(delay * 2, 4.0)

        return self._call(run)

    def _rows(self, tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
        self.statements_run += 1
        return [_row(r) for r in tx.run(cypher.load(name), params)]

    def init_schema(self) -> None:
        self._refuse_write("applying the schema")

        def run() -> None:
            self.transactions["schema"] += 1
            with self._session() as session:
                for statement in cypher.statements("schema"):
                    session.run(statement).consume()

        self._call(run)
        self._refresh_stale_files()

    def clear(self) -> None:
        """Delete everything (tests, ``init --reset``), in write transactions of
        at most ``_CLEAR_BATCH`` nodes: one transaction for the whole graph runs
        out of Neo4j's default transaction memory at 100k nodes. Not atomic: an
        interrupted clear leaves part of the graph, and running it again
        finishes the job."""

        def batch(tx: ManagedTransaction) -> int:
            return int(self._rows(tx, "delete_all", batch=_CLEAR_BATCH)[0]["deleted"])

        while self._write(batch):
            pass

    def saved_query(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run one of the analyst queries (``cypher/analyst/<name>.cypher``) read-only."""
        text = cypher.load_analyst(name)
        return self._read(lambda tx: [_row(r) for r in tx.run(text, params)])

    # -- writes -------------------------------------------------------------------

    def upsert_tasks(self, tasks: Sequence[Task]) -> None:
        rows = [{"props": task_props(t), "tags": task_tags(t), "deps": list(t.depends_on)} for t in tasks]
        known = {t.id for t in tasks}
        wanted = sorted({d for t in tasks for d in t.depends_on if d not in known})

        def work(tx: ManagedTransaction) -> None:
            missing = self._rows(tx, "tasks_missing", ids=wanted) if wanted else []
            if missing:
                raise UnknownTaskError(missing[0]["id"])
            tx.run(cypher.load("task_upsert"), rows=rows).consume()
            self._refresh_files(tx, self._touched_files(tx, tasks=[t.id for t in tasks]))

        self._write(work)

    def set_status(self, task_id: str, status: TaskStatus, *, reason: str | None, at: str) -> None:
        blocked = status is TaskStatus.BLOCKED

        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            found = self._rows(
                tx, "task_set_status", id=task_id, status=status.value,
                reason=(reason or "") if blocked else None, blocked_at=at if blocked else None, at=at,
            )
            self._refresh_files(tx, self._touched_files(tx, tasks=[task_id]))
            return found

        if not self._write(work):
            raise UnknownTaskError(task_id)

    def upsert_files(self, files: Sequence[FileEntry]) -> None:
        rows = [file_props(f) for f in files]

        def work(tx: ManagedTransaction) -> None:
            tx.run(cypher.load("files_upsert"), rows=rows).consume()
            self._refresh_files(tx, [row["path"] for row in rows])  # SET f = row dropped the counts

        self._write(work)

    def apply_handoff(self, record: HandoffRecord) -> bool:
        return self.apply_handoffs([record])[0]

    def apply_handoffs(self, records: Sequence[HandoffRecord]) -> list[bool]:
        """One write transaction for the batch, one UNWIND statement per kind of
        row (the batch is folded by :func:`plan_handoffs`, so each node once)."""
        if not records:
            return []
        keys = [{"task_id": r.task_id, "id": r.id} for r in records]

        def work(tx: ManagedTransaction) -> list[bool]:
            state = self._rows(tx, "handoff_state", rows=keys)
            for row in state:
                if not row["task_exists"]:
                    raise UnknownTaskError(row["task_id"])
            batch = plan_handoffs(records, {row["id"]: row["content_hash"] for row in state})
            stale = self._touched_files(tx, handoffs=list(batch.replaced)) if batch.replaced else []
            if batch.replaced:
                tx.run(cypher.load("handoff_clear_links"), ids=list(batch.replaced)).consume()
            if batch.handoffs:  # else every record was already there
                rows = _handoff_rows(batch)
                # the links after the nodes they join (an UNWIND over no rows does nothing)
                tx.run(cypher.load("handoff_write"), rows=rows["handoffs"]).consume()
                tx.run(cypher.load("knowledge_merge"), rows=rows["knowledge"]).consume()
                tx.run(cypher.load("handoff_discovered"), rows=rows["discovered"]).consume()
                tx.run(cypher.load("files_fill"), rows=rows["files"]).consume()
                tx.run(cypher.load("handoff_links"), rows=rows["links"]).consume()
                stale += self._touched_files(tx, tasks=sorted({r.task_id for r in records}))
            self._refresh_files(tx, stale)
            return list(batch.written)

        return self._write(work)

    def upsert_knowledge(
        self, items: Sequence[KnowledgeItem], supersedes: Sequence[tuple[str, str, str]] = ()
    ) -> None:
        rows = [{"label": k.label, "props": knowledge_props(k)} for k in items]
        pairs = [{"new": n, "old": o, "at": at} for n, o, at in supersedes]

        def work(tx: ManagedTransaction) -> None:
            if rows:
                tx.run(cypher.load("knowledge_upsert"), rows=rows).consume()
            if pairs:
                tx.run(cypher.load("knowledge_supersede"), pairs=pairs).consume()

        self._write(work)

    def get_knowledge(self, ids: Sequence[str]) -> list[KnowledgeItem]:
        wanted = sorted(set(ids))
        rows = self._read(lambda tx: self._rows(tx, "knowledge_get", ids=wanted))
        return [knowledge_from_props(r["props"]) for r in rows]

    # -- reads --------------------------------------------------------------------

    def get_task(self, task_id: str) -> Task | None:
        found = self.get_tasks([task_id])
        return found[0] if found else None

    def get_tasks(self, task_ids: Sequence[str]) -> list[Task]:
        ids = sorted(set(task_ids))
        rows = self._read(lambda tx: self._rows(tx, "task_get", ids=ids))
        return [task_from_props(r["props"], r["deps"]) for r in rows]

    def list_tasks(self, status: TaskStatus | None = None) -> list[Task]:
        value = status.value if status else None
        rows = self._read(lambda tx: self._rows(tx, "tasks_list", status=value))
        return [task_from_props(r["props"], r["deps"]) for r in rows]

    def dependency_edges(self) -> list[tuple[str, str]]:
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
        return self.dependency_edges() if found is None else found

    def _weighted(self, tx: ManagedTransaction, tags: Sequence[str], max_df: int) -> list[list[Any]]:
        """[[tag, rarity weight], ...] of the tags under the degree cap (``max_df``: 0 for none)."""
        stats = self._rows(tx, "tag_stats", tags=list(tags))[0]
        dfs = {name: df for name, df in stats["dfs"]}
        weights = tag_weights(dfs.items(), stats["total"])
        return [[t, weights[t]] for t in dict.fromkeys(tags) if t in dfs and (max_df <= 0 or dfs[t] <= max_df)]

    def knowledge_by_tags(self, tags: Sequence[str], limit: int, *, max_df: int = 0) -> list[KnowledgeHit]:
        if not tags or limit <= 0:
            return []

        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            return self._rows(tx, "knowledge_by_tags", weighted=self._weighted(tx, tags, max_df), limit=limit)

        return [_hit(r) for r in self._read(work)]

    def tasks_by_tags(
        self, tags: Sequence[str], limit: int, *, exclude: Sequence[str] = (), max_df: int = 0
    ) -> list[TaskHit]:
        if not tags or limit <= 0:
            return []

        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            return self._rows(tx, "tasks_by_tags", weighted=self._weighted(tx, tags, max_df), limit=limit,
                              exclude=list(exclude))

        return [
            TaskHit(task=task_from_props(r["props"], r["deps"]), matched_tags=tuple(sorted(r["matched"])))
            for r in self._read(work)
        ]

    def dependency_handoffs(self, task_ids: Sequence[str]) -> list[DependencyHandoff]:
        ids = sorted(set(task_ids))

        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            return self._rows(tx, "dependency_handoffs", ids=ids)

        return [_dependency(r) for r in self._read(work)]

    def context_map(
        self, keywords: Sequence[str], domains: Sequence[str], files: Sequence[str]
    ) -> list[FileEntry]:
        rows = self._read(
            lambda tx: self._rows(
                tx, "context_map", keywords=list(keywords), domains=list(domains), files=list(files)
            )
        )
        return [file_from_props(r["props"]) for r in rows]

    def all_files(self) -> list[FileEntry]:
        rows = self._read(lambda tx: self._rows(tx, "files_all"))
        return [file_from_props(r["props"]) for r in rows]

    def recent_tasks(self, n: int) -> list[RecentTask]:
        rows = self._read(lambda tx: self._rows(tx, "recent_tasks", n=n))
        out = []
        for r in rows:
            task = task_from_props(r["props"])
            out.append(
                RecentTask(id=task.id, intent=task.intent, success=task.success, completed_at=task.completed_at)
            )
        return out

    def active_blockers(self) -> list[Blocker]:
        rows = self._read(lambda tx: self._rows(tx, "active_blockers"))
        return [Blocker(id=r["id"], reason=r["reason"], since=r["since"]) for r in rows]

    @staticmethod
    def _gather_params(query: GatherQuery) -> dict[str, Any]:
        return {
            "keywords": list(query.keywords), "domains": list(query.domains), "files": list(query.files),
            "dep_ids": sorted(set(query.dep_ids)), "keyword_limit": query.keyword_limit,
            "domain_limit": query.domain_limit, "related_tags": [*query.keywords, *query.domains],
            "exclude": list(query.exclude), "related_limit": query.related_limit,
            "working_memory": query.working_memory, "recent_limit": query.recent_limit,
            "context_map": query.context_map, "max_tag_df": query.max_tag_df,
        }

    def gather(self, query: GatherQuery) -> Candidates:
        params = self._gather_params(query)
        return _candidates(query, self._read(lambda tx: self._rows(tx, "gather", **params))[0])

    def gather_with_history(
        self, query: GatherQuery, terms: Sequence[str], max_df_share: float, top_files: int = 10,
        vector: Sequence[float] | None = None,
    ) -> tuple[Candidates, HistoryEvidence]:
        # One managed read transaction for both statements (finding 6 of
        # benchmarks/README.md): the nested reads join it (see ``_read``).
        def work(tx: ManagedTransaction) -> tuple[Candidates, HistoryEvidence]:
            del tx  # joined by the reads below
            history = self.history_evidence(terms, max_df_share, top_files, vector)
            return self.gather(query.model_copy(update={"context_map": not history.files})), history

        return self._read(work)

    def replay_corpus(self) -> tuple[list[ReplayTask], list[ReplayFile]]:
        def work(tx: ManagedTransaction) -> tuple[list[ReplayTask], list[ReplayFile]]:
            tasks = [replay_task(r["props"], r["files"], r["vector"]) for r in self._rows(tx, "replay_tasks")]
            files = [ReplayFile(file_from_props(r["props"]), tuple(r["props"].get("terms") or ()),
                                bool(r["props"].get("in_map", True))) for r in self._rows(tx, "files_all")]
            return tasks, files

        return self._read(work)

    def history_evidence(self, terms: Sequence[str], max_df_share: float, top_files: int = 10,
                         vector: Sequence[float] | None = None) -> HistoryEvidence:
        # history.cypher bounds the evidence itself (graph.evidence.bound's arithmetic
        # in Cypher), so only the chosen tasks and files leave the server.
        row = self._read(lambda tx: self._rows(
            tx, "history", terms=list(dict.fromkeys(terms)), max_df_share=max_df_share, top_files=top_files,
            k1=evidence.K1, b=evidence.B, task_top=evidence.TASK_TOP, file_top=evidence.FILE_TOP,
            max_df_cap=evidence.TERM_DF_CAP, vector=None if vector is None else [float(x) for x in vector],
            dense_top=evidence.DENSE_VOTERS, dense_fetch=4 * evidence.DENSE_VOTERS,
            cosine_decimals=COSINE_DECIMALS))[0]
        return HistoryEvidence(
            n_tasks=row["n"], total_task_len=row["total"] or 0,
            n_files=row["n_files"], total_file_len=row["total_file_len"] or 0, mapped=bool(row["mapped"]),
            tasks=tuple(
                TaskEvidence.model_construct(id=t["id"], term_count=t["term_count"], completed_at=t["completed_at"],
                                             matched=tuple(sorted((m[0], m[1]) for m in t["matched"])),
                                             files=tuple(sorted(t["files"])))
                for t in sorted(row["tasks"], key=lambda t: t["id"])
            ),
            files=tuple(
                FileEvidence.model_construct(
                    entry=file_from_props(f["props"]), touches=f["touches"], task_len=f["task_len"],
                    own_len=f["own_len"], own_terms=tuple(f["own_terms"]),
                    in_map=bool(True if f["props"].get("in_map") is None else f["props"]["in_map"]),
                    term_tf=tuple(sorted((m[0], m[1]) for m in f["term_tf"])))
                for f in row["files"]
            ),
            file_df=tuple(sorted((m[0], m[1]) for m in row["file_df"])),
            neighbours=tuple(
                NeighbourEvidence.model_construct(id=x["id"], score=float(x["score"]), completed_at=x["completed_at"],
                                                  matched=tuple(sorted(set(x["matched"]))),
                                                  files=tuple(sorted(x["files"])))
                for x in row["near"]
            ),
        )

    # -- task vectors ---------------------------------------------------------------

    def tasks_to_embed(self, limit: int) -> list[tuple[str, str]]:
        rows = self._read(lambda tx: self._rows(tx, "task_vectors_pending"))
        out: list[tuple[str, str]] = []
        for r in rows:
            text = task_text(r)
            if text and r["embedding_hash"] != text_hash(text):
                out.append((r["id"], text))
                if len(out) >= limit:
                    break
        return out

    def write_task_vectors(self, rows: Sequence[tuple[str, str, Sequence[float]]]) -> None:
        self._refuse_write("storing task vectors")
        payload = [{"id": tid, "hash": digest, "vector": [float(x) for x in vec]} for tid, digest, vec in rows]
        self._write(lambda tx: tx.run(cypher.load("task_vectors_write"), rows=payload).consume())

    def has_task_vectors(self) -> bool:
        probe = [1.0] + [0.0] * (DIMENSIONS - 1)
        try:
            return bool(self._read(lambda tx: self._rows(tx, "task_vectors_any", probe=probe)))
        except neo4j_errors.ClientError as exc:
            # A graph whose schema predates task vectors (opened read-only, so the
            # schema was not applied) has no task_embedding index: no vectors.
            if (exc.code or "").startswith("Neo.ClientError.Procedure"):
                log.info("no task vectors: %s", _first_line(exc))
                return False
            raise

    def task_vector_count(self) -> int:
        return int(self._read(lambda tx: self._rows(tx, "task_vectors_count"))[0]["n"])

    def stats(self) -> Stats:
        def work(tx: ManagedTransaction) -> Stats:
            labels = {r["label"]: r["count"] for r in self._rows(tx, "stats_labels")}
            rels = {r["type"]: r["count"] for r in self._rows(tx, "stats_relationships")}
            return Stats(labels=labels, relationships=rels)

        return self._read(work)

    # -- export / import (the file format: ctxgraph.graph.backup) -------------------

    def export_rows(self) -> Iterator[dict[str, Any]]:
        """The whole graph as export rows (see ``KnowledgeStore.export_rows``),
        read in one read transaction; the shared ``Knowledge`` label is left out."""

        def work(tx: ManagedTransaction) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            return self._rows(tx, "export_nodes"), self._rows(tx, "export_relationships")

        nodes, rels = self._read(work)
        yield from sorted_rows(
            (node_row(_export_label(r["labels"], r["props"].get("id")), r["props"]["id"], _exported(r["props"]))
             for r in nodes),
            (rel_row(r["type"], (_export_label(r["src_labels"], r["src_id"]), r["src_id"]),
                     (_export_label(r["dst_labels"], r["dst_id"]), r["dst_id"]), r["props"])
             for r in rels),
        )

    def import_rows(self, rows: Iterable[dict[str, Any]]) -> None:
        """Write export rows with MERGE semantics, one managed write transaction
        per batch (see ``KnowledgeStore.import_rows``)."""
        for kind, batch in backup_batches(rows):
            if kind == "node":
                nodes = [{"label": r["label"], "id": r["id"], "props": r["props"]} for r in batch]

                def write_nodes(tx: ManagedTransaction, nodes: list[dict[str, Any]] = nodes) -> None:
                    tx.run(cypher.load("import_nodes"), rows=nodes, knowledge_labels=list(KNOWLEDGE_LABELS)).consume()

                self._write(write_nodes)
                continue
            rels = [{"n": i, "type": r["type"], "src": r["src"], "dst": r["dst"], "props": r["props"]}
                    for i, r in enumerate(batch)]

            def work(tx: ManagedTransaction, rels: list[dict[str, Any]] = rels) -> None:
                written = set(self._rows(tx, "import_relationships", rows=rels)[0]["written"])
                for rel in rels:
                    if rel["n"] not in written:  # raising rolls the batch back
                        raise InvalidDocumentError("<import>", [("", (
                            f"{rel['type']} relationship {rel['src']!r} -> {rel['dst']!r}: "
                            "an end is not in the store"))])

            self._write(work)
        self.refresh_all_files()

    # -- context outcomes (ctxgraph.graph.neo4j_outcomes) ---------------------------

    def record_deliveries(self, deliveries: Sequence[Delivery], keep: int) -> None:
        neo4j_outcomes.record(self, deliveries, keep)

    def deliveries(self, *, task_ids: Sequence[str] | None = None, since: str | None = None,
                   last: int | None = None) -> list[StoredDelivery]:
        return neo4j_outcomes.read(self, task_ids=task_ids, since=since, last=last)

    def score_deliveries(self, scores: Sequence[tuple[str, DeliveryScore]]) -> None:
        neo4j_outcomes.save_scores(self, scores)

    def handoff_files(self, task_ids: Sequence[str]) -> dict[str, list[str]]:
        return neo4j_outcomes.handoff_files(self, task_ids)

    # -- the files' history counts (files_refresh.cypher) -------------------------

    def _touched_files(self, tx: ManagedTransaction, *, tasks: Sequence[str] = (),
                       handoffs: Sequence[str] = ()) -> list[str]:
        """Paths the handoffs of ``tasks`` (or the ``handoffs``) created or modified."""
        return [r["path"] for r in self._rows(tx, "files_touched_by", ids=list(tasks), handoffs=list(handoffs))]

    def _refresh_files(self, tx: ManagedTransaction, paths: Sequence[str]) -> None:
        """Recount ``touches`` and ``task_len`` of the files at ``paths`` (same transaction)."""
        if paths:
            tx.run(cypher.load("files_refresh"), paths=sorted(set(paths))).consume()

    def refresh_all_files(self) -> None:
        """Recount every file's history, ``_REFRESH_BATCH`` files per write
        transaction (after an import, whose rows replace the counts)."""
        paths = [r["path"] for r in self._read(lambda tx: self._rows(tx, "files_paths"))]
        for start in range(0, len(paths), _REFRESH_BATCH):
            part = paths[start:start + _REFRESH_BATCH]

            def work(tx: ManagedTransaction, part: list[str] = part) -> None:
                self._refresh_files(tx, part)

            self._write(work)

    def _refresh_stale_files(self) -> None:
        """Count the history of files never counted (a graph written before the
        counts were kept on File): once, when the schema is applied."""
        seen: set[str] = set()
        while True:
            paths = [r["path"] for r in self._read(lambda tx: self._rows(tx, "files_stale", batch=_REFRESH_BATCH))]
            if not paths or seen.issuperset(paths):  # nothing left (or nothing a recount can set)
                return
            seen.update(paths)

            def work(tx: ManagedTransaction, paths: list[str] = paths) -> None:
                self._refresh_files(tx, paths)

            self._write(work)

    # -- associative memory -------------------------------------------------------

    #: Nodes the full-text index returns before the project filter, at first
    #: (times k); widened while another project's chunks crowd them out.
    MEMORY_FETCH = 4
    #: The same for the vector index, whose HNSW search is approximate: asked
    #: for 4 x 5 nodes it missed one of the exact top 5 chunks in 9 of
    #: werkzeug's 150 evaluation queries (520 chunks), asked for 8 x 5 in none,
    #: for ~3 ms more on 10,000 chunks.
    MEMORY_VECTOR_FETCH = 8
    MEMORY_FETCH_MAX = 4096

    def memory_projects(self) -> list[MemoryProject]:
        rows = self._read(lambda tx: self._rows(tx, "memory_projects"))
        return [MemoryProject(**r["project"]) for r in rows]

    def memory_state(self, project: str) -> MemoryState:
        row = self._read(lambda tx: self._rows(tx, "memory_state", project=project))[0]
        found = row["project"]
        return MemoryState(project=MemoryProject(**found) if found else None,
                           file_hashes={str(path): str(sha) for path, sha in row["hashes"]})

    def write_memory(self, project: MemoryProject, chunks: Sequence[MemoryChunk], replaced: Sequence[str]) -> None:
        """One transaction: drop the chunks of ``replaced`` paths, write
        ``chunks`` (creating missing files), record the project."""
        rows = [chunk_props(project.id, c) for c in chunks]
        files = [file_props(FileEntry(path=p), in_map=False) for p in sorted({c.path for c in chunks})]

        def work(tx: ManagedTransaction) -> None:
            if replaced:
                tx.run(cypher.load("memory_remove"), project=project.id, paths=list(replaced)).consume()
            if files:
                tx.run(cypher.load("files_fill"), rows=files).consume()
            for start in range(0, len(rows), 500):
                tx.run(cypher.load("memory_write"), rows=rows[start:start + 500]).consume()
            tx.run(cypher.load("memory_project"), props=project.model_dump(mode="json")).consume()

        self._write(work)

    def search_memory(
        self, project: str, vector: Sequence[float] | None, terms: Sequence[str], k: int,
    ) -> tuple[list[MemoryHit], list[MemoryHit]]:
        """(nearest chunks by cosine, best full-text matches) of ``project``,
        ``k`` each, best first — from the native vector and full-text indexes."""
        query = fulltext_query(terms)
        keep = 2 * k  # rows returned per search: the top k and ties at the cut, re-ranked below

        def search(tx: ManagedTransaction, statement: Callable[[int], list[dict[str, Any]]],
                   fetch: int) -> list[dict[str, Any]]:
            while True:
                row = statement(fetch)[0]
                hits: list[dict[str, Any]] = row["hits"]
                if len(hits) >= keep or row["fetched"] < fetch or fetch >= self.MEMORY_FETCH_MAX:
                    return hits
                fetch *= 8  # other projects' chunks crowded this one's out: look further

        def work(tx: ManagedTransaction) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            near = search(tx, lambda fetch: self._rows(
                tx, "memory_vector", project=project, vector=[float(x) for x in vector or ()], fetch=fetch, k=keep,
            ), self.MEMORY_VECTOR_FETCH * k) if vector is not None else []
            text = search(tx, lambda fetch: self._rows(
                tx, "memory_fulltext", project=project, query=query, fetch=fetch, k=keep,
            ), self.MEMORY_FETCH * k) if query else []
            return near, text

        near, text = self._read(work)
        # The vector index scores (1 + cosine) / 2; hits carry the cosine.
        by_vector = ranked(((chunk_from_props(r["chunk"]), 2 * float(r["score"]) - 1) for r in near),
                           COSINE_DECIMALS, k)
        by_text = ranked(((chunk_from_props(r["chunk"]), float(r["score"])) for r in text), BM25_DECIMALS, k)
        return by_vector, by_text


_RATE_LIMITED = "Neo.ClientError.Security.AuthenticationRateLimit"
def _exported(props: dict[str, Any]) -> dict[str, Any]:
    """A node's properties as exported: without what the store derives — the
    history counts kept on File (``files_refresh``), which the embedded store
    does not keep, and a task's text vector (``embed-tasks`` makes it again)."""
    if any(k in props for k in _DERIVED):
        return {k: v for k, v in props.items() if k not in _DERIVED}
    return props


_DERIVED = ("touches", "task_len", "embedding", "embedding_hash")


_CLEAR_BATCH = 10_000  # nodes per transaction in clear()
_REFRESH_BATCH = 5_000  # files recounted per transaction (imports, old graphs)


def _rate_limited(uri: str, user: str | None) -> str:
    who = f" user {user!r}" if user else ""
    return (f"Neo4j at {uri} refuses to log in{who} for now: too many wrong passwords in a row "
            "(check NEO4J_USER / NEO4J_PASSWORD, then retry in a few seconds)")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _candidates(query: GatherQuery, r: dict[str, Any]) -> Candidates:
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
        memory_projects=tuple(MemoryProject(**p) for p in r["projects"]),
        tag_df=tuple(sorted((s["name"], s["df"]) for s in r["tag_stats"])),
        tagged_total=r["tagged_total"],
    )


def _handoff_rows(batch: HandoffBatch) -> dict[str, list[dict[str, Any]]]:
    """The ``$rows`` of each statement writing a folded batch."""
    return {
        "handoffs": [
            {"task_id": h.task_id, "props": h.props(), "success": h.success, "summary": h.summary,
             "completed_at": h.completed_at,
             "status": (TaskStatus.COMPLETED if h.success else TaskStatus.FAILED).value}
            for h in batch.handoffs
        ],
        "knowledge": [{"label": k.label, "props": knowledge_props(k)} for k in batch.knowledge],
        "discovered": [{"handoff_id": h, "id": k.id} for h, k in batch.discovered()],
        "files": [f.props() for f in batch.files],
        "links": [{"handoff_id": h, "rel": link.rel, "path": link.path, "props": link_props(link)}
                  for h, link in batch.links()],
    }


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


def _export_label(labels: list[str], node_id: Any) -> str:
    """A node's one specific label (``Knowledge`` already left out), for an export."""
    if len(labels) != 1 or not isinstance(node_id, str):
        raise CtxgraphError(
            f"cannot export a node with labels {labels!r} and id {node_id!r}: "
            "every node needs one ctxgraph label and a text id"
        )
    return labels[0]
