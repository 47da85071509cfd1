"""The history of finished tasks: its evidence for a context (the best tasks and
files by BM25 — found by the full-text indexes, ``history_text_tasks.cypher``
and ``history_text_files.cypher`` side by side, and scored from the statistics
the graph keeps exact, ``text.py`` — then the chosen ones' evidence, bounded
on the server, ``history.cypher``, and the nearest tasks by vector,
``history_near.cypher``), the task vectors it searches (``embed-tasks``), and
the corpus ``ctxgraph tune`` replays."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from neo4j import ManagedTransaction
from neo4j import exceptions as neo4j_errors

from ctxgraph import cypher
from ctxgraph.core import evidence
from ctxgraph.core.bm25 import query_terms
from ctxgraph.core.models import FileEvidence, HistoryEvidence, NeighbourEvidence, ReplayFile, ReplayTask, TaskEvidence
from ctxgraph.core.vectors import COSINE_DECIMALS, DIMENSIONS
from ctxgraph.graph.memory_records import fulltext_query
from ctxgraph.graph.neo4j_store.connection import Neo4jConnection, _first_line, log
from ctxgraph.graph.neo4j_store.text import FETCH, GROWTH, TextTop, file_top, task_top
from ctxgraph.graph.records import file_from_props, replay_task, task_text, text_hash

R = TypeVar("R")
#: A text candidates statement's row for distinct query terms and a limit (``_text_tasks``, ``_text_files``).
TextFetch = Callable[[ManagedTransaction, Sequence[str], int], dict[str, Any]]


class History(Neo4jConnection):
    #: Whether the history's full-text indexes exist (a read-only store asks once).
    _has_text_indexes: bool | None = None

    def replay_corpus(self) -> tuple[list[ReplayTask], list[ReplayFile]]:
        def work(tx: ManagedTransaction) -> tuple[list[ReplayTask], list[ReplayFile]]:
            tasks = [replay_task(r["props"], r["files"], r["vector"]) for r in self._rows(tx, "replay_tasks")]
            files = [ReplayFile(file_from_props(r["props"]), tuple(r["props"].get("terms") or ()),
                                bool(r["props"].get("in_map", True))) for r in self._rows(tx, "files_all")]
            return tasks, files

        return self._read(work)

    def _near(self, tx: ManagedTransaction, terms: Sequence[str], vector: Sequence[float]) -> list[dict[str, Any]]:
        """The ``history_near`` statement's neighbours of ``vector`` (the query's
        embedding), each with the query ``terms`` it mentions and its files."""
        rows = self._rows(tx, "history_near", terms=query_terms(terms), vector=[float(x) for x in vector],
                          dense_top=evidence.DENSE_VOTERS, dense_fetch=4 * evidence.DENSE_VOTERS,
                          cosine_decimals=COSINE_DECIMALS)
        near: list[dict[str, Any]] = rows[0]["near"]
        return near

    def _history_row(self, tx: ManagedTransaction, terms: Sequence[str], top_files: int,
                     near: Callable[[], list[dict[str, Any]]],
                     files: Callable[[], dict[str, Any] | None]) -> tuple[dict[str, Any], TextTop]:
        """The ``history`` statement's row, with the neighbours ``near`` gives
        (``_near``'s) as ``near``, and the exact text ranking it was asked with:
        ``history_text_tasks`` and ``history_text_files`` find and describe the
        candidates (the files' first row is the one ``files`` gives,
        ``_file_candidates``'), each run again with more while its cut fails
        its check (``text.py``). The callables are asked only once the tasks
        are ranked: their statements may run on other threads meanwhile, and
        the scoring stays on this one (a worker that held the interpreter
        would keep this thread waiting for it). ``history`` then reads the
        chosen tasks' and files' evidence, the files the neighbours touched
        and the most touched files."""
        query = query_terms(terms)
        top = TextTop()
        if self._text_ready(query):
            top.tasks = self._ranked(tx, self._text_tasks, query, FETCH * evidence.TASK_TOP, task_top)
            top.files = self._ranked(tx, self._text_files, query, FETCH * evidence.FILE_TOP, file_top,
                                     first=files())
        neighbours = near()
        row: dict[str, Any] = self._rows(
            tx, "history", terms=query, tasks=[t.id for t in top.tasks], text_paths=sorted(top.files),
            top_files=top_files, near_files=[n["files"] for n in neighbours])[0]
        return {**row, "near": neighbours}, top

    def _text_ready(self, query: Sequence[str]) -> bool:
        """Whether ``query`` (distinct terms) is ranked by text: it has terms
        and the store its full-text indexes."""
        return bool(query) and self._text_indexes()

    def _file_candidates(self, tx: ManagedTransaction, terms: Sequence[str]) -> dict[str, Any] | None:
        """The first ``history_text_files`` row for ``terms`` (None: no text
        ranking), fetched beside the tasks' ranking."""
        query = query_terms(terms)
        if not self._text_ready(query):
            return None
        return self._text_files(tx, query, FETCH * evidence.FILE_TOP)

    def _text_tasks(self, tx: ManagedTransaction, query: Sequence[str], fetch: int) -> dict[str, Any]:
        """The ``history_text_tasks`` row: ``fetch`` task candidates for the distinct terms ``query``."""
        row: dict[str, Any] = self._rows(tx, "history_text_tasks", **_text_params(query, fetch))[0]
        return row

    def _text_files(self, tx: ManagedTransaction, query: Sequence[str], fetch: int) -> dict[str, Any]:
        """The ``history_text_files`` row: ``fetch`` file candidates for the distinct terms ``query``."""
        row: dict[str, Any] = self._rows(tx, "history_text_files", **_text_params(query, fetch))[0]
        return row

    def _ranked(self, tx: ManagedTransaction, candidates: TextFetch, query: Sequence[str], fetch: int,
                cut: Callable[[dict[str, Any], Sequence[str], int], tuple[R, bool]],
                first: dict[str, Any] | None = None) -> R:
        """The best of the ``candidates`` for the distinct terms ``query`` by
        ``cut`` (``text.task_top`` or ``file_top``): ``fetch`` of them first
        (the row ``first`` when given), ``GROWTH`` x as many again while the
        cut fails its check."""
        row = first if first is not None else candidates(tx, query, fetch)
        while True:
            best, done = cut(row, query, fetch)
            if done:
                return best
            log.debug("history: a text cut failed its check; %d fetched, %d next", fetch, GROWTH * fetch)
            fetch *= GROWTH
            row = candidates(tx, query, fetch)

    def _text_indexes(self) -> bool:
        """Whether the history's full-text indexes exist: always when the
        schema was applied (on connect); a graph written by an older ctxgraph
        and opened read-only may lack them, and then has no text evidence.
        Asked once per store, and only of a read-only one."""
        if not self.read_only:
            return True
        found = self._has_text_indexes
        if found is None:
            rows = self._read(lambda tx: self._rows(tx, "history_indexes", names=list(_TEXT_INDEXES)))
            found = {r["name"] for r in rows} >= set(_TEXT_INDEXES)
            if not found:
                log.info("no history text indexes (%s): the graph predates them", ", ".join(_TEXT_INDEXES))
            self._has_text_indexes = found
        return found

    def tasks_to_embed(self, limit: int, ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        if ids is None:
            rows = self._read(lambda tx: self._rows(tx, "task_vectors_pending"))
        else:
            wanted = sorted(set(ids))
            rows = self._read(lambda tx: self._rows(tx, "task_vectors_pending_among", ids=wanted))
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

    def task_query_vectors(self, ids: Sequence[str]) -> dict[str, tuple[str, list[float]]]:
        rows = self._read(lambda tx: self._rows(tx, "task_query_vectors_read", ids=list(ids)))
        return {r["id"]: (r["hash"], [float(x) for x in r["vector"]]) for r in rows}

    def write_task_query_vectors(self, rows: Sequence[tuple[str, str, Sequence[float]]]) -> None:
        self._refuse_write("storing task query vectors")
        payload = [{"id": tid, "hash": digest, "vector": [float(x) for x in vec]} for tid, digest, vec in rows]
        self._write(lambda tx: tx.run(cypher.load("task_query_vectors_write"), rows=payload).consume())

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


_TEXT_INDEXES = ("task_text", "file_text")


def _text_params(query: Sequence[str], fetch: int) -> dict[str, Any]:
    """A text candidates statement's parameters (``history_text_tasks.cypher``)."""
    return {"terms": list(query), "wanted": dict.fromkeys(query, True), "query": fulltext_query(query), "fetch": fetch}


def history_of_row(row: dict[str, Any], top: TextTop) -> HistoryEvidence:
    """The ``history`` statement's one row and its text ranking as evidence:
    the chosen tasks and, of the files returned, those a store returns
    (``core.evidence.choose_files``): the chosen by text, those the chosen
    tasks and the neighbours touched (or the folder a touched module became),
    the most touched."""
    # the evidence validated (faster than model_construct for these flat models),
    # the HistoryEvidence holding it not
    files_of = {t["id"]: t["files"] for t in row["tasks"]}
    tasks = [TaskEvidence(id=t.id, score=t.score, completed_at=t.completed_at, matched=t.matched,
                          files=tuple(sorted(set(files_of.get(t.id, ()))))) for t in top.tasks]
    near = [NeighbourEvidence(id=x["id"], score=float(x["score"]), completed_at=x["completed_at"],
                              matched=tuple(sorted(set(x["matched"]))), files=tuple(sorted(x["files"])))
            for x in row["near"]]
    text = top.files
    returned = {f["props"]["path"] for f in row["files"]}
    kids = {v["path"]: v["kids"] for v in row["voted"]}
    chosen = set(text) | set(row["most_touched"])
    for path in [p for t in tasks for p in t.files] + [p for x in near for p in x.files]:
        if path in returned:
            chosen.add(path)
        chosen.update(k for k in kids.get(path, ()) if k in returned)
    return HistoryEvidence.model_construct(
        n_tasks=row["n"], mapped=bool(row["mapped"]), tasks=tuple(tasks),
        files=tuple(
            FileEvidence(
                entry=file_from_props(f["props"]), touches=f["touches"],
                in_map=bool(True if f["props"].get("in_map") is None else f["props"]["in_map"]),
                text=text.get(f["props"]["path"], 0.0))
            for f in row["files"] if f["props"]["path"] in chosen
        ),
        neighbours=tuple(near),
    )
