"""Code-anchored freshness end to end on both stores (issue 32; docs/freshness.md):
a real git repository made here, a handoff anchoring its files, then one
commit that modifies, renames and deletes them. Contexts mark the changed
pattern, follow the rename and never render the retired items, both just in
time (no sync) and after ``sync``; a second sync reads nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxgraph.core.anchors import NOT_READ, blob_id
from ctxgraph.service import ContextService
from ctxgraph.service.freshness import NoRootError
from ctxgraph.service.root import ProjectRoot
from tests._git_repo import LEGACY, MARK, TASKS, change_repo, git, handoff, make_repo


@pytest.fixture
def project(svc: ContextService, tmp_path: Path) -> tuple[ContextService, Path]:
    repo = tmp_path / "repo"
    commit = make_repo(repo)
    svc.root = ProjectRoot(repo.resolve(), "--root")
    svc.memory = False
    svc.add_tasks(TASKS)
    svc.ingest_handoff(handoff(commit), source="h.yaml")
    return svc, repo


def test_anchors_are_made_at_ingestion(project: tuple[ContextService, Path]) -> None:
    svc, repo = project
    anchors = {(a.owner, a.path, a.lines): a for a in svc.store.read_anchors()}
    jwt = anchors[("t-auth", "src/auth/jwt.py", "1-2")]
    assert jwt.blob == blob_id((repo / "src/auth/jwt.py").read_bytes())
    assert jwt.blob == git(repo, "hash-object", "src/auth/jwt.py")  # the id git gives it
    assert jwt.lines_hash is not None and jwt.commit == git(repo, "rev-parse", "HEAD")
    assert ("t-auth", "src/auth/jwt.py", None) in anchors and ("t-auth", "src/app.py", None) in anchors
    assert sum(1 for owner, _, _ in anchors if owner.startswith("pattern:")) == 3
    assert svc.sync().model_dump(exclude={"seconds", "root"}) == {
        "anchors": 7, "unchanged": 7, "changed": 0, "deleted": 0, "renamed": 0, "newly_changed": 0,
        "newly_deleted": 0, "hashed": 0, "written": 0}
    ctx = svc.compute("t-next", record=False)
    assert "⚠" not in ctx.markdown and LEGACY in ctx.markdown


def test_a_commit_marks_follows_and_retires_just_in_time_and_after_sync(
        project: tuple[ContextService, Path]) -> None:
    svc, repo = project
    change_repo(repo)
    jit = svc.compute("t-next", record=False, explain=True)  # no sync: checked just in time
    md = jit.markdown
    assert f"(see: `src/auth/middleware.py:1-2`) — from t-auth — {MARK}" in md
    assert "(see: `src/auth/tokens.py:1-2`)" in md and "src/auth/jwt.py" not in md
    # the whole file was named for the next task: it changed (a function added)
    assert "- `src/auth/tokens.py`: reuse verify() — ⚠ code changed since t-auth: src/auth/tokens.py" in md
    assert LEGACY not in md and "src/legacy.py" not in md
    retired = [e for e in jit.explain or () if e.reason.startswith("retired: file deleted: src/legacy.py")]
    assert [e.section for e in retired] == ["patterns"]
    # a file the history names that is not in the work tree (and never was: no anchor) is left out
    assert "src/planned.py" not in md
    assert [e.reason for e in jit.explain or () if e.id == "file:src/planned.py"] == [
        "retired: file not in the work tree: src/planned.py"]
    # the changed pattern ranks below the unchanged one it tied with
    patterns = [p.pattern for p in jit.patterns_to_follow]
    assert patterns.index("Verify JWT tokens with verify()") < patterns.index(
        "Wrap handlers with require_auth for JWT routes")
    assert svc.store.read_anchors() == sorted(svc.store.read_anchors(), key=lambda a: a.id)

    report = svc.sync()
    assert (report.anchors, report.changed, report.deleted, report.renamed) == (7, 2, 2, 3)
    moved = {(a.owner.split(":")[0], a.lines): a for a in svc.store.read_anchors() if a.renamed}
    assert {a.current_path for a in moved.values()} == {"src/auth/tokens.py"}
    # the cited lines 1-2 are intact; the file as a whole is not
    assert {k: a.status for k, a in moved.items()} == {
        ("t-auth", "1-2"): "unchanged", ("pattern", "1-2"): "unchanged", ("t-auth", None): "changed"}
    gone = [a for a in svc.store.read_anchors() if a.status == "deleted"]
    assert {(a.path, a.reason) for a in gone} == {("src/legacy.py", "file deleted: src/legacy.py")}
    assert all(a.changed_at for a in gone)
    assert svc.compute("t-next", record=False).markdown == md  # the same after the sync

    again = svc.sync()
    assert (again.hashed, again.written, again.renamed, again.newly_deleted) == (0, 0, 0, 0)


def test_the_file_changed_outside_the_cited_lines_is_unchanged(project: tuple[ContextService, Path]) -> None:
    svc, repo = project
    mw = repo / "src" / "auth" / "middleware.py"
    mw.write_text(mw.read_text() + "\n# more\n")
    assert MARK not in svc.compute("t-next", record=False).markdown
    report = svc.sync()
    assert (report.changed, report.hashed) == (0, 1)


def test_the_gather_reads_the_anchors_the_check_needs(project: tuple[ContextService, Path]) -> None:
    """A context's gather reads the anchors its just-in-time check needs, in
    its own read (no read of their own): those of the dependencies' tasks and
    of the knowledge with a location, the dependencies' and the tag hits'."""
    svc, _ = project
    svc.add_tasks([{"id": "t-audit", "name": "Audit JWT auth routes", "objective": "Audit JWT tokens on auth routes"},
                   {"id": "t-cache", "name": "Cache layer", "objective": "Add a cache"},
                   {"id": "t-later", "name": "Later work", "objective": "Tidy up", "depends_on": ["t-cache"]}])
    svc.ingest_handoff({"task_id": "t-cache", "summary": "Cached", "success": True,
                        "completed_at": "2026-03-02T10:00:00Z", "patterns_discovered": [
                            {"pattern": "Warm the cache at start", "applies_to": ["caching"],
                             "location": "src/app.py"}]}, source="c.yaml")
    tasks = svc.store.get_tasks(["t-next", "t-audit", "t-later"])
    found = {t.id: svc.gather(t, svc.signals_for(t)) for t in tasks}
    for got in found.values():
        assert list(got.anchors) == svc.store.read_anchors(got.anchor_owners(), [])
    assert len(found["t-next"].anchors) == 7  # the handoff's 4 and its patterns' 3
    # a dependency's pattern that no tag finds
    assert not found["t-later"].keyword_hits and not found["t-later"].domain_hits
    assert [(a.owner.split(":")[0], a.path) for a in found["t-later"].anchors] == [("pattern", "src/app.py")]
    # no dependency: the patterns found by their tags alone
    assert not found["t-audit"].dependencies and found["t-audit"].keyword_hits
    assert {(a.owner.split(":")[0], a.path) for a in found["t-audit"].anchors} == {
        ("pattern", "src/auth/middleware.py"), ("pattern", "src/legacy.py"), ("pattern", "src/auth/jwt.py")}
    svc.check_anchors = False
    assert svc.gather(tasks[0], svc.signals_for(tasks[0])).anchors == ()


def test_sync_needs_a_root(svc: ContextService) -> None:
    with pytest.raises(NoRootError, match="no project root"):
        svc.sync()


def test_a_root_holding_few_of_the_candidate_files_is_another_projects(svc: ContextService,
                                                                       tmp_path: Path) -> None:
    """A Neo4j store read from an unrelated checkout: the checkout shares a
    README.md with the project and nothing else, and is not taken for the
    project's work tree (its files are not left out as gone); a tree holding a
    tenth of them is, and what it lacks is left out."""
    names = [f"pkg/mod_{i:02d}.py" for i in range(12)]
    svc.memory = False
    svc.add_tasks([{"id": "t-mods", "name": "Split the parser into modules", "objective": "Parser modules"},
                   {"id": "t-use", "name": "Use the parser modules", "objective": "Parser modules",
                    "depends_on": ["t-mods"]}])
    svc.ingest_handoff({"task_id": "t-mods", "summary": "Split the parser", "completed_at": "2026-03-01T10:00:00Z",
                        "files_created": [{"path": p, "purpose": "a parser module"} for p in ["README.md", *names]]},
                       source="h.yaml")

    def shown(tree: list[str]) -> list[str]:
        root = tmp_path / f"tree{len(tree)}"
        for name in tree:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("x = 1\n", encoding="utf-8")
        svc.root = ProjectRoot(root.resolve(), "--root")
        md = svc.compute("t-use", record=False).markdown
        return [p for p in names if p in md]

    assert len(shown(["README.md"])) >= 10  # 1 of 13: another project's tree, nothing left out
    assert shown(["README.md", names[0]]) == [names[0]]  # 2 of 13: this project's, the rest gone


def test_links_out_of_the_root_get_no_anchor(project: tuple[ContextService, Path], tmp_path: Path) -> None:
    """A handoff naming ``passwd.txt`` (a link to a file outside the root) or
    ``homedir/.bashrc`` (``homedir`` a link to a folder outside): no anchor,
    nothing of the outside files stored; a file that becomes such a link
    after it was anchored is gone, just in time and after a sync."""
    svc, repo = project
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("export TOKEN=sk-live-1\n")
    (repo / "passwd.txt").symlink_to("/etc/passwd")
    (repo / "homedir").symlink_to(home)
    svc.add_tasks([{"id": "t-links", "name": "Links", "objective": "Read the links"}])
    svc.ingest_handoff({"task_id": "t-links", "summary": "Named links", "completed_at": "2026-03-02T10:00:00Z",
                        "files_modified": [{"path": "passwd.txt", "lines": "1", "purpose": "users"},
                                           {"path": "homedir/.bashrc", "purpose": "shell"},
                                           {"path": "src/app.py", "purpose": "app"}]}, source="links.yaml")
    anchors = svc.store.read_anchors(["t-links"], [])
    assert [a.path for a in anchors] == ["src/app.py"]
    outside = {blob_id(Path("/etc/passwd").read_bytes()), blob_id((home / ".bashrc").read_bytes())}
    assert not outside & {a.blob for a in svc.store.read_anchors()}

    (repo / "src" / "app.py").unlink()
    (repo / "src" / "app.py").symlink_to(home / ".bashrc")
    assert "`src/app.py`" not in svc.compute("t-next", record=False).markdown
    svc.sync()
    gone = {a.reason for a in svc.store.read_anchors() if a.path == "src/app.py"}
    assert gone == {"file not in the work tree: src/app.py"}


def test_a_file_name_that_is_not_utf8_breaks_nothing(project: tuple[ContextService, Path]) -> None:
    """``caf%E9.py`` committed and then changed, beside an anchored file
    deleted (git's rename detection runs, and lists it), then an anchored
    file renamed to such a name: contexts and syncs go on, the new name is
    kept escaped and found again."""
    svc, repo = project
    odd = os.fsdecode(b"caf\xe9.py")
    (repo / odd).write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "odd name")
    (repo / odd).write_text("x = 2\n")
    (repo / "src" / "legacy.py").unlink()
    assert LEGACY not in svc.compute("t-next", record=False).markdown
    assert svc.sync().newly_deleted == 2
    git(repo, "mv", "src/app.py", os.fsdecode(b"src/\xff-app.py"))
    git(repo, "commit", "-q", "-am", "rename")
    assert svc.sync().renamed == 1
    (moved,) = [a for a in svc.store.read_anchors() if a.path == "src/app.py"]
    assert (moved.current_path, moved.status) == ("src/%FF-app.py", "unchanged")
    assert "`src/%FF-app.py`" in svc.compute("t-next", record=False).markdown
    assert svc.sync().hashed == 0  # found again by its escaped name: its stat as seen


def test_a_file_too_big_to_read_is_anchored_by_its_stat(project: tuple[ContextService, Path]) -> None:
    svc, repo = project
    with open(repo / "dump.sql", "wb") as f:
        f.truncate(2 * 1024**3)  # sparse: no disk used
    svc.add_tasks([{"id": "t-dump", "name": "Dump", "objective": "Dump the tables"}])
    svc.ingest_handoff({"task_id": "t-dump", "summary": "Dumped", "completed_at": "2026-03-02T10:00:00Z",
                        "files_created": [{"path": "dump.sql", "lines": "1-3", "purpose": "the dump"}]},
                       source="dump.yaml")
    (a,) = svc.store.read_anchors(["t-dump"], [])
    assert (a.blob, a.lines_hash, a.size) == (NOT_READ, None, 2 * 1024**3)
    os.utime(repo / "dump.sql", ns=(a.mtime_ns, a.mtime_ns + 10))
    report = svc.sync()
    assert (report.hashed, report.newly_changed) == (0, 1)
