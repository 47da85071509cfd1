"""An imported history on the embedded store (``ctxgraph.service.history``):
the bulk write of new finished tasks with their handoffs, the statuses of
many tasks at once, the imported tasks' state, and the record of where an
import stopped (in the ``meta`` table). Each write is one transaction; a
bulk write runs every row kind as one statement over a JSON array of its rows
(``sql_imports``: SQLite reads them with ``json_each``), the row triggers'
work done once for the write. The graph a bulk write leaves is the one
``upsert_tasks`` followed by ``apply_handoffs`` leaves."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from ctxgraph.core.models import Task, TaskStatus
from ctxgraph.graph.handoff_batch import FileFill, HandoffBatch, link_props, plan_handoffs
from ctxgraph.graph.local import nodes, sql, sql_imports
from ctxgraph.graph.local.connection import Connection
from ctxgraph.graph.records import HandoffRecord, history_rows, signal_tags
from ctxgraph.signals import TaskSignals

_SOURCE_KEY = "history_source:"
_EMPTY = "{}"


class _Counted:
    """What a bulk write makes that the kept counts count: the nodes it
    created per label, the tags it linked to."""

    def __init__(self) -> None:
        self.labels: dict[str, int] = {}
        self.tags: set[str] = set()

    def add(self, label: str, created: int) -> None:
        self.labels[label] = self.labels.get(label, 0) + created


@contextlib.contextmanager
def _bulk(cur: sqlite3.Cursor) -> Iterator[_Counted]:
    """Inside a write transaction: the row triggers of ``sql_imports.BULK_ROW_TRIGGERS``
    the store has dropped for the write and made again from their own text
    after it, their work done once (the graph's generation bumped, the nodes
    created counted, the tags linked to counted again), and a larger page
    cache while it runs (``sql_imports.CACHE_BULK``)."""
    cur.execute(sql_imports.CACHE_BULK)
    try:
        found = cur.execute(sql_imports.ROW_TRIGGERS_GET, (json.dumps(sql_imports.BULK_ROW_TRIGGERS),)).fetchall()
        for name, _ in found:
            cur.execute(sql_imports.ROW_TRIGGER_DROP[name])
        counted = _Counted()
        yield counted
        names = {name for name, _ in found}
        cur.execute(sql_imports.GRAPH_GENERATION_BUMP)
        if "label_counts_add" in names:
            cur.executemany(sql_imports.LABEL_COUNT_ADD, sorted((k, n) for k, n in counted.labels.items() if n))
        if "tag_degrees_add" in names:
            cur.executemany(sql_imports.TAG_DEGREE_SET, [(tag, tag) for tag in sorted(counted.tags)])
        for name in sorted(names):
            cur.execute(sql_imports.ROW_TRIGGER_MAKE[name])
    finally:
        cur.execute(sql_imports.CACHE_DEFAULT)


def _named_json(name: str) -> str:
    """``nodes.dumps({"id": name, "name": name})``, without the encoder's dict walk."""
    text = json.dumps(name, ensure_ascii=False)
    return f'{{"id": {text}, "name": {text}}}'


class HistoryImport:
    """The imported history's writes and reads (a part of ``LocalStore``)."""

    db: Connection

    def import_history(self, tasks: Sequence[Task], records: Sequence[HandoffRecord]) -> list[bool]:
        if not tasks:
            return []
        rows = history_rows(tasks, records)
        with self.db.write() as cur, _bulk(cur) as counted:
            ids = json.dumps(sorted({t.id for t in tasks}))
            stored = {str(r[0]) for r in cur.execute(sql_imports.TASKS_STORED, (ids,))}
            written: list[bool] = []
            fresh: list[dict[str, Any]] = []
            for row in rows:
                new = row["props"]["id"] not in stored
                written.append(new)
                if new:
                    stored.add(row["props"]["id"])
                    fresh.append(row)
            if fresh:
                _write_tasks(cur, fresh, counted)
                made = {row["props"]["id"] for row in fresh}
                _write_handoffs(cur, plan_handoffs([r for r in records if r.task_id in made], {}), counted)
        return written

    def set_statuses(self, task_ids: Sequence[str], status: TaskStatus, at: str) -> None:
        with self.db.write() as cur:
            found = nodes.nodes(cur, "Task", task_ids)
            for props in found.values():
                props.pop("blocked_reason", None)
                props.pop("blocked_at", None)
                props.update(status=status.value, updated_at=at)
            nodes.put_nodes(cur, [("Task", props) for props in found.values()])

    def history_tasks(self, prefix: str) -> dict[str, tuple[str, str | None, bool]]:
        with self.db.read() as cur:
            rows = cur.execute(sql_imports.HISTORY_TASKS, (prefix, prefix + "\U0010ffff")).fetchall()
        return {str(i): (str(status or ""), digest, bool(tagged)) for i, status, digest, tagged in rows}

    def write_task_signals(self, rows: Sequence[tuple[str, TaskSignals]]) -> None:
        with self.db.write() as cur:
            found = nodes.nodes(cur, "Task", (i for i, _ in rows))
            for task_id, sig in rows:
                props = found.get(task_id)
                if props is None:
                    continue
                props.update(signal_keywords=list(sig.keywords), signal_domains=list(sig.domains),
                             signal_files=list(sig.files_mentioned), signal_types=list(sig.task_types))
                nodes.put_node(cur, "Task", props)
                cur.execute(sql.DELETE_TASK_TAGS, (task_id,))
                nodes.tag(cur, ("Task", task_id), signal_tags(sig))

    def history_source(self, source_id: str) -> dict[str, Any] | None:
        with self.db.read() as cur:
            row = cur.execute(sql_imports.HISTORY_SOURCE_GET, (_SOURCE_KEY + source_id,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def write_history_source(self, props: dict[str, Any]) -> None:
        with self.db.write() as cur:
            cur.execute(sql_imports.HISTORY_SOURCE_PUT, (_SOURCE_KEY + str(props["id"]), nodes.dumps(props)))


def _rows(items: Any) -> str:
    """A bulk statement's JSON array parameter."""
    return json.dumps(items, ensure_ascii=False)


def _write_tasks(cur: sqlite3.Cursor, fresh: Sequence[dict[str, Any]], counted: _Counted) -> None:
    """The new tasks (``history_rows``' rows), their tags, terms and handoffs,
    as ``upsert_tasks`` then ``apply_handoffs`` write them."""
    cur.execute(sql_imports.BULK_NEW_NODES, ("Task", _rows([[row["props"]["id"], nodes.dumps(row["props"])]
                                                            for row in fresh])))
    tags = {t for row in fresh for t in row["tags"]}
    terms = {t for row in fresh for t in row["props"].get("terms", ())}
    counted.add("Task", len(fresh))
    _named(cur, "Tag", tags, counted)
    _named(cur, "Term", terms, counted)
    if tags:
        cur.execute(sql_imports.BULK_LINKS, ("Task", "TAGGED", "Tag", _EMPTY,
                                             _rows([[row["props"]["id"], row["tags"]] for row in fresh])))
    cur.execute(sql_imports.BULK_LINKS, ("Task", "HANDED_OFF", "Handoff", _EMPTY,
                                         _rows([[row["props"]["id"], [row["handoff"]["id"]]] for row in fresh])))
    handoffs = _rows([[row["handoff"]["id"], nodes.dumps(row["handoff"])] for row in fresh])
    ids = _rows(sorted({row["handoff"]["id"] for row in fresh}))
    stored = int(cur.execute(sql_imports.NODES_STORED, ("Handoff", ids)).fetchone()[0])
    cur.execute(sql_imports.BULK_PUT_NODES, ("Handoff", handoffs))
    counted.add("Handoff", len({row["handoff"]["id"] for row in fresh}) - stored)
    counted.tags.update(tags)


def _named(cur: sqlite3.Cursor, label: str, names: set[str], counted: _Counted) -> None:
    """The ``label`` nodes (Tag, Term) among ``names`` made when missing."""
    if names:
        cur.execute(sql_imports.BULK_NAMED, (label, _rows([[t, _named_json(t)] for t in sorted(names)])))
        counted.add(label, cur.rowcount)


def _write_handoffs(cur: sqlite3.Cursor, batch: HandoffBatch, counted: _Counted) -> None:
    """The files the new handoffs name (created, or their notes merged) and
    their links to them."""
    _fill_files(cur, batch.files, counted)
    cur.execute(sql_imports.BULK_FILE_LINKS, (_rows([[h, link.rel, link.path, _link_json(link)]
                                                     for h, link in batch.links()]),))


def _link_json(link: Any) -> str:
    props = link_props(link)
    return _PURPOSE if props == _NO_PURPOSE else nodes.dumps(props)


_NO_PURPOSE = {"purpose": ""}
_PURPOSE = nodes.dumps(_NO_PURPOSE)


def _fill_files(cur: sqlite3.Cursor, fills: Sequence[FileFill], counted: _Counted) -> None:
    """``writes._fill_files`` in one statement per row kind: the missing files
    created and the others' notes merged (``handoff_batch.merge_file``), the
    Term nodes of a file whose terms changed made."""
    existing = nodes.nodes(cur, "File", (f.entry.path for f in fills))
    changed = HandoffBatch.merged_files_of(fills, existing)
    if not changed:
        return
    cur.execute(sql_imports.BULK_PUT_NODES, ("File", _rows([[p["id"], nodes.dumps(p)] for p in changed])))
    relinked = [p for p in changed if p["path"] not in existing or existing[p["path"]].get("terms") != p["terms"]]
    _named(cur, "Term", {t for p in relinked for t in p["terms"]}, counted)
    counted.add("File", sum(1 for p in changed if p["path"] not in existing))
