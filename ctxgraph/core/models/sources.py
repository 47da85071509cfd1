"""What an import of the project's own files (its ADRs, its code's notes:
:mod:`ctxgraph.sources`) keeps between runs, and what one run writes.

``ImportedFile`` is what the last run saw of a file: its stat (modification
time in ns, size; mtime 0 when it was too fresh to trust), the sha256 of its
bytes, how it was read (``kind``: ``adr`` or ``notes``) and the ids of the
knowledge items it gave. A run reads only the files whose stat or kind
differ, and writes an ``ImportBatch``: the items made from what it read, the
ids of those no longer there, their anchors, the supersedes links among them,
and the new state of the files read (``files``) and of those gone (``gone``).
"""

from __future__ import annotations

from pydantic import BaseModel

from ctxgraph.core.models.anchors import Anchor
from ctxgraph.core.models.base import VALUE
from ctxgraph.core.models.knowledge import KnowledgeItem


class ImportedFile(BaseModel):
    model_config = VALUE

    path: str
    kind: str
    mtime_ns: int
    size: int
    sha256: str
    items: tuple[str, ...] = ()


class ImportBatch(BaseModel):
    model_config = VALUE

    #: knowledge written whole: its properties and tags replaced, its ``created_at`` as given
    items: tuple[KnowledgeItem, ...] = ()
    #: ids of knowledge deleted (with its relationships and anchors)
    removed: tuple[str, ...] = ()
    anchors: tuple[Anchor, ...] = ()
    #: (newer id, older id, at): SUPERSEDES links, written after the items
    supersedes: tuple[tuple[str, str, str], ...] = ()
    files: tuple[ImportedFile, ...] = ()
    #: paths whose state is dropped
    gone: tuple[str, ...] = ()


__all__ = ["ImportBatch", "ImportedFile"]
