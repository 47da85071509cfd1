"""``apply_handoffs`` leaves exactly the graph that ``apply_handoff`` on each
record in turn leaves, on both stores — including batches in which records
interact (the same handoff twice, a new version, shared knowledge and files)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from test_store import item, record, task

from ctxgraph.core.models import FileEntry, TaskStatus
from ctxgraph.errors import UnknownTaskError
from ctxgraph.graph.handoff_batch import FileFill, knowledge_version, merge_file, merge_knowledge, plan_handoffs
from ctxgraph.graph.records import FileLink, HandoffRecord
from ctxgraph.graph.store import KnowledgeStore


def _setup(store: KnowledgeStore) -> None:
    store.upsert_tasks([task("t1"), task("t2"), task("t3"), task("t4")])
    store.set_status("t3", TaskStatus.BLOCKED, reason="keys", at="2026-01-15T00:00:00Z")
    store.apply_handoffs([record("t4", item("pattern", "Shared", ("old", "a")),
                                 links=(FileLink(rel="MODIFIED", path="empty.py"),))])


def _batch() -> list[HandoffRecord]:
    shared_a = item("pattern", "Shared", ("a", "b"), at="2026-02-02T00:00:00Z")
    shared_b = item("pattern", "Shared", ("c", "b"), at="2026-02-03T00:00:00Z", location="x.py")
    return [
        record("t1", shared_a, links=(FileLink(rel="CREATED", path="a.py"),
                                      FileLink(rel="READ_NEXT", path="a.py", note="read me"))),
        record("t2", shared_b, item("gotcha", "G", ("g",)), at="2026-02-03T00:00:00Z",
               links=(FileLink(rel="MODIFIED", path="a.py", note="filled later", lines="1-2"),
                      FileLink(rel="MODIFIED", path="empty.py", note="now noted"))),
        record("t1", item("decision", "D", ("d",)), content="v2", success=False,
               links=(FileLink(rel="CREATED", path="b.py", note="b"),)),
        record("t3", shared_a),
        record("t1", shared_a, links=(FileLink(rel="CREATED", path="a.py"),
                                      FileLink(rel="READ_NEXT", path="a.py", note="read me"))),
        record("t4", item("pattern", "Shared", ("old", "a")),
               links=(FileLink(rel="MODIFIED", path="empty.py"),)),
        record("t4", item("gotcha", "Later", ("z",)), content="v2"),
        record("t2", shared_b, item("gotcha", "G", ("g",)), at="2026-02-03T00:00:00Z",
               links=(FileLink(rel="MODIFIED", path="a.py", note="filled later", lines="1-2"),
                      FileLink(rel="MODIFIED", path="empty.py", note="now noted"))),
    ]


WRITTEN = [True, True, True, True, True, False, True, False]


def _export(store: KnowledgeStore) -> list[dict[str, Any]]:
    return list(store.export_rows())


def test_a_batch_leaves_the_graph_of_one_by_one(store: KnowledgeStore) -> None:
    _setup(store)
    one_by_one = [store.apply_handoffs([r])[0] for r in _batch()]
    expected = _export(store)
    store.clear()
    _setup(store)
    assert store.apply_handoffs(_batch()) == one_by_one == WRITTEN
    assert _export(store) == expected
    assert store.apply_handoffs(_batch()[-3:]) == [True, True, False]  # t4 back to v1, then v2 again
    assert store.apply_handoffs([]) == []


def test_a_batch_with_an_unknown_task_writes_nothing(store: KnowledgeStore) -> None:
    _setup(store)
    before = _export(store)
    with pytest.raises(UnknownTaskError):
        store.apply_handoffs([record("t1"), record("ghost")])
    assert _export(store) == before


def test_plan_written_flags_and_kept_versions() -> None:
    batch = plan_handoffs(_batch(), {"handoff:t4": "t4-v1"})
    assert list(batch.written) == WRITTEN
    assert [(h.id, h.content_hash) for h in batch.handoffs] == [
        ("handoff:t1", "t1-v1"), ("handoff:t2", "t2-v1"), ("handoff:t3", "t3-v1"), ("handoff:t4", "t4-v2")]
    assert batch.replaced == ("handoff:t4",)
    shared = next(props for _, props in batch.knowledge if props["summary"] == "Shared")
    # the latest version's fields (02-03: its location), the earliest created_at, the tags' sorted union
    assert (shared["tags"], shared["created_at"], shared["updated_at"], shared.get("location")) == (
        ["a", "b", "c"], "2026-02-02T00:00:00Z", "2026-02-03T00:00:00Z", "x.py")
    assert {f.entry.path: f.notes for f in batch.files} == {"a.py": "read me", "empty.py": "now noted",
                                                           "b.py": "b"}


def test_the_merges_do_not_depend_on_the_order_of_versions() -> None:
    """merge_knowledge and merge_file are commutative, associative and
    idempotent: every order (and grouping) of the same versions gives one node."""
    rng = random.Random(3)
    days = ["2026-02-01T00:00:00Z", "2026-02-02T00:00:00Z"]
    versions = [knowledge_version(item("pattern", "Same", tuple(rng.sample("abcdef", 2)), at=rng.choice(days),
                                       location=rng.choice([None, "x.py", "y.py"]), importance=rng.random()))
                for _ in range(6)]
    fills = [FileFill(entry=FileEntry(path="f.py", component="c"), notes=rng.choice(["", "one", "two"]),
                      noted_at=f"{rng.choice(days)} handoff:t{rng.randrange(3)}") for _ in range(6)]
    fills = [f if f.notes else FileFill(entry=f.entry, notes="") for f in fills]
    seen_k, seen_f = set(), set()
    for _ in range(20):
        rng.shuffle(versions)
        rng.shuffle(fills)
        merged: dict[str, Any] | None = None
        for v in versions + versions[:2]:  # (a version again changes nothing)
            merged = merge_knowledge(merged, v)
        seen_k.add(json.dumps(merged, sort_keys=True))
        node: dict[str, Any] | None = None
        for f in fills:
            node = merge_file(node, f) or node
        seen_f.add(json.dumps(node, sort_keys=True))
    assert len(seen_k) == 1 and len(seen_f) == 1
    final = json.loads(seen_k.pop())
    assert final["created_at"] == min(v["created_at"] for v in versions)
    assert final["updated_at"] == max(v["updated_at"] for v in versions)
    assert final["tags"] == sorted({t for v in versions for t in v["tags"]})
