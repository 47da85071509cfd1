"""Fold a batch of handoff records into one write, the same for every store.

Writing handoffs one transaction each is slow (benchmarks/README.md, finding
7); writing a batch as one statement per kind of row is fast but must leave
exactly the graph that applying the records one after the other leaves. The
records of a batch interact only through shared nodes (the same handoff twice,
the same knowledge item or file named by several handoffs), so this module
resolves those interactions in Python, in record order, and hands the stores
rows in which every node appears once:

- a record is written unless its handoff already has the same content (the
  stored hash, or the hash of the last record of the same handoff before it);
- only the last written version of a handoff keeps its links (a new version
  drops the old one's), and its task takes that version's outcome;
- a knowledge item named several times keeps the last version's properties,
  the first version's ``created_at`` and the tags of all versions, in order;
- a file named several times is created from its first entry, and its notes
  are filled from the first entry that has any.

The stores then merge these rows with what they hold exactly as the single
write did (existing tags first, existing ``created_at`` kept, notes filled only
when empty).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxgraph.core.models import FileEntry, KnowledgeItem
from ctxgraph.graph.records import FileLink, HandoffRecord, file_props, merge_tags

#: Handoffs written per store transaction by ``ContextService.ingest_handoffs``
#: (``ctxgraph ingest handoff --batch-size``): large enough that a commit's cost
#: is spread thin, small enough that a batch's statements stay a few MB.
HANDOFF_BATCH = 500


@dataclass(frozen=True)
class FileFill:
    """A file a batch names: ``entry`` creates it when missing; ``notes`` fills
    its notes when they are empty (the first non-empty note of the batch)."""

    entry: FileEntry
    notes: str

    def props(self) -> dict[str, Any]:
        """The node a missing file becomes: the first entry's properties (its
        terms too) with the batch's notes, as if later entries had filled them."""
        return {**file_props(self.entry, in_map=False), "notes": self.notes}


@dataclass(frozen=True)
class HandoffBatch:
    """What a batch writes, each node once (see the module docstring)."""

    #: Per record, in order: False when the same content was already there.
    written: tuple[bool, ...]
    #: The last written version of each handoff, in first-write order.
    handoffs: tuple[HandoffRecord, ...]
    #: Handoffs stored before the batch and written by it: their links go first.
    replaced: tuple[str, ...]
    knowledge: tuple[KnowledgeItem, ...]
    files: tuple[FileFill, ...]

    def discovered(self) -> list[tuple[str, KnowledgeItem]]:
        """(handoff id, knowledge item) for the DISCOVERED links of the kept versions."""
        return [(h.id, k) for h in self.handoffs for k in h.knowledge]

    def links(self) -> list[tuple[str, FileLink]]:
        """(handoff id, file link) for the file links of the kept versions."""
        return [(h.id, link) for h in self.handoffs for link in h.links]


def link_props(link: FileLink) -> dict[str, str]:
    """The properties of a handoff's file link (the same in both stores)."""
    props = {"reason" if link.rel == "READ_NEXT" else "purpose": link.note}
    if link.lines:
        props["lines"] = link.lines
    return props


def plan_handoffs(records: Sequence[HandoffRecord], stored: Mapping[str, str | None]) -> HandoffBatch:
    """The batch write equivalent to applying ``records`` in order, given the
    content hash ``stored`` per handoff id (None or absent: no such handoff)."""
    current = dict(stored)
    written: list[bool] = []
    kept: dict[str, HandoffRecord] = {}
    for record in records:
        fresh = current.get(record.id) != record.content_hash
        written.append(fresh)
        if fresh:
            current[record.id] = record.content_hash
            kept[record.id] = record
    applied = [r for r, w in zip(records, written, strict=True) if w]
    replaced = tuple(h for h in kept if stored.get(h) is not None)
    return HandoffBatch(
        written=tuple(written),
        handoffs=tuple(kept.values()),
        replaced=replaced,
        knowledge=tuple(_fold_knowledge(applied)),
        files=tuple(_fold_files(applied)),
    )


def _fold_knowledge(records: Sequence[HandoffRecord]) -> list[KnowledgeItem]:
    """One item per id: the last version's properties, the first version's
    ``created_at``, every version's tags merged in order."""
    first: dict[str, KnowledgeItem] = {}
    folded: dict[str, KnowledgeItem] = {}
    for item in (k for r in records for k in r.knowledge):
        earliest = first.setdefault(item.id, item)
        before = folded.get(item.id)
        tags = merge_tags(list(before.tags), list(item.tags)) if before else list(item.tags)
        folded[item.id] = item.model_copy(update={"tags": tuple(tags), "created_at": earliest.created_at})
    return list(folded.values())


def _fold_files(records: Sequence[HandoffRecord]) -> list[FileFill]:
    """One fill per path: created from its first entry, notes from the first
    entry that has some."""
    entries: dict[str, FileEntry] = {}
    notes: dict[str, str] = {}
    for entry in (f for r in records for f in r.files):
        entries.setdefault(entry.path, entry)
        if entry.notes and not notes.get(entry.path):
            notes[entry.path] = entry.notes
    return [FileFill(entry=e, notes=notes.get(p, "")) for p, e in entries.items()]
