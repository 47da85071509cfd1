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
- a knowledge item named several times is merged by :func:`merge_knowledge`;
- a file named several times is merged by :func:`merge_file`.

The stores then merge these rows with what they hold by the same two
functions (read and written in the batch's transaction, the nodes locked
first). Both merges are commutative, associative and idempotent, so the graph
does not depend on the order in which handoffs arrive, nor on how they are
batched or spread over concurrent writers (``docs/parity.md``):

- knowledge: ``created_at`` the earliest of every version, ``updated_at`` the
  latest, tags the sorted union, every other property from the latest version
  (by ``updated_at``, then by the larger ``content_hash`` of its properties);
- a file named by handoffs: created from its path (component inferred) and,
  when empty or noted by a handoff, its notes from the earliest note
  (``noted_at``: the handoff's ``completed_at`` and id; then the smaller
  note); a file known only from handoffs takes the terms of those notes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxgraph.core.models import FileEntry, KnowledgeItem
from ctxgraph.graph.records import FileLink, HandoffRecord, canonical_json, file_props, file_terms, knowledge_props

#: Handoffs written per store transaction by ``ContextService.ingest_handoffs``
#: (``ctxgraph ingest handoff --batch-size``): large enough that a commit's cost
#: is spread thin, small enough that a batch's statements stay a few MB.
HANDOFF_BATCH = 500


@dataclass(frozen=True)
class FileFill:
    """A file a batch names: ``entry`` (path and component) creates it when
    missing; ``notes`` is the batch's earliest non-empty note ("" when none),
    ``noted_at`` its key (:func:`note_key`)."""

    entry: FileEntry
    notes: str
    noted_at: str = ""

    def props(self) -> dict[str, Any]:
        """The node a missing file becomes."""
        props = file_props(self.entry.model_copy(update={"notes": self.notes}), in_map=False)
        if self.notes:
            props["noted_at"] = self.noted_at
        return props


def note_key(record: HandoffRecord) -> str:
    """What orders the notes of a file named by several handoffs: the earliest
    completion, then the smaller handoff id."""
    return f"{record.completed_at} {record.id}"


def merge_file(old: dict[str, Any] | None, fill: FileFill) -> dict[str, Any] | None:
    """The properties of a file once ``fill`` is merged into ``old`` (None:
    missing), or None when nothing changes. Its notes become the fill's when
    they are empty, or when they came from a handoff (``noted_at``) with a later
    key (then the larger note); a file known only from handoffs (``in_map``
    false) then takes the terms of its new notes. A file without a component
    (the memory's index creates files so) takes the fill's. The derived properties a
    store keeps on the node stay as they were."""
    if old is None or "id" not in old:  # (a node just locked into being has its key only)
        return {**(old or {}), **fill.props()}
    new = dict(old)
    if fill.entry.component and not old.get("component"):  # (a file the memory's index created has none)
        new["component"] = fill.entry.component
    have = old.get("notes") or ""
    if fill.notes and not (have and ("noted_at" not in old or (fill.noted_at, fill.notes) >= (old["noted_at"], have))):
        new.update(notes=fill.notes, noted_at=fill.noted_at)
    if new == old:
        return None
    if not old.get("in_map", True):
        new["terms"] = file_terms(new["path"], new.get("component") or "", new.get("notes") or "")
    return new


def knowledge_version(item: KnowledgeItem) -> dict[str, Any]:
    """A knowledge item's properties as one version of the node, with the hash
    of what it says (its properties but the tags and times) and sorted tags."""
    props = knowledge_props(item)
    said = {k: v for k, v in props.items() if k not in _MERGED}
    props["content_hash"] = hashlib.sha1(canonical_json(said).encode("utf-8")).hexdigest()[:16]
    props["tags"] = sorted(set(props.get("tags") or ()))
    return props


_MERGED = ("tags", "created_at", "updated_at", "content_hash", "replaces", "valid_from", "valid_until")


def merge_knowledge(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Two versions of a knowledge node (:func:`knowledge_version`) merged:
    the properties of the later one (``updated_at``, then ``content_hash``),
    the earliest ``created_at``, the latest ``updated_at``, the sorted union of
    the tags and of ``replaces``; superseded stays superseded (a decision
    restated after it was superseded is not back in force), with the earliest
    ``valid_from`` and ``valid_until`` (docs/decisions.md). Commutative,
    associative, idempotent."""
    if old is None or "summary" not in old:
        return dict(new)

    def rank(props: dict[str, Any]) -> tuple[str, str]:
        return str(props.get("updated_at") or ""), str(props.get("content_hash") or "")

    out = dict(new if rank(new) > rank(old) else old)
    out["tags"] = sorted(set(old.get("tags") or ()) | set(new.get("tags") or ()))
    times = [t for t in (old.get("created_at"), new.get("created_at")) if t]
    if times:
        out["created_at"] = min(times)
    times = [t for t in (old.get("updated_at"), new.get("updated_at")) if t]
    if times:
        out["updated_at"] = max(times)
    replaces = sorted(set(old.get("replaces") or ()) | set(new.get("replaces") or ()))
    out.pop("replaces", None)
    if replaces:
        out["replaces"] = replaces
    if "superseded" in (old.get("status"), new.get("status")):
        out["status"] = "superseded"
    for name in ("valid_from", "valid_until"):
        times = [t for t in (old.get(name), new.get(name)) if t]
        out.pop(name, None)
        if times:
            out[name] = min(times)
    return out


@dataclass(frozen=True)
class HandoffBatch:
    """What a batch writes, each node once (see the module docstring)."""

    #: Per record, in order: False when the same content was already there.
    written: tuple[bool, ...]
    #: The last written version of each handoff, in first-write order.
    handoffs: tuple[HandoffRecord, ...]
    #: Handoffs stored before the batch and written by it: their links go first.
    replaced: tuple[str, ...]
    #: Per knowledge id: (label, the batch's versions merged: :func:`merge_knowledge`).
    knowledge: tuple[tuple[str, dict[str, Any]], ...]
    files: tuple[FileFill, ...]

    def discovered(self) -> list[tuple[str, KnowledgeItem]]:
        """(handoff id, knowledge item) for the DISCOVERED links of the kept versions."""
        return [(h.id, k) for h in self.handoffs for k in h.knowledge]

    def merged_knowledge(self, stored: Mapping[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
        """(label, properties) of each knowledge node once the batch is merged
        into the ``stored`` nodes (by id)."""
        return [(label, merge_knowledge(stored.get(props["id"]), props)) for label, props in self.knowledge]

    def merged_files(self, stored: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """The properties of each file the batch changes (created, or its notes
        filled), given the ``stored`` files by path."""
        return self.merged_files_of(self.files, stored)

    @staticmethod
    def merged_files_of(fills: Sequence[FileFill], stored: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """:meth:`merged_files` of ``fills``."""
        out = []
        for fill in fills:
            props = merge_file(stored.get(fill.entry.path), fill)
            if props is not None:
                out.append(props)
        return out

    def supersedes(self) -> list[tuple[str, str, str]]:
        """(new id, old id, at) of the SUPERSEDES links of the kept versions: ``at``
        is the time of the handoff naming them (docs/decisions.md)."""
        return [(new, old, h.completed_at) for h in self.handoffs for new, old in h.supersedes]

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


def _fold_knowledge(records: Sequence[HandoffRecord]) -> list[tuple[str, dict[str, Any]]]:
    """One merged version per knowledge id (:func:`merge_knowledge`), in first-seen order."""
    folded: dict[str, tuple[str, dict[str, Any]]] = {}
    for item in (k for r in records for k in r.knowledge):
        before = folded.get(item.id)
        folded[item.id] = (item.label, merge_knowledge(before[1] if before else None, knowledge_version(item)))
    return list(folded.values())


def _fold_files(records: Sequence[HandoffRecord]) -> list[FileFill]:
    """One fill per path (first-seen order): its earliest non-empty note."""
    entries: dict[str, FileEntry] = {}
    notes: dict[str, tuple[str, str]] = {}
    for record in records:
        key = note_key(record)
        for entry in record.files:
            entries.setdefault(entry.path, entry)
            if entry.notes and (key, entry.notes) < notes.get(entry.path, ("\uffff", "")):
                notes[entry.path] = (key, entry.notes)
    return [FileFill(entry=e, notes=notes.get(p, ("", ""))[1], noted_at=notes.get(p, ("", ""))[0])
            for p, e in entries.items()]
