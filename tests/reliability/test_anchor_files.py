"""The files anchors read (issue 40; ctxgraph.service.anchor_files): nothing
outside the project's root is read or kept, a file is read once per
ingestion or check whatever the number of anchors on it, and a file over
the read limit is never read. What is opened is seen through Python's audit
hook (``open`` events: ``open()`` and ``os.open``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ctxgraph.core.anchors import NOT_READ, blob_id
from ctxgraph.service.anchor_files import MAX_READ_BYTES, FileReads
from ctxgraph.service.anchors import Wanted, check, make_anchors

_OPENED: list[list[str]] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _OPENED and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED[-1].append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


@contextmanager
def opened() -> Iterator[list[str]]:
    """The paths opened inside the block."""
    seen: list[str] = []
    _OPENED.append(seen)
    try:
        yield seen
    finally:
        _OPENED.pop()


def wanted(*paths: str, lines: str | None = None) -> list[Wanted]:
    return [("t-1", "t-1", p, lines, None, "2026-01-01T00:00:00Z") for p in paths]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A root with a file, and beside it (outside) a secret and a home folder."""
    outside = tmp_path / "outside"
    (outside / "home").mkdir(parents=True)
    (outside / "secret.txt").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (outside / "home" / ".bashrc").write_text("export TOKEN=sk-live-1\n")
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\nb = 2\n")
    (root / "passwd.txt").symlink_to(outside / "secret.txt")
    (root / "homedir").symlink_to(outside / "home")
    (root / "etc_passwd").symlink_to("/etc/passwd")
    (root / "inner.py").symlink_to(root / "src" / "a.py")  # a link inside the root: its target is the project's
    return root


def test_nothing_outside_the_root_is_anchored_or_read(tree: Path) -> None:
    with opened() as seen:
        made = make_anchors(tree, wanted("passwd.txt", "homedir/.bashrc", "etc_passwd", "../outside/secret.txt",
                                         str(tree.parent / "outside" / "secret.txt"), "src/../../outside/secret.txt",
                                         "src/a.py", "inner.py", lines="1"))
    assert [a.path for a in made] == ["src/a.py", "inner.py"]
    assert made[0].blob == made[1].blob == blob_id(b"a = 1\nb = 2\n")
    assert seen == [os.path.realpath(tree / "src" / "a.py")]  # once, for both names of the one file


def test_a_file_that_becomes_a_link_out_of_the_root_is_gone_and_not_read(tree: Path) -> None:
    anchors = make_anchors(tree, wanted("src/a.py", lines="1-2"))
    (tree / "src" / "a.py").unlink()
    (tree / "src" / "a.py").symlink_to(tree.parent / "outside" / "secret.txt")
    with opened() as seen:
        result = check(tree, anchors, renames=False)
    assert seen == [] and result.hashed == 0
    (gone,) = result.anchors
    assert (gone.status, gone.reason, gone.seen_size) == ("deleted", "file not in the work tree: src/a.py", -1)


def test_a_file_is_read_once_for_all_its_anchors(tmp_path: Path) -> None:
    big = tmp_path / "data.py"
    big.write_bytes(b"".join(b"value_%d = %d\n" % (i, i) for i in range(200_000)))
    cited = [(f"pattern:{i}", "t-1", "data.py", f"{i * 1000 + 1}-{i * 1000 + 20}", None, "T") for i in range(100)]
    reads = FileReads(tmp_path)
    with opened() as seen:
        anchors = make_anchors(tmp_path, cited, reads)
    assert len(anchors) == 100 and len({a.lines_hash for a in anchors}) == 100
    assert seen == [os.path.realpath(big)] and reads.reads == 1
    os.utime(big, ns=(1, 1))  # a touch: every anchor's stat differs, the content does not
    with opened() as seen:
        result = check(tmp_path, anchors, "T2")
    assert seen == [os.path.realpath(big)] and result.hashed == 1
    assert {a.status for a in result.anchors} == {"unchanged"} and len(result.updated) == 100
    with opened() as seen:
        again = check(tmp_path, result.anchors, "T3")
    assert seen == [] and again.hashed == 0 and not again.updated


def test_a_file_over_the_limit_is_never_read(tmp_path: Path) -> None:
    """A sparse 2 GB file: anchored and checked by its stat alone."""
    huge = tmp_path / "dump.sql"
    with open(huge, "wb") as f:
        f.truncate(2 * 1024**3)
    assert huge.stat().st_size > MAX_READ_BYTES
    with opened() as seen:
        (a,) = make_anchors(tmp_path, wanted("dump.sql", lines="1-10"))
    assert seen == [] and (a.blob, a.lines_hash, a.size) == (NOT_READ, None, 2 * 1024**3)
    os.utime(huge, ns=(a.mtime_ns, a.mtime_ns + 1))
    with opened() as seen:
        result = check(tmp_path, [a], "T2")
    assert seen == [] and result.hashed == 0
    assert (result.anchors[0].status, result.anchors[0].reason) == (
        "changed", "file changed (too big to read: its size or time differs)")
    os.utime(huge, ns=(a.mtime_ns, a.mtime_ns))  # back as anchored
    assert check(tmp_path, result.anchors, "T3").anchors[0].status == "unchanged"


def test_a_fifo_is_not_opened_for_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with opened() as seen:
        assert make_anchors(tmp_path, wanted("pipe")) == []
    assert seen == []


def test_the_limit_is_on_the_bytes_read(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"x\n" * 100)
    reads = FileReads(tmp_path, limit=150)
    digest = reads.digest("f.txt", ["1"])
    assert digest is not None and digest.blob == NOT_READ and reads.reads == 0
    read = FileReads(tmp_path, limit=200).digest("f.txt")
    assert read is not None and read.blob == blob_id(b"x\n" * 100)
