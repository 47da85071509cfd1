"""The one atomic write (ctxgraph.files): a file is replaced whole or not at all."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ctxgraph.files import atomic_write


def test_a_clean_write_replaces_the_file_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    with atomic_write(target, text=True) as out:
        out.write("one\ntwo\n")
    with atomic_write(tmp_path / "out.bin") as raw:
        raw.write(b"\x00\x01")
    assert target.read_bytes() == b"one\ntwo\n"
    assert (tmp_path / "out.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin", "out.txt"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "settings.toml"
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_write(target, text=True) as out:
        out.write("half of the new")
        raise RuntimeError("interrupted")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["settings.toml"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_the_file_keeps_its_mode_and_a_new_one_gets_a_plain_opens(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.write_text("x", encoding="utf-8")
    kept.chmod(0o640)
    with atomic_write(kept) as out:
        out.write(b"y")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    mask = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "new") as out:
            out.write(b"z")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o644
