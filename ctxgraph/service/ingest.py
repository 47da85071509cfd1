"""Handoffs in: a finished task's structured handoff validated, prepared (its
knowledge items through the signal extractor) and written whole; the
documents the CLI reads (tasks files, context maps). The finished tasks'
vectors are made after the write (:mod:`.vectors`, ``embed_tasks``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ctxgraph.core.documents import (
    MAX_DOCUMENT_BYTES,
    decode,
    load_context_map,
    load_handoff,
    load_tasks,
    parse_structured,
    validate,
)
from ctxgraph.core.models import FileEntry, HandoffDoc, KnowledgeItem, Task, TaskDoc, infer_component, utcnow
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.errors import InvalidArgumentError, UnknownTaskError
from ctxgraph.graph.handoff_batch import HANDOFF_BATCH
from ctxgraph.graph.records import FileLink, HandoffRecord, canonical_json, stable_id
from ctxgraph.service.decisions import replaced_summaries, resolve_supersedes
from ctxgraph.service.documents import expand_paths, read_document
from ctxgraph.service.feedback import FeedbackMixin
from ctxgraph.service.freshness import FreshnessMixin
from ctxgraph.service.vectors import TASK_WRITE_BATCH, VectorsMixin
from ctxgraph.signals import TaskSignals

log = logging.getLogger(__name__)

class IngestResult(BaseModel):
    """What one handoff did: ``written`` is False when it was already there."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    source: str
    task_id: str
    written: bool
    knowledge: int
    files: int


class IngestMixin(VectorsMixin, FeedbackMixin, FreshnessMixin):
    """Handoff ingestion and task embedding."""

    # -- documents (parsed and validated, no IO on the store) ----------------------

    @staticmethod
    def read_task(data: bytes, source: str) -> Task:
        """One task from a YAML/JSON document (as an entry of a tasks file), validated;
        ``source`` names it in messages."""
        return validate(TaskDoc, parse_structured(decode(data, source), source), source).to_task()

    @staticmethod
    def read_tasks(data: bytes, source: str) -> list[TaskDoc]:
        """The tasks of a tasks file (YAML ``tasks:`` list, or JSON lines), all validated."""
        return load_tasks(data, source).tasks

    @staticmethod
    def read_context_map(data: bytes, source: str) -> list[FileEntry]:
        """The entries of a context map (YAML ``files:`` list, or JSON lines with path
        or location, component, notes), validated."""
        return load_context_map(data, source)

    @staticmethod
    def document_files(paths: Iterable[Path]) -> list[Path]:
        """``paths`` with each folder replaced by the YAML and JSON documents in it."""
        return expand_paths(paths)

    # -- handoffs ----------------------------------------------------------------

    def prepare_handoffs(
        self, docs: Sequence[tuple[HandoffDoc, Mapping[str, Any]]],
        resolved: Mapping[str, tuple[str, str]] | None = None,
    ) -> list[HandoffRecord]:
        """Validated handoffs as the records a store writes (no IO): the
        knowledge texts of all of them go through the signal extractor in one
        ``extract_many`` call (one ``nlp.pipe``), not a few texts per handoff.
        ``resolved``: their decisions' ``supersedes`` entries as
        ``service.decisions.resolve_supersedes`` gives them (entries not in it are left out)."""
        items = [_handoff_items(doc) for doc, _ in docs]
        extracted = iter(self.extractor.extract_many([text for found in items for _, text, _, _ in found]))
        return [
            self._handoff_record(doc, raw, found, [next(extracted) for _ in found], resolved or {})
            for (doc, raw), found in zip(docs, items, strict=True)
        ]

    def _handoff_record(
        self, doc: HandoffDoc, raw: Mapping[str, Any], items: Sequence[_Item], extracted: Sequence[TaskSignals],
        resolved: Mapping[str, tuple[str, str]],
    ) -> HandoffRecord:
        """The record of one handoff, given its knowledge items and their signals."""
        completed_at = doc.completed_at or utcnow()
        knowledge: dict[str, KnowledgeItem] = {}
        supersedes: dict[tuple[str, str], None] = {}
        for (kind, text, extra, applies_to), sig in zip(items, extracted, strict=True):
            tags = [self.extractor.normalize_tag(t) for t in applies_to]
            tags = list(dict.fromkeys(t for t in [*tags, *sig.keywords, *sig.domains] if t))
            item_id = stable_id(kind, text)
            if "replaces" in extra:  # a decision's supersedes entries: the ids and texts they name
                refs = extra["replaces"]
                supersedes.update(((item_id, resolved[r][0]), None) for r in refs if r in resolved)
                extra = {**extra, "replaces": replaced_summaries(refs, resolved)}
            item = KnowledgeItem(
                id=item_id, kind=kind, summary=text, tags=tuple(tags),  # type: ignore[arg-type]
                created_at=completed_at, updated_at=completed_at, **extra,
            )
            knowledge[item_id] = item.model_copy(update={"token_estimate": estimate_tokens(text)})

        files: dict[str, FileEntry] = {}
        links: dict[tuple[str, str], FileLink] = {}
        for rel, changes in (("CREATED", doc.files_created), ("MODIFIED", doc.files_modified)):
            for change in changes:
                note = change.purpose or change.description or ""
                files.setdefault(change.path, FileEntry(
                    path=change.path, component=infer_component(change.path), notes=note))
                links[(rel, change.path)] = FileLink(rel=rel, path=change.path, note=note, lines=change.lines)  # type: ignore[arg-type]
        for read in doc.dependencies_for_next:
            files.setdefault(read.file, FileEntry(path=read.file, component=infer_component(read.file)))
            links[("READ_NEXT", read.file)] = FileLink(rel="READ_NEXT", path=read.file, note=read.reason)

        raw_json = canonical_json(dict(raw))
        return HandoffRecord(
            id=f"handoff:{doc.task_id}",
            task_id=doc.task_id,
            summary=doc.summary,
            success=doc.success,
            completed_at=completed_at,
            raw=raw_json,
            content_hash=stable_id("sha1", raw_json).split(":", 1)[1],
            knowledge=tuple(knowledge.values()),
            files=tuple(files.values()),
            links=tuple(links.values()),
            supersedes=tuple(supersedes),
        )

    def ingest_handoff(
        self, handoff: HandoffDoc | Mapping[str, Any] | bytes | str | os.PathLike[str], *,
        source: str | None = None,
    ) -> IngestResult:
        """Validate and write one handoff whole; the same content twice is a no-op.

        ``handoff`` is a file (a ``Path``, or a ``str`` of one line that does
        not start with ``{``: its path), the document's text (any other
        ``str``: YAML or JSON), its bytes, a mapping or a ``HandoffDoc``.
        ``source`` names it in messages (default: the path, else
        ``<handoff>``)."""
        if isinstance(handoff, os.PathLike) or (isinstance(handoff, str) and _looks_like_path(handoff)):
            path = Path(handoff)
            return self.ingest_handoffs([(source or str(path), read_document(path))])[0]
        if isinstance(handoff, str):
            handoff = handoff.encode("utf-8")
        return self.ingest_handoffs([(source or "<handoff>", handoff)])[0]

    def ingest_handoffs(
        self,
        handoffs: Sequence[tuple[str, HandoffDoc | Mapping[str, Any] | bytes]],
        *,
        progress: Callable[[int], None] | None = None,
        batch_size: int = HANDOFF_BATCH,
    ) -> list[IngestResult]:
        """Validate and prepare every handoff first (nothing is written if one is
        bad), then write them in batches of ``batch_size``, one transaction each
        (``progress`` is called with the size of each batch once it committed).
        A batch leaves the graph that writing its handoffs one by one leaves."""
        if batch_size < 1:
            raise InvalidArgumentError(f"batch_size: {batch_size!r} is not a whole number of at least 1")
        docs = [(source, *_as_handoff(handoff, source)) for source, handoff in handoffs]
        wanted = sorted({doc.task_id for _, doc, _ in docs})
        found = {t.id for t in self.store.get_tasks(wanted)}
        for source, doc, _ in docs:
            if doc.task_id not in found:
                raise UnknownTaskError(doc.task_id, source=source)
        resolved = resolve_supersedes(self.store, [(source, doc) for source, doc, _ in docs])
        records = [
            record
            for start in range(0, len(docs), batch_size)
            for record in self.prepare_handoffs([(doc, raw) for _, doc, raw in docs[start:start + batch_size]],
                                                resolved)
        ]
        results: list[IngestResult] = []
        for start in range(0, len(records), batch_size):
            batch = records[start:start + batch_size]
            written = self.store.apply_handoffs(batch)
            # the files they name anchored as they are now (a handoff already there keeps its anchors)
            self.anchor_handoffs([(record, doc.commit) for (_, doc, _), record, w
                                  in zip(docs[start:start + batch_size], batch, written, strict=True) if w])
            results += [
                IngestResult(source=source, task_id=record.task_id, written=w,
                             knowledge=len(record.knowledge), files=len(record.files))
                for (source, _, _), record, w in zip(docs[start:start + batch_size], batch, written, strict=True)
            ]
            if progress:
                progress(len(batch))
        if len(records) > batch_size:  # a decision superseded by an earlier batch exists now
            pairs = [(n, o, r.completed_at) for r, res in zip(records, results, strict=True) if res.written
                     for n, o in r.supersedes]
            if pairs:
                self.store.upsert_knowledge([], supersedes=pairs)
        self._score_outcomes(records)
        return results


#: A knowledge item a handoff names: (kind, text, extra fields, applies_to).
_Item = tuple[str, str, dict[str, Any], list[str]]


def _handoff_items(doc: HandoffDoc) -> list[_Item]:
    """The knowledge items a handoff names, in document order."""
    items: list[_Item] = []
    for p in doc.patterns_discovered:
        items.append(("pattern", p.pattern, {"location": p.location}, p.applies_to))
    for g in doc.gotchas:
        items.append(("gotcha", g.issue, {"severity": g.severity}, g.applies_to))
    for d in doc.decisions:
        extra: dict[str, Any] = {"rationale": d.rationale, "status": "active"}
        if d.supersedes:
            extra["replaces"] = tuple(d.supersedes)  # the entries; their texts once resolved
        items.append(("decision", d.decision, extra, d.applies_to))
    for q in doc.open_questions:
        items.append(("open_question", q.question, {"context": q.context,
                      "recommendation": q.recommendation, "blocking": q.blocking}, q.applies_to))
    return items


def _as_handoff(
    value: HandoffDoc | Mapping[str, Any] | bytes, source: str
) -> tuple[HandoffDoc, Mapping[str, Any]]:
    if isinstance(value, HandoffDoc):
        return value, value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, bytes):
        return load_handoff(value, source)
    if isinstance(value, str):
        return load_handoff(value.encode("utf-8"), source)
    if not isinstance(value, Mapping):
        raise InvalidArgumentError(f"{source}: a handoff is a HandoffDoc, a mapping, YAML/JSON text or bytes, "
                                   f"not {type(value).__name__}")
    raw = dict(value)
    return validate(HandoffDoc, raw, source), raw


def _looks_like_path(text: str) -> bool:
    """A one-line ``str`` not starting with ``{`` is a file name, not a document."""
    return bool(text.strip()) and "\n" not in text and not text.lstrip().startswith("{")


__all__ = ["HANDOFF_BATCH", "MAX_DOCUMENT_BYTES", "TASK_WRITE_BATCH", "IngestMixin", "IngestResult"]
