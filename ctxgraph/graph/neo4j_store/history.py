"""The history of finished tasks: ``history_evidence`` (term and vector
evidence bounded on the server, ``history.cypher``), the task vectors it
searches (``embed-tasks``), and the corpus ``ctxgraph tune`` replays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import ManagedTransaction
from neo4j import exceptions as neo4j_errors

from ctxgraph import cypher
from ctxgraph.core import evidence
from ctxgraph.core.models import FileEvidence, HistoryEvidence, NeighbourEvidence, TaskEvidence
from ctxgraph.core.vectors import DIMENSIONS
from ctxgraph.graph.memory_records import COSINE_DECIMALS
from ctxgraph.graph.neo4j_store.connection import Neo4jConnection, _first_line, log
from ctxgraph.graph.records import file_from_props, task_text, text_hash
from ctxgraph.graph.replay_records import ReplayFile, ReplayTask, replay_task


class History(Neo4jConnection):
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
        return _history(row)

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


def _history(row: dict[str, Any]) -> HistoryEvidence:
    """The ``history`` statement's one row as evidence."""
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
