"""Knowledge that knows when it is stale (issue 32; docs/freshness.md): code
anchors made at ingestion, ``sync`` (every anchor against the work tree,
the result stored) and the just-in-time check of the anchors a context is
about to use (nothing stored). The IO is :mod:`ctxgraph.service.anchors`',
what a context makes of anchors :mod:`ctxgraph.compute.freshness`'.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ctxgraph.compute.freshness import FileStates
from ctxgraph.core.models import Candidates, split_location, utcnow
from ctxgraph.errors import CtxgraphError
from ctxgraph.graph.records import HandoffRecord
from ctxgraph.service.anchors import Wanted, check, git_head, make_anchors
from ctxgraph.service.base import ServiceBase
from ctxgraph.service.work_tree import file_states


class NoRootError(CtxgraphError):
    """No project root is known, so there is no work tree to check."""


class SyncReport(BaseModel):
    """What ``ctxgraph sync`` found: anchors checked, by what the work tree
    says of them now (``unchanged``, ``changed``, ``deleted``), those this
    run found renamed (``renamed``: their path follows) and newly changed or
    deleted, files hashed (the others' stat was as last seen), anchors
    written, and the seconds it took."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    root: str
    anchors: int
    unchanged: int
    changed: int
    deleted: int
    renamed: int
    newly_changed: int
    newly_deleted: int
    hashed: int
    written: int
    seconds: float


class FreshnessMixin(ServiceBase):
    """Code anchors: made at ingestion, checked by ``sync`` and by each context."""

    #: Check the anchors of a context's candidates just in time (on by default).
    check_anchors = True
    #: Check the files of a context's memory hits just in time (on by default;
    #: :func:`ctxgraph.memory.recall.check`).
    check_memory = True

    def anchor_handoffs(self, records: Sequence[tuple[HandoffRecord, str | None]]) -> int:
        """Anchor the files the handoffs name (their links, their patterns'
        locations), given each record with its handoff's ``commit``; the
        number of anchors written. Nothing without a root or for a file not in
        the work tree (a link out of the root included: it is not read).
        Each file is read once, whatever the number of anchors on it, and a
        file over the read limit not at all (:mod:`ctxgraph.service.anchor_files`)."""
        root = self.root.path if self.root is not None else None
        if root is None or not records:
            return 0
        head: list[str | None] = []
        wanted: list[Wanted] = []
        for record, commit in records:
            if commit is None:
                if not head:
                    head.append(git_head(root))
                commit = head[0]
            at = record.completed_at or utcnow()
            named = [(record.task_id, link.path, link.lines) for link in record.links]
            for item in record.knowledge:
                if item.location:
                    path, lines = split_location(item.location)
                    named.append((item.id, path, lines))
            wanted += [(owner, record.task_id, path, lines, commit, at) for owner, path, lines in named]
        # each file read once, however many anchors it gets; nothing outside the root
        anchors = {a.id: a for a in make_anchors(root, wanted)}
        self.store.write_anchors(list(anchors.values()))
        return len(anchors)

    def sync(self, *, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Check every anchor against the work tree and store what changed
        (incremental: a file whose stat is the one last seen is not read).
        ``progress(done, total)`` is called as anchors are checked."""
        if self.root is None:
            raise NoRootError("no project root is known to check the anchors against: pass --root, "
                              "or run it in a git work tree or beside a ctxgraph.toml")
        started = time.perf_counter()
        anchors = self.store.read_anchors()
        total = len(anchors)
        result = check(self.root.path, anchors, utcnow(), head=git_head(self.root.path) if anchors else None,
                       progress=(lambda n: progress(n, total)) if progress else None)
        self.store.write_anchors(result.updated)
        return SyncReport(
            root=str(self.root.path), anchors=total, unchanged=result.unchanged,
            changed=sum(1 for a in result.anchors if a.status == "changed"),
            deleted=sum(1 for a in result.anchors if a.status == "deleted"),
            renamed=result.renamed, newly_changed=result.changed, newly_deleted=result.deleted,
            hashed=result.hashed, written=len(result.updated),
            seconds=round(time.perf_counter() - started, 4))

    def _checks_anchors(self) -> bool:
        """Whether a context checks its candidates' anchors just in time: with
        a root, unless ``check_anchors`` is off."""
        return self.root is not None and self.check_anchors

    def _fresh(self, candidates: Candidates) -> tuple[Candidates, FileStates | None]:
        """The gather's work-tree part, before compute (which does no IO):
        ``candidates`` with the anchors of what they may show checked now
        against the work tree (stat only for a file as last seen; nothing is
        stored: ``sync`` does) — the anchors of the dependencies' handoffs and
        of the knowledge with a location, which the gather read
        (``GatherQuery.anchors``, asked by :meth:`gather` when
        :meth:`_checks_anchors`), so a context pays no read of its own for
        them; and the candidate files' states
        (:func:`ctxgraph.service.work_tree.file_states`). Unchanged, and no
        states, without a root."""
        if self.root is None or not self.check_anchors:
            return candidates, None
        root = Path(self.root.path)
        files = file_states(self.store, root, candidates)
        if not candidates.anchors:
            return candidates, files
        checked = check(root, candidates.anchors).anchors
        return candidates.model_copy(update={"anchors": tuple(checked)}), files


__all__ = ["FreshnessMixin", "NoRootError", "SyncReport"]
