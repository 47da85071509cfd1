"""The git history read as it is (issue 44; ctxgraph/sources): ``git log``
streamed and parsed from real repositories made here, renames followed to
the tip, commits as tasks and handoffs, nothing naming a person kept."""

from __future__ import annotations

import gc
import os
import subprocess
from pathlib import Path

import pytest

from ctxgraph.sources import git_log
from ctxgraph.sources.git_log import Change, Commit, GitError, parse, read_commit, read_log, resolve
from ctxgraph.sources.history import Renames, clean_message, entries, joined_task, refs, task_id, trailers
from tests._history_repo import BODY, commit, git, init, move, project


def test_a_project_reads_newest_first_with_every_change(tmp_path: Path) -> None:
    shas = project(tmp_path / "repo")
    found = list(read_log(tmp_path / "repo", ["HEAD"]))
    assert [c.id for c in found] == shas[::-1]
    first = found[-1]
    assert first.parents == () and first.date == "2024-01-01T00:00:00Z"  # the author date, in UTC
    assert first.changes == (Change("A", "README.md"), Change("A", "src/auth/tokens.py"))
    assert found[0].changes == (Change("R", "src/auth/jwt.py", "src/auth/tokens.py"),)
    assert found[0].parents == (shas[-2],)
    fix = found[-3]
    assert fix.subject == "Fix token expiry check (#12)" and fix.body.startswith("Fixes #12.")


def test_merges_are_not_read(tmp_path: Path) -> None:
    repo = init(tmp_path / "repo")
    commit(repo, "one", {"a.py": "a\n"}, date=0)
    git(repo, "checkout", "-q", "-b", "side")
    side = commit(repo, "two", {"b.py": "b\n"}, date=10)
    git(repo, "checkout", "-q", "main")
    commit(repo, "three", {"c.py": "c\n"}, date=20)
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge side", "side", date=30)
    subjects = [c.subject for c in read_log(repo, ["HEAD"])]
    assert sorted(subjects) == ["one", "three", "two"]
    merge = read_commit(repo, "HEAD")
    assert len(merge.parents) == 2 and merge.changes == ()
    assert read_commit(repo, side[:7]).id == side


def test_odd_paths_and_an_empty_commit(tmp_path: Path) -> None:
    repo = init(tmp_path / "repo")
    commit(repo, "empty", {}, date=0)
    odd = os.fsdecode(b"odd\xff name.py")
    (repo / odd).write_text("x\n")
    (repo / "new\nline.py").write_text("y\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "odd names", date=10)
    newest, empty = list(read_log(repo, ["HEAD"]))
    assert empty.subject == "empty" and empty.changes == ()
    # an odd byte stays escaped (two byte paths stay two paths); a newline is a character of the path
    assert sorted(c.path for c in newest.changes) == ["new\nline.py", "odd%FF name.py"]


def test_the_parser_refuses_output_it_does_not_know() -> None:
    with pytest.raises(GitError, match="unexpected git log output"):
        list(parse(iter([b"not a record"])))
    mark = git_log.MARK + b"a" * 40
    with pytest.raises(GitError, match="unexpected git log output"):
        list(parse(iter([mark, b"", b"0", b"msg", b"\nZZ", b"path"])))


def test_stopping_early_ends_git(tmp_path: Path) -> None:
    repo = init(tmp_path / "repo")
    for i in range(30):
        commit(repo, f"commit {i}", {f"f{i}.py": BODY}, date=i)
    seen = []
    reader = read_log(repo, ["HEAD"])
    for found in reader:
        seen.append(found)
        if len(seen) == 2:
            break
    reader.close()
    gc.collect()
    assert len(seen) == 2
    # no git process is left behind for this repository
    listing = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(repo) not in listing


def test_a_small_block_size_parses_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project(tmp_path / "repo")
    whole = list(read_log(tmp_path / "repo", ["HEAD"]))
    monkeypatch.setattr(git_log, "BLOCK", 7)
    assert list(read_log(tmp_path / "repo", ["HEAD"])) == whole


def test_since_max_count_and_ranges(tmp_path: Path) -> None:
    shas = project(tmp_path / "repo")
    repo = tmp_path / "repo"
    assert [c.id for c in read_log(repo, ["HEAD"], max_count=2)] == shas[:-3:-1]
    assert [c.id for c in read_log(repo, ["HEAD", "^" + shas[-3]])] == shas[:-3:-1]
    assert [c.id for c in read_log(repo, ["HEAD"], since="2024-01-01T00:09:00Z")] == shas[:-4:-1]


def test_git_errors_are_one_line(tmp_path: Path) -> None:
    project(tmp_path / "repo")
    with pytest.raises(GitError, match="'nope' is not a commit"):
        resolve(tmp_path / "repo", "nope")
    with pytest.raises(GitError):
        list(read_log(tmp_path / "repo", ["nope"]))
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitError, match="not a commit"):
        resolve(tmp_path / "plain", "HEAD")


def _commit(changes: list[Change], message: str = "change") -> Commit:
    return Commit(id="0" * 40, parents=(), date="2024-01-01T00:00:00Z", message=message, changes=tuple(changes))


def test_renames_map_old_paths_to_the_tip() -> None:
    renames = Renames()
    # newest first: b.py renamed to c.py, then (older) a.py renamed to b.py
    renames.step([Change("R", "c.py", "b.py")])
    assert renames.final("b.py") == "c.py"
    renames.step([Change("R", "b.py", "a.py"), Change("M", "x.py")])
    assert renames.final("a.py") == "c.py" and renames.final("x.py") == "x.py"
    assert renames.moved


def test_a_path_made_anew_is_another_file() -> None:
    renames = Renames()
    # newest first: a new a.py is added after the old one moved away to b.py
    renames.step([Change("A", "a.py")])
    renames.step([Change("R", "b.py", "a.py")])
    assert renames.final("a.py") == "b.py"  # before the move, a.py was the file now at b.py
    renames = Renames()
    renames.step([Change("R", "b.py", "a.py")])  # newest: a.py moved to b.py
    renames.step([Change("A", "b.py")])  # (an older b.py, deleted in between: another file)
    assert renames.final("b.py") == "b.py" and renames.final("a.py") == "b.py"


def test_the_history_of_a_moved_file_counts_for_its_new_path(tmp_path: Path) -> None:
    repo = init(tmp_path / "repo")
    commit(repo, "Add app", {"flask/app.py": BODY}, date=0)
    commit(repo, "Edit app", {"flask/app.py": BODY + "X = 1\n"}, date=10)
    move(repo, "flask", "src/flask", "Move to src", date=20)
    commit(repo, "Edit again", {"src/flask/app.py": BODY + "X = 2\n"}, date=30)
    found = {e.task.name: e for e in entries(read_log(repo, ["HEAD"])) if e.task is not None}
    assert found["Add app"].handoff == {**found["Add app"].handoff, "files_created": [{"path": "src/flask/app.py"}]}
    assert found["Edit app"].handoff["files_modified"] == [{"path": "src/flask/app.py"}]
    assert found["Move to src"].handoff["files_modified"] == [{"path": "src/flask/app.py"}]


def test_a_commit_becomes_a_task_and_a_handoff(tmp_path: Path) -> None:
    shas = project(tmp_path / "repo")
    found = {e.commit.id: e for e in entries(read_log(tmp_path / "repo", ["HEAD"]))}
    fix = found[shas[2]]
    assert fix.task is not None and fix.task.id == task_id(shas[2]) == "c-" + shas[2][:10]
    assert fix.task.name == "Fix token expiry check (#12)"
    assert fix.task.objective == "Fix token expiry check (#12)\n\nFixes #12."  # the sign-off is left out
    assert fix.task.status.value == "completed" and fix.task.completed_at == "2024-01-01T00:03:20Z"
    assert fix.task.type == "change" and fix.task.success is True
    assert fix.handoff == {
        "task_id": fix.task.id, "summary": "Fix token expiry check (#12)", "success": True,
        "completed_at": "2024-01-01T00:03:20Z", "commit": shas[2], "files_created": [],
        "files_modified": [{"path": "src/auth/jwt.py"}], "refs": ["#12"]}  # renamed since: the tip's path
    release = found[shas[3]]
    assert release.verdict.rule == "release" and release.task is None
    cookie = found[shas[5]]
    assert cookie.verdict.dropped == (("uv.lock", "lock"),)
    assert [f["path"] for f in cookie.handoff["files_modified"]] == ["src/auth/session.py"]
    assert found[shas[4]].verdict.rule == "no-files"  # only a lock file
    revert = found[shas[7]]
    assert revert.verdict.rule == "revert" and revert.verdict.reverts == shas[6]


def test_a_deleted_file_is_named_but_not_linked(tmp_path: Path) -> None:
    repo = init(tmp_path / "repo")
    commit(repo, "Add", {"a.py": "a\n", "b.py": "b\n"}, date=0)
    commit(repo, "Drop b, edit a", {"a.py": "a2\n", "b.py": None}, date=10)
    newest = next(entries(read_log(repo, ["HEAD"])))
    assert newest.handoff is not None
    assert newest.handoff["files_modified"] == [{"path": "a.py"}] and newest.handoff["files_deleted"] == ["b.py"]


def test_no_name_or_address_is_kept() -> None:
    message = ("Fix it\n\nReported by jo@example.org on the list.\n\n"
               "Co-authored-by: Jo Doe <jo@example.org>\nSigned-off-by: Al <al@example.net>\nTask: task-43")
    cleaned = clean_message(message)
    assert "example" not in cleaned and "Jo Doe" not in cleaned and "Al" not in cleaned.split()
    assert cleaned == "Fix it\n\nReported by [e-mail] on the list.\n\nTask: task-43"


def test_trailers_refs_and_the_task_a_commit_joins() -> None:
    message = "Fix (#2956)\n\nfixes #45, see GH-7 and https://github.com/o/r/pull/9\n\nTask: task-043\nRefs: #45"
    assert trailers(message) == [("Task", "task-043"), ("Refs", "#45")]
    assert refs(message) == ["#7", "#9", "#45", "#2956"]
    assert refs("colour &#123; and page.html#12 are not refs") == []
    assert joined_task(message) == "task-043"
    assert joined_task("Fix\n\nTask: has spaces") is None
    assert trailers("One paragraph: only") == []
