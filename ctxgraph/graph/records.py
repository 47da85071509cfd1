"""Record parsers: models <-> flat property maps, the same for every store.

Both stores keep exactly these properties, so an export of either is the same
graph. Properties whose value is ``None`` are left out (Neo4j cannot hold a
null property; the embedded store mirrors that).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ctxgraph.core.models import ConcurrentTask, FileEntry, KnowledgeItem, ReplayTask, Task, TaskStatus, task_tags
from ctxgraph.outcomes.records import delivered_files
from ctxgraph.signals import TaskSignals, path_terms, terms

LinkType = Literal["CREATED", "MODIFIED", "READ_NEXT"]


class FileLink(BaseModel):
    """An edge from a handoff to a file it created, modified or says to read next."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    rel: LinkType
    path: str
    note: str = ""  # purpose (CREATED/MODIFIED) or reason (READ_NEXT)
    lines: str | None = None


class HandoffRecord(BaseModel):
    """Everything one handoff writes, prepared by the service for a store."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    id: str
    task_id: str
    summary: str
    success: bool
    completed_at: str
    raw: str  # the whole document as canonical JSON, unknown keys included
    content_hash: str
    knowledge: tuple[KnowledgeItem, ...] = ()
    files: tuple[FileEntry, ...] = ()
    links: tuple[FileLink, ...] = ()
    #: (new decision id, the id of an earlier decision it supersedes), at ``completed_at``
    supersedes: tuple[tuple[str, str], ...] = ()

    def props(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "task_id": self.task_id,
            "summary": self.summary,
            "success": self.success,
            "raw": self.raw,
            "content_hash": self.content_hash,
            "created_at": self.completed_at,
            "updated_at": self.completed_at,
        }


def stable_id(prefix: str, text: str) -> str:
    """A deterministic id for content-addressed nodes (knowledge deduplicates by text)."""
    norm = " ".join(text.lower().split())
    return f"{prefix}:{hashlib.sha1(norm.encode('utf-8')).hexdigest()[:16]}"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _compact(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if v is not None}


# -------------------------------------------------------------------------- task


def task_props(task: Task) -> dict[str, Any]:
    sig = task.signals
    found = task_terms(task)
    return _compact(
        {
            "id": task.id,
            "name": task.name,
            "objective": task.objective,
            "acceptance_criteria": list(task.acceptance_criteria),
            "type": task.type,
            "complexity": task.complexity.value,
            "status": task.status.value,
            "blocked_reason": task.blocked_reason,
            "blocked_at": task.blocked_at,
            "requires_context": task.requires_context,
            "outcome_summary": task.outcome_summary,
            "success": task.success,
            "completed_at": task.completed_at,
            "created_at": task.created_at,
            "updated_at": task.updated_at,
            "signal_keywords": list(sig.keywords) if sig else None,
            "signal_domains": list(sig.domains) if sig else None,
            "signal_files": list(sig.files_mentioned) if sig else None,
            "signal_types": list(sig.task_types) if sig else None,
            "terms": found,
            "term_count": len(found),
        }
    )


def finished_task_props(task: Task, record: HandoffRecord) -> dict[str, Any]:
    """A task's properties once its handoff ``record`` is written: what
    ``upsert_tasks`` then ``apply_handoffs`` leave for a task not stored before."""
    props = {k: v for k, v in task_props(task).items() if k not in ("blocked_reason", "blocked_at")}
    props.update(status=(TaskStatus.COMPLETED if record.success else TaskStatus.FAILED).value,
                 success=record.success, outcome_summary=record.summary,
                 completed_at=record.completed_at, updated_at=record.completed_at)
    return props


def signal_tags(signals: TaskSignals) -> list[str]:
    """The tags a task with these signals is linked to (``core.models.task_tags``)."""
    return list(dict.fromkeys([*signals.keywords, *signals.domains]))


def history_rows(tasks: Sequence[Task], records: Sequence[HandoffRecord]) -> list[dict[str, Any]]:
    """The rows of an imported history's bulk write (``import_history``): per
    task, its finished properties (``finished_task_props``, built in one go),
    its tags and its handoff's properties (``records[i]`` is the handoff of
    ``tasks[i]``)."""
    if len(tasks) != len(records) or any(t.id != r.task_id for t, r in zip(tasks, records, strict=True)):
        raise ValueError("import_history: each task needs its own handoff, in the same order")
    done, failed = TaskStatus.COMPLETED.value, TaskStatus.FAILED.value
    rows = []
    for task, record in zip(tasks, records, strict=True):
        found = task_terms(task)
        sig = task.signals
        props: dict[str, Any] = {
            "id": task.id, "name": task.name, "objective": task.objective,
            "acceptance_criteria": list(task.acceptance_criteria), "type": task.type,
            "complexity": task.complexity.value, "status": done if record.success else failed,
            "requires_context": task.requires_context, "outcome_summary": record.summary,
            "success": record.success, "completed_at": record.completed_at, "created_at": task.created_at,
            "updated_at": record.completed_at, "terms": found, "term_count": len(found),
        }
        if sig is not None:
            props.update(signal_keywords=list(sig.keywords), signal_domains=list(sig.domains),
                         signal_files=list(sig.files_mentioned), signal_types=list(sig.task_types))
        if None in props.values():
            props = _compact(props)
        rows.append({"props": props, "tags": task_tags(task), "handoff": record.props()})
    return rows


def concurrent_from_props(props: dict[str, Any], record: str | None) -> ConcurrentTask:
    """A task in progress (its stored properties) with the record of its latest
    delivered context (``None``: none) as concurrent work."""
    name, objective = (props.get("name") or "").strip(), (props.get("objective") or "").strip()
    intent = name or (objective.splitlines()[0].strip() if objective else props["id"])
    return ConcurrentTask(id=props["id"], intent=intent, mentioned=tuple(props.get("signal_files") or ()),
                          delivered=delivered_files(record))


def task_terms(task: Task) -> list[str]:
    """Full-text terms of a task (name, objective, criteria)."""
    return terms(task.text)


def task_text(props: dict[str, Any]) -> str:
    """A stored task's text as ``Task.text`` gives it (what its embedding is of)."""
    parts = [props.get("name") or "", props.get("objective") or "", *(props.get("acceptance_criteria") or ())]
    return "\n".join(p for p in parts if p)


def text_hash(text: str) -> str:
    """The hash a task's vector records of the text it was embedded from."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


#: The stored properties the models take (read once: pydantic's ``model_fields``
#: is a computed class attribute, slow to ask per property).
_TASK_FIELDS = frozenset(k for k in Task.model_fields if not k.startswith("signal"))
_KNOWLEDGE_FIELDS = frozenset(KnowledgeItem.model_fields)


#: The stored properties ``task_from_props`` reads (gather.cypher reads a task
#: as these: tests/unit/test_cypher_files.py).
TASK_READ_PROPERTIES = frozenset(_TASK_FIELDS - {"depends_on"} | {
    "signal_keywords", "signal_domains", "signal_files", "signal_types"})


def task_from_props(props: dict[str, Any], depends_on: list[str] | None = None) -> Task:
    """A task of its stored properties, or of a map projection of them (whose
    absent properties are nulls: dropped, as no property is stored null)."""
    if None in props.values():
        props = {k: v for k, v in props.items() if v is not None}
    signals = None
    if "signal_keywords" in props:
        signals = TaskSignals(
            keywords=tuple(props.get("signal_keywords") or ()),
            domains=tuple(props.get("signal_domains") or ()),
            files_mentioned=tuple(props.get("signal_files") or ()),
            task_types=tuple(props.get("signal_types") or ()),
        )
    fields = {k: v for k, v in props.items() if k in _TASK_FIELDS}
    fields["acceptance_criteria"] = tuple(fields.get("acceptance_criteria") or ())
    return Task(**fields, signals=signals, depends_on=tuple(sorted(depends_on or ())))


# --------------------------------------------------------------------- knowledge


def knowledge_props(item: KnowledgeItem) -> dict[str, Any]:
    data = item.model_dump(mode="json")
    data["tags"] = list(item.tags)
    if item.replaces:
        data["replaces"] = list(item.replaces)
    else:
        del data["replaces"]  # (kept only where there is one: every other node stays as it was)
    return _compact(data)


def knowledge_from_props(props: dict[str, Any]) -> KnowledgeItem:
    fields = {k: v for k, v in props.items() if k in _KNOWLEDGE_FIELDS}
    fields["tags"] = tuple(fields.get("tags") or ())
    fields["replaces"] = tuple(fields.get("replaces") or ())
    return KnowledgeItem(**fields)


def merge_tags(existing: list[str] | None, new: list[str]) -> list[str]:
    """Existing tags first, then the new ones not already there (the Cypher does the same)."""
    have = list(existing or [])
    return have + [t for t in new if t not in have]


# -------------------------------------------------------------------------- file


def file_props(entry: FileEntry, *, in_map: bool = True) -> dict[str, Any]:
    """``in_map``: the file came from a context map (else only from a handoff)."""
    return {"id": entry.path, "path": entry.path, "component": entry.component, "notes": entry.notes,
            "terms": file_terms(entry.path, entry.component, entry.notes), "in_map": in_map}


def file_terms(path: str, component: str, notes: str) -> list[str]:
    """Full-text terms of a context-map entry: its path, component and notes."""
    return list(dict.fromkeys([*path_terms(path), *terms(component), *terms(notes)]))


def file_from_props(props: dict[str, Any], lines: str | None = None) -> FileEntry:
    """The context-map entry of a File node (``in_map`` and ``terms`` stay in the store)."""
    return FileEntry(
        path=props["path"],
        component=props.get("component") or "",
        notes=props.get("notes") or "",
        lines=lines,
    )


# ------------------------------------------------------------------------ replay


def replay_task(props: dict[str, Any], files: Any, vector: Any) -> ReplayTask:
    """A finished task from its stored properties (``records.task_props``)."""
    return ReplayTask(
        id=props["id"],
        completed_at=props.get("completed_at") or "",
        terms=tuple(props.get("terms") or ()),
        files=tuple(sorted(set(files or ()))),
        signals=TaskSignals(
            keywords=tuple(props.get("signal_keywords") or ()),
            domains=tuple(props.get("signal_domains") or ()),
            files_mentioned=tuple(props.get("signal_files") or ()),
            task_types=tuple(props.get("signal_types") or ()),
        ),
        vector=tuple(float(x) for x in vector) if vector is not None and len(vector) else None,
    )
