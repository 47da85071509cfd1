"""The project's past, read at ``init`` and kept current (issue 44): its git
history as finished tasks (:mod:`ctxgraph.service.history`), its ADRs and the
notes in its code as decisions and gotchas
(:mod:`ctxgraph.service.project_notes`), in one call that ``init``, ``sync``,
the post-commit hook (through ``sync``) and the MCP server's keeper share.

After the history, the finished tasks without a vector of their text are
embedded (the neighbours by meaning, ``embed_seconds``: for at most that
long; None: not at all): ``init`` gives it :data:`INIT_EMBED_SECONDS`,
``sync`` :data:`SYNC_EMBED_SECONDS`, the MCP server's keeper its run's
limit, each going on where the last stopped; ``ctxgraph embed-tasks`` embeds
them all. What is left is the report's ``pending``: the import is
``partial`` until none is.

``kept_only``: the history is imported only when one was imported before (the
store's record of it), the ADRs and notes only when they were: ``init
--no-history`` stays without a history, and a later ``sync`` does not bring
it in behind the user's back. The ADRs and notes follow the ``[knowledge]``
settings (``adrs``, ``notes``). What cannot be read
(no root known, git missing or failing) is said in ``notes`` and skipped; a
folder outside git has no history, and that is not said; nothing else is
caught.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgraph.service.history import SOURCE_ID, HistoryMixin, HistoryOptions, HistoryReport
from ctxgraph.service.project_notes import SOURCE as KNOWLEDGE_SOURCE
from ctxgraph.service.project_notes import KnowledgeImportReport, ProjectKnowledgeMixin
from ctxgraph.sources.git_log import GitError, work_tree

#: How long ``init`` embeds the imported tasks (the rest: ``sync``, the MCP server, ``embed-tasks``).
INIT_EMBED_SECONDS = 120.0
#: How long a ``sync`` (and the post-commit hook's) embeds them.
SYNC_EMBED_SECONDS = 30.0


@dataclass
class TaskVectorsReport:
    """What embedding the finished tasks did: how many got a vector, how many
    are still without one (``partial`` while any is), seconds, and why none
    was embedded (``skipped``: no model installed, task vectors turned off)."""

    embedded: int = 0
    pending: int = 0
    seconds: float = 0.0
    skipped: str = ""

    @property
    def partial(self) -> bool:
        return self.pending > 0

    def as_dict(self) -> dict[str, Any]:
        return {"embedded": self.embedded, "pending": self.pending, "seconds": self.seconds,
                "skipped": self.skipped, "partial": self.partial}


@dataclass
class PastReport:
    """What :meth:`PastMixin.import_past` did: each import's report (None:
    not run) and why a part was skipped."""

    history: HistoryReport | None = None
    knowledge: KnowledgeImportReport | None = None
    tasks: TaskVectorsReport | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"history": self.history.as_dict() if self.history else None,
                "knowledge": self.knowledge.as_dict() if self.knowledge else None,
                "tasks": self.tasks.as_dict() if self.tasks else None, "notes": list(self.notes)}


class PastMixin(HistoryMixin, ProjectKnowledgeMixin):
    """Import the project's past in one call."""

    def history_kept(self) -> bool:
        """Whether this graph holds an imported history (which ``sync`` keeps current)."""
        return self.store.history_source(SOURCE_ID) is not None

    def knowledge_kept(self) -> bool:
        """Whether this graph holds the project's imported ADRs and notes (which ``sync`` keeps current)."""
        return bool(self.store.imported_files(KNOWLEDGE_SOURCE))

    def import_past(self, root: str | Path | None = None, *, history: bool = True, knowledge: bool = True,
                    kept_only: bool = False, time_limit: float | None = None,
                    progress: Callable[[HistoryReport], None] | None = None, embed_seconds: float | None = None,
                    embed_progress: Callable[[int, int], None] | None = None,
                    stop: Callable[[], bool] | None = None) -> PastReport:
        """Import what ``root`` (default: the project's root) holds of the
        project's past (see the module's text)."""
        report = PastReport()
        top = Path(root).resolve() if root is not None else self.root.path if self.root is not None else None
        if top is None:
            report.notes.append("no project root known: its history, ADRs and code notes are not read")
            return report
        # (a folder outside git has no history: nothing to say)
        if history and (not kept_only or self.history_kept()) and work_tree(top) is not None:
            try:
                report.history = self.import_history(top, HistoryOptions(time_limit=time_limit), progress=progress)
            except GitError as exc:
                report.notes.append(f"history not imported: {exc}")
        if knowledge and (not kept_only or self.knowledge_kept()):
            report.knowledge = self.import_project_knowledge(top)
        if embed_seconds is not None and report.history is not None:
            report.tasks = self.embed_past(embed_seconds, progress=embed_progress, stop=stop)
        return report

    def embed_past(self, seconds: float, *, progress: Callable[[int, int], None] | None = None,
                   stop: Callable[[], bool] | None = None) -> TaskVectorsReport:
        """Embed the finished tasks without a vector of their text for at most
        ``seconds`` (``progress(done, total)`` after each batch; ``stop()``
        ends it early); what is left is ``pending``."""
        from ctxgraph.memory.embed import EmbeddingUnavailableError
        from ctxgraph.memory.model import model_dir

        report = TaskVectorsReport()
        if not self.task_vectors:
            report.skipped = "task vectors are turned off (CTXGRAPH_TASK_VECTORS=0)"
            return report
        pending = self.store.tasks_to_embed(10**9)
        if not pending:
            return report
        try:
            model_dir()
        except EmbeddingUnavailableError:
            report.skipped, report.pending = "no embedding model installed", len(pending)
            return report
        started = time.monotonic()
        seen = 0

        def tick(n: int) -> None:
            nonlocal seen
            seen += n
            if progress is not None:
                progress(seen, len(pending))

        def over() -> bool:
            return time.monotonic() - started >= seconds or (stop is not None and stop())

        try:
            report.embedded = self.embed_tasks(pending, progress=tick, stop=over)
        except EmbeddingUnavailableError as exc:
            report.skipped = str(exc)
        report.pending = len(self.store.tasks_to_embed(10**9)) if seen < len(pending) or report.skipped else 0
        report.seconds = round(time.monotonic() - started, 3)
        return report


def history_line(report: HistoryReport) -> str:
    """One line of what an import did, for ``init`` and ``sync``."""
    if report.mode == "no commits":
        return "history: no commits yet (sync and the post-commit hook import them as they land)"
    skipped = sum(report.skipped.values())
    parts = [f"{_count(report.imported, 'commit')} imported as finished tasks"]
    if report.mode == "up to date" and not (report.imported or report.retired or report.revived):
        parts = ["up to date"]
    if skipped:
        parts.append(f"{skipped:,} skipped as noise")
    if report.gotchas or report.gotchas_removed:
        parts.append(f"reverts: {_count(report.gotchas, 'gotcha')} written, {report.gotchas_removed:,} removed")
    if report.retired or report.revived:
        parts.append(f"{report.retired:,} retired, {report.revived:,} back")
    if report.partial:
        parts.append(f"stopped early ({report.stopped}): run it again to go on")
    return f"history: {', '.join(parts)} ({report.seconds:.1f} s)"


def tasks_line(report: TaskVectorsReport) -> str | None:
    """One line of what embedding the imported tasks did (None: nothing to say)."""
    if report.skipped and report.skipped != "no embedding model installed":
        return f"tasks: not embedded: {report.skipped}"
    if report.skipped or not (report.embedded or report.pending):
        return None
    done = f"tasks: {report.embedded:,} embedded for the neighbours by meaning ({report.seconds:.1f} s)"
    if not report.partial:
        return done + "; complete"
    return (f"{done}; {report.pending:,} not yet: partial (`ctxgraph sync`, the MCP server in the background "
            "or `ctxgraph embed-tasks` go on)")


def knowledge_line(report: KnowledgeImportReport) -> str:
    """One line of what an import of ADRs and code notes did."""
    return (f"knowledge: {_count(report.decisions, 'decision')} from ADRs, {_count(report.gotchas, 'gotcha')} "
            f"from code notes; {report.written:,} written, {report.removed:,} removed ({report.seconds:.1f} s)")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


__all__ = ["INIT_EMBED_SECONDS", "SYNC_EMBED_SECONDS", "PastMixin", "PastReport", "TaskVectorsReport", "history_line",
           "knowledge_line", "tasks_line"]
