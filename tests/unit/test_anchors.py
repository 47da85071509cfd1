"""The pure half of code anchors (ctxgraph.core.anchors, ctxgraph.compute.freshness) and the
parsing of git's renames."""

from __future__ import annotations

from ctxgraph.compute.freshness import STALE_FACTOR, Freshness
from ctxgraph.core.anchors import (
    NOT_READ,
    anchor_id,
    blob_id,
    fs_path,
    judge,
    lines_hash,
    lines_hashes,
    parse_lines,
    shown_path,
    verdict,
)
from ctxgraph.core.models import Anchor
from ctxgraph.service.anchors import parse_renames

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


def _reference_lines_hash(data: bytes, spec: str) -> str:
    """The hash of the cited lines as the first version made it (a list of lines)."""
    import hashlib

    lines = data.splitlines(keepends=True)
    h = hashlib.sha1(usedforsecurity=False)
    for start, end in parse_lines(spec):
        for line in lines[start - 1:end]:
            h.update(line)
        h.update(b"\0")
    return h.hexdigest()


def test_lines_are_found_as_a_list_of_lines_would_find_them() -> None:
    """The lines are looked for block by block, never split into a list: the
    hashes are those of the list of lines (anchors made before stay valid),
    across blocks, past the end, with \\r\\n and with lone \\r line ends."""
    import random

    rng = random.Random(40)
    words = [b"x", b"def f():", b"    return 1", b"", b"# \xe9t\xe9", b"y" * 3000]
    for ends in ([b"\n"], [b"\r\n"], [b"\n", b"\r", b"\r\n"]):
        data = b"".join(rng.choice(words) + rng.choice(ends) for _ in range(300_000 // 8))
        total = len(data.splitlines())
        specs = ["1", "1-3", f"{total}", f"{total - 5}-{total + 10}", f"{total + 1}", f"{total + 50}-{total + 60}",
                 "17000-17010,3", f"{total // 2}-{total // 2 + 200},9-9"]
        for cut in (data, data + b"tail without a line end"):
            hashes = lines_hashes(cut, specs)
            for spec in specs:
                assert hashes[spec] == _reference_lines_hash(cut, spec) == lines_hash(cut, spec), (ends, spec)
    assert lines_hash(b"", "1") == _reference_lines_hash(b"", "1")


def test_odd_file_names_are_escaped_and_found_again() -> None:
    name = b"src/caf\xe9.py".decode("utf-8", "surrogateescape")
    assert shown_path(name) == "src/caf%E9.py" and fs_path(shown_path(name)) == name
    assert shown_path("src/é.py") == "src/é.py" == fs_path("src/é.py")
    assert fs_path("a%41.py") == "aA.py" and shown_path("aA.py") == "aA.py"  # only what must be is escaped
    out = b"M\0src/app.py\0R087\0old.py\0caf\xe9.py\0R100\0b\xff\xfe.py\0new.py\0D\0gone.py\0"
    assert parse_renames(out) == {"old.py": "caf%E9.py", "b%FF%FE.py": "new.py"}
    assert anchor_id("t", shown_path(name), None).startswith("anchor:")


def test_a_file_too_big_to_read_is_judged_by_its_stat() -> None:
    big = anchor(blob=NOT_READ, lines_hash=None, size=3 << 30, mtime_ns=5)
    assert judge(big, NOT_READ, None, (3 << 30, 5)) == ("unchanged", None)
    assert judge(big, NOT_READ, None, (3 << 30, 6))[0] == "changed"
    assert judge(big, blob_id(b"small now\n"), None, (10, 5)) == ("changed", "file changed")
    # read when anchored, too big to read now
    assert judge(anchor(), NOT_READ, None, (3 << 30, 1)) == (
        "changed", "file changed (too big to read: its size or time differs)")
