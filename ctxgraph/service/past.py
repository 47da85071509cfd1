"""The project's past, read at ``init`` and kept current (issue 44): its git
history as finished tasks (:mod:`ctxgraph.service.history`), its ADRs and the
notes in its code as decisions and gotchas
(:mod:`ctxgraph.service.project_notes`), in one call that ``init``, ``sync``,
the post-commit hook (through ``sync``) and the MCP server's keeper share.

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

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgraph.service.history import SOURCE_ID, HistoryMixin, HistoryOptions, HistoryReport
from ctxgraph.service.project_notes import SOURCE as KNOWLEDGE_SOURCE
from ctxgraph.service.project_notes import KnowledgeImportReport, ProjectKnowledgeMixin
from ctxgraph.sources.git_log import GitError, work_tree


@dataclass
class PastReport:
    """What :meth:`PastMixin.import_past` did: each import's report (None:
    not run) and why a part was skipped."""

    history: HistoryReport | None = None
    knowledge: KnowledgeImportReport | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"history": self.history.as_dict() if self.history else None,
                "knowledge": self.knowledge.as_dict() if self.knowledge else None, "notes": list(self.notes)}


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
                    progress: Callable[[HistoryReport], None] | None = None) -> PastReport:
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
    if report.retired or report.revived:
        parts.append(f"{report.retired:,} retired, {report.revived:,} back")
    if report.partial:
        parts.append(f"stopped early ({report.stopped}): run it again to go on")
    return f"history: {', '.join(parts)} ({report.seconds:.1f} s)"


def knowledge_line(report: KnowledgeImportReport) -> str:
    """One line of what an import of ADRs and code notes did."""
    return (f"knowledge: {_count(report.decisions, 'decision')} from ADRs, {_count(report.gotchas, 'gotcha')} "
            f"from code notes; {report.written:,} written, {report.removed:,} removed ({report.seconds:.1f} s)")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


__all__ = ["PastMixin", "PastReport", "history_line", "knowledge_line"]
