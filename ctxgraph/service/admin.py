"""Store-level operations: where the store is, its schema and a reset, its
counts, the associative memory's index, and the whole graph exported to and
imported from JSON lines (:mod:`ctxgraph.graph.backup`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Self

from ctxgraph.core.models import MemoryProject
from ctxgraph.graph.backup import BATCH_SIZE, ExportReader, ExportSummary, export_to_path, import_rows_into
from ctxgraph.graph.local import default_path, discard_if_empty
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service.base import ServiceBase

if TYPE_CHECKING:  # the memory index is imported by the commands that index
    from ctxgraph.memory.index import IndexReport, Progress
    from ctxgraph.memory.worker import IndexQueue, IndexRequest, IndexWorker
    from ctxgraph.service.root import ProjectRoot

#: Rows an import writes per transaction.
IMPORT_BATCH = BATCH_SIZE


class AdminMixin(ServiceBase):
    """The store as a whole."""

    @property
    def location(self) -> str:
        """Where the store is: the embedded file's path, or the Neo4j server's URI."""
        return self.store.location

    @staticmethod
    def default_store_path() -> Path:
        """The embedded store :meth:`ContextService.open` opens when no path and no
        ``CTXGRAPH_STORE`` name one: the nearest ``.ctxgraph/graph.db`` from the
        current folder upwards, else ``./.ctxgraph/graph.db``."""
        return default_path()

    @staticmethod
    def discard_empty_store(path: str | os.PathLike[str]) -> bool:
        """Delete the embedded store at ``path`` if it holds no node and no other
        process has it open (a failed command's side effect); True when deleted."""
        return discard_if_empty(Path(path))

    def initialize(self, *, reset: bool = False) -> None:
        """Apply the schema (constraints and indexes; idempotent), creating the
        embedded store or checking the server. ``reset`` deletes everything in
        the store first."""
        if reset:
            self.store.clear()
        self.store.init_schema()

    def stats(self) -> dict[str, dict[str, int]]:
        """Nodes per label (``labels``) and relationships per type (``relationships``)."""
        s = self.store.stats()
        return {"labels": s.labels, "relationships": s.relationships}

    # -- associative memory ----------------------------------------------------------

    def use_root(self, path: str | Path) -> ProjectRoot:
        """Make ``path`` the project's root (as ``--root``), instead of the one found."""
        from ctxgraph.service.root import ProjectRoot

        self.root = ProjectRoot(Path(path).resolve(), "--root")
        return self.root

    def memory_projects(self) -> list[MemoryProject]:
        """The projects indexed for the associative memory."""
        return self.store.memory_projects()

    def index_project(
        self,
        root: str | Path,
        *,
        project: str | None = None,
        embeddings: bool = True,
        progress: Progress | None = None,
        time_limit: float | None = None,
        explain: bool = False,
    ) -> IndexReport:
        """Index (incrementally) the files under ``root`` as project ``project``
        (:func:`ctxgraph.memory.index.index_project`), with this service's
        embedder and its rules of what is never indexed (:attr:`secrets`);
        ``progress(done, total)`` follows the files, and a run stops after about
        ``time_limit`` seconds (the next one goes on). ``explain`` reads every
        file, so that the report counts the values redacted in each."""
        from ctxgraph.memory.index import index_project

        return index_project(self.store, root, project=project, embeddings=embeddings,
                             embedder=self.embedder, progress=progress, time_limit=time_limit,
                             secrets=self.secrets, explain=explain)

    @classmethod
    def index_worker(
        cls,
        open_service: Callable[[], Self],
        queue: IndexQueue,
        *,
        time_limit: float,
        on_report: Callable[[IndexReport], None] | None = None,
        on_error: Callable[[IndexRequest, BaseException, float], None] | None = None,
        max_runs: int | None = None,
        follow_up: Callable[[Self, IndexReport], None] | None = None,
        keep_store: bool = False,
        progress: Progress | None = None,
    ) -> IndexWorker:
        """A background worker (not started) that runs ``queue``'s index requests
        one at a time, each on the store of a service ``open_service`` opens for
        it (closed after the run, or with ``keep_store`` kept open until a failure
        or the end; a failure is retried with backoff). After a complete run,
        ``follow_up(service, report)`` with a service on that store."""

        from ctxgraph.memory.worker import IndexWorker

        def open_store() -> KnowledgeStore:
            svc = open_service()
            worker.secrets = svc.secrets  # the settings' rules, as the service read them
            return svc.store

        def after(store: KnowledgeStore, report: IndexReport) -> None:
            if follow_up is not None:
                follow_up(cls(store), report)

        worker = IndexWorker(open_store, queue, time_limit=time_limit, on_report=on_report, on_error=on_error,
                             max_runs=max_runs, follow_up=after if follow_up is not None else None,
                             keep_store=keep_store, progress=progress)
        return worker

    # -- export and import -------------------------------------------------------------

    def export_to(self, path: str | os.PathLike[str]) -> ExportSummary:
        """Write the whole graph to ``path`` as JSON lines, whole or not at all
        (``-``: standard output). The same graph gives the same bytes from either store."""
        return export_to_path(self.store, path)

    def import_from(
        self,
        reader: ExportReader,
        *,
        progress: Callable[[int], None] | None = None,
        validated: ExportSummary | None = None,
    ) -> ExportSummary:
        """Load an export into the store (merged: the same file twice changes
        nothing). The whole file is validated first unless ``validated`` is its
        summary from ``reader.validate()``; ``progress(1)`` per row written."""
        return import_rows_into(self.store, reader, progress, validated=validated)


__all__ = ["IMPORT_BATCH", "AdminMixin", "ExportReader", "ExportSummary"]
