"""The pure half of code anchors (ctxgraph.core.anchors, ctxgraph.compute.freshness)."""

from __future__ import annotations

from ctxgraph.compute.freshness import STALE_FACTOR, Freshness
from ctxgraph.core.anchors import anchor_id, blob_id, lines_hash, parse_lines, verdict
from ctxgraph.core.models import Anchor

#: `printf 'hello\n' | git hash-object --stdin`
HELLO = "ce013625030ba8dba906f756967f9e9ca394464a"


def anchor(**update: object) -> Anchor:
    base = Anchor(id="anchor:x", owner="pattern:p", task_id="t-1", path="src/a.py", lines="2-3",
                  blob=blob_id(b"a\nb\nc\nd\n"), lines_hash=lines_hash(b"a\nb\nc\nd\n", "2-3"), size=8,
                  mtime_ns=1, anchored_at="2026-01-01T00:00:00Z", current_path="src/a.py", seen_size=8,
                  seen_mtime_ns=1)
    return base.model_copy(update=update)


def test_blob_id_is_gits() -> None:
    assert blob_id(b"hello\n") == HELLO
    assert blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_lines() -> None:
    assert parse_lines("10-24, 30") == ((10, 24), (30, 30))
    assert parse_lines("24-10") == parse_lines("abc") == parse_lines("0") == parse_lines(None) == ()
    assert lines_hash(b"a\nb\n", None) is None and lines_hash(b"a\nb\n", "x") is None
    assert lines_hash(b"a\nb\nc\n", "2") == lines_hash(b"z\nb\ny\n", "2") != lines_hash(b"a\nb\nc\n", "1")
    assert anchor_id("t", "a.py", None) == anchor_id("t", "a.py", None) != anchor_id("t", "a.py", "1")


def test_verdict_is_on_the_cited_lines_when_there_are_some() -> None:
    a = anchor()
    assert verdict(a, b"a\nb\nc\nd\n") == ("unchanged", None)
    assert verdict(a, b"a\nb\nc\nd\ne\n") == ("unchanged", None)  # edited elsewhere
    assert verdict(a, b"a\nB\nc\nd\n") == ("changed", "lines 2-3 changed")
    whole = anchor(lines=None, lines_hash=None)
    assert verdict(whole, b"a\nb\nc\nd\ne\n") == ("changed", "file changed")


def test_freshness_marks_moves_and_retires() -> None:
    changed = anchor(status="changed")
    fresh = Freshness([changed])
    retired, location, stale, factor = fresh.item("pattern:p", "src/a.py:2-3")
    assert (retired, location, stale, factor) == ("", "src/a.py:2-3", "⚠ code changed since t-1: src/a.py",
                                                  STALE_FACTOR)
    moved = Freshness([anchor(current_path="src/b.py")])
    assert moved.item("pattern:p", "src/a.py:2-3")[1] == "src/b.py:2-3"
    assert moved.code_file("src/a.py") == ("", "src/b.py") and moved.files
    gone = Freshness([anchor(status="deleted", reason="file deleted: src/a.py", changed_at="T")])
    assert gone.item("pattern:p", "src/a.py")[0] == "retired: file deleted: src/a.py (found T)"
    assert Freshness([], ["src/x.py"]).code_file("src/x.py")[0] == "retired: file not in the work tree: src/x.py"
    assert not Freshness([changed]).files and not Freshness()
