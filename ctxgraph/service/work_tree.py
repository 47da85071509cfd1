"""The gather of a context's work-tree files, before compute (issue 43): the
candidate files' states and the anchors on the missing ones, as plain data
(:class:`ctxgraph.compute.freshness.FileStates`), so that compute does no
IO. Its stats are the candidate files' (docs/freshness.md)."""

from __future__ import annotations

import logging
from pathlib import Path

from ctxgraph.compute.freshness import FileStates
from ctxgraph.core.models import Candidates
from ctxgraph.errors import StoreUnavailableError
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service.anchors import check, is_file

log = logging.getLogger(__name__)

#: A root holding fewer than one in this many of a context's candidate files is not the project's.
HELD_SHARE = 10


def candidate_files(candidates: Candidates) -> set[str]:
    """The candidate files a context may show: the context map's, the
    history's, the dependencies' (to read, created)."""
    paths = {e.path for e in candidates.context_map}
    if candidates.history is not None:
        paths |= {f.entry.path for f in candidates.history.files}
    return paths | {f.file for d in candidates.dependencies for f in (*d.files_to_read, *d.files_created)}


def file_states(store: KnowledgeStore, root: Path, candidates: Candidates) -> FileStates:
    """The candidate files against the work tree under ``root``: a ``stat``
    each. When some are not there, they are gone only when the root holds a
    tenth of the candidate files at least (:data:`HELD_SHARE`; a tree sharing
    a few common names with the project, README.md or setup.py among its
    ~180, is another project's, and nothing is left out then), and the
    anchors on them are read (they may say where a file went) and checked,
    in one read."""
    top = str(root)
    paths = candidate_files(candidates)
    missing = sorted(p for p in paths if not is_file(top, p))
    if not missing:
        return FileStates()
    held = len(paths) - len(missing)
    gone = frozenset(missing) if held and held * HELD_SHARE >= len(paths) else frozenset()
    try:
        found = store.read_anchors([], missing)
    except StoreUnavailableError as exc:
        log.warning("anchors of the files gone not read: %s", exc)
        found = []
    return FileStates(frozenset(missing), gone, tuple(check(root, found).anchors) if found else ())


__all__ = ["HELD_SHARE", "candidate_files", "file_states"]
