"""The stat-then-hash scan (:func:`ctxgraph.memory.scan.changes`): what it reads, and what it reports."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ctxgraph.memory.scan import RACY_NS, changes


def aged(path: Path, seconds: float = 60.0) -> None:
    """Move ``path``'s mtime into the past (out of the racy window)."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    for name, text in {"pkg/a.py": "A = 1\n", "pkg/b.py": "B = 2\n", "README.md": "# r\n"}.items():
        (root / name).write_text(text, encoding="utf-8")
        aged(root / name)
    (root / "logo.py").write_bytes(b"\0binary")
    return root


def test_an_unchanged_stat_is_not_read_and_a_changed_file_is(tmp_path: Path) -> None:
    root = tree(tmp_path / "p")
    first = changes(root, {})
    assert [f.path for f in first.added] == ["README.md", "pkg/a.py", "pkg/b.py"] and first.read == 4
    assert [s.path for s in first.skipped] == ["logo.py"] and not first.changed and not first.deleted

    again = changes(root, first.stats)
    assert again.read == 1 and again.unchanged == 3 and not again.any  # the binary file is sniffed again

    (root / "pkg" / "a.py").write_text("A = 3\n", encoding="utf-8")  # same size, new content
    aged(root / "pkg" / "a.py", 30)
    (root / "pkg" / "b.py").unlink()
    (root / "pkg" / "c.py").write_text("C = 4\n", encoding="utf-8")
    os.utime(root / "README.md")  # touched: new mtime, same content
    found = changes(root, again.stats)
    assert found.paths() == {"added": ["pkg/c.py"], "changed": ["pkg/a.py"], "deleted": ["pkg/b.py"]}
    assert found.read == 4 and found.unchanged == 1 and list(found.touched) == ["README.md"]


def test_a_file_written_within_the_racy_window_is_read_again(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.py").write_text("A = 1\n", encoding="utf-8")
    first = changes(root, {})
    assert first.stats["a.py"].mtime_ns == 0  # just written: its stat is not trusted
    later = changes(root, first.stats, now_ns=time.time_ns() + RACY_NS + 1)
    assert later.read == 1 and not later.any and later.touched["a.py"].mtime_ns > 0
    assert changes(root, later.stats).read == 0


def test_what_gitignore_files_leave_out_is_not_a_candidate(tmp_path: Path) -> None:
    from ctxgraph.memory.scan import candidates

    root = tmp_path / "p"
    files = ["app.py", "debug.log.txt", "keep.log.txt", "generated/out.py", "pkg/mod.py", "pkg/secret.py",
             "pkg/deep/secret.py", "pkg/deep/shown.py", "docs/generated/page.md"]
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n", encoding="utf-8")
    (root / ".gitignore").write_text("*.log.txt\n!keep.log.txt\n/generated/\n", encoding="utf-8")
    (root / "pkg" / ".gitignore").write_text("secret.py\n", encoding="utf-8")
    (root / "pkg" / "deep" / ".gitignore").write_text("!secret.py\nshown.py\n", encoding="utf-8")
    found = sorted(rel for _, rel in candidates(root))
    # /generated/ is anchored at the root: docs/generated stays; a deeper file's "!" brings back what a
    # shallower one left out.
    assert found == ["app.py", "docs/generated/page.md", "keep.log.txt", "pkg/deep/secret.py", "pkg/mod.py"]


def test_a_handoff_file_is_not_read_as_the_projects_code(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    files = {
        "handoff.yaml": "task_id: task-7\nsummary: Added login\nfiles_modified:\n  - path: a.py\n",
        "handoffs/batch.json": '[{"task_id": "t1", "summary": "x", "gotchas": []}]',
        "config.yaml": "name: ci\nsummary: the build\n",  # not a handoff: no task_id, no lists
        "models.py": "task_id: str\nsummary: str\ndecisions: list\n",  # code with the same names
    }
    for name, text in files.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    found = changes(root, {})
    assert [f.path for f in found.added] == ["config.yaml", "models.py"]
    assert sorted(s.path for s in found.skipped) == ["handoff.yaml", "handoffs/batch.json"]
    assert all("handoff" in s.reason for s in found.skipped)
