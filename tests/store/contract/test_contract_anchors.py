"""The contract of the ``AnchorStore`` role (``ctxgraph.graph.store``), run on
every store: anchors written and replaced by id, read by owner or by path;
an import of the project's own files written as one batch, its files' state
kept per source."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import Anchor, ImportBatch, ImportedFile, KnowledgeItem
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


def adr(number: int, title: str, at: str = "2026-03-01T00:00:00Z") -> KnowledgeItem:
    return KnowledgeItem(id=f"adr:{number}", kind="decision", summary=title, tags=("adr",), status="active",
                         created_at=at, updated_at=at)


def seen(path: str, sha: str, *items: str) -> ImportedFile:
    return ImportedFile(path=path, kind="adr", mtime_ns=1, size=2, sha256=sha, items=items)


def test_an_import_writes_its_items_anchors_and_files_and_removes_what_is_gone(store: KnowledgeStore) -> None:
    imports: AnchorStore = store
    first = ImportBatch(items=(adr(1, "Use JWT"), adr(2, "Use RS256")), anchors=(anchor("a:1", "adr:1", "docs/1.md"),),
                        supersedes=(("adr:2", "adr:1", "2026-03-02T00:00:00Z"),),
                        files=(seen("docs/1.md", "s1", "adr:1"), seen("docs/2.md", "s2", "adr:2")))
    imports.write_import("adr", first)
    imports.write_import("adr", first)  # idempotent
    assert imports.imported_files("adr") == [seen("docs/1.md", "s1", "adr:1"), seen("docs/2.md", "s2", "adr:2")]
    assert imports.imported_files("notes") == []
    assert [d.id for d in store.decisions_in_force()] == ["adr:2"]
    assert [a.id for a in imports.read_anchors(["adr:1"], None)] == ["a:1"]
    imports.write_import("adr", ImportBatch(removed=("adr:1",), gone=("docs/1.md",)))
    assert imports.imported_files("adr") == [seen("docs/2.md", "s2", "adr:2")]
    assert [k.id for k in store.get_knowledge(["adr:1", "adr:2"])] == ["adr:2"]
    assert imports.read_anchors(["adr:1"], None) == []
