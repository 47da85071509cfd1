"""The contract of the ``AnchorStore`` role's anchors (``ctxgraph.graph.store``),
run on every store: written and replaced by id, read by owner or by path."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import Anchor
from ctxgraph.graph.store import AnchorStore, KnowledgeStore


@pytest.fixture
def anchors(store: KnowledgeStore) -> AnchorStore:
    """The store of each kind, seen as its anchor role."""
    return store


def anchor(aid: str, owner: str, path: str, **kw: object) -> Anchor:
    fields: dict[str, object] = {"id": aid, "owner": owner, "task_id": "t-1", "path": path, "blob": "b" * 40,
                                 "size": 10, "mtime_ns": 1, "anchored_at": "2026-03-01T00:00:00Z",
                                 "current_path": path, "seen_size": 10, "seen_mtime_ns": 1}
    return Anchor.model_validate(fields | kw)


def test_anchors_read_back_whole_by_id(anchors: AnchorStore) -> None:
    written = [anchor("a:2", "t-1", "src/b.py", lines="3-9", lines_hash="h", commit="c" * 40),
               anchor("a:1", "pattern:x", "src/a.py")]
    anchors.write_anchors(written)
    assert anchors.read_anchors() == sorted(written, key=lambda a: a.id)
    anchors.write_anchors(written)  # idempotent
    assert anchors.read_anchors() == sorted(written, key=lambda a: a.id)


def test_an_anchor_written_again_is_replaced_whole(anchors: AnchorStore) -> None:
    anchors.write_anchors([anchor("a:1", "t-1", "src/a.py", lines="1-2")])
    moved = anchor("a:1", "t-1", "src/a.py", current_path="src/moved.py", status="changed", reason="file",
                   changed_at="2026-03-02T00:00:00Z")
    anchors.write_anchors([moved])
    assert anchors.read_anchors() == [moved]


def test_anchors_by_owner_or_by_path_or_current_path(anchors: AnchorStore) -> None:
    anchors.write_anchors([anchor("a:1", "t-1", "src/a.py"), anchor("a:2", "t-2", "src/b.py"),
                           anchor("a:3", "t-3", "src/old.py", current_path="src/new.py")])
    assert [a.id for a in anchors.read_anchors(["t-2", "t-9"], None)] == ["a:2"]
    assert [a.id for a in anchors.read_anchors(None, ["src/a.py", "src/new.py"])] == ["a:1", "a:3"]
    assert [a.id for a in anchors.read_anchors(None, ["src/old.py"])] == ["a:3"]
    assert [a.id for a in anchors.read_anchors(["t-2"], ["src/a.py"])] == ["a:1", "a:2"]
    assert anchors.read_anchors([], []) == []
