"""The git history import on both stores (issue 44; docs/history.md): a real
repository made here becomes finished tasks through the bulk path, which
leaves the graph the ingest path leaves; a run again changes nothing; new
commits, renames, amends, rebases and resets between runs end where a clean
import of the final history ends; two imports side by side write each commit
once; a time limit stops cleanly and the next run goes on."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ctxgraph.core.models import ImportBatch, Task
from ctxgraph.errors import InvalidArgumentError
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.service.history import HistoryOptions, HistoryReport
from ctxgraph.service.root import ProjectRoot
from ctxgraph.signals import SignalExtractor
from ctxgraph.sources.git_log import read_log
from ctxgraph.sources.history import entries, task_id
from tests._history_repo import BODY, commit, git, move, project
from tests._reads import history_of

NOW = datetime(2024, 6, 1, tzinfo=UTC)
QUERY = Task(id="q-1", name="Token expiry in the jwt parser", objective="Fix the jwt token expiry check in sessions")


def run(svc: ContextService, repo: Path, **options: Any) -> HistoryReport:
    return svc.import_history(repo, HistoryOptions(**options))


def snapshot(svc: ContextService, repo: Path) -> dict[str, Any]:
    """What a clean import must match: the finished tasks, their files, the
    history's evidence for a few terms, and a context computed in the work
    tree as ``ctxgraph context`` computes it there (a file that only retired or
    moved-away history names is no longer in the tree: left out). The files
    without history are left out of the evidence: such a file stays in the
    graph (docs/history.md)."""
    tasks = {t.id: t.status.value for t in svc.list_tasks()}
    done = sorted(i for i, s in tasks.items() if s == "completed")
    svc.root = ProjectRoot(repo.resolve(), "--root")
    evidence = history_of(svc.store, ["token", "session", "jwt", "cookie"], top_files=20)
    return {"completed": done, "files": svc.store.handoff_files(done),
            "context": svc.compute(QUERY, now=NOW, record=False, memory=False).markdown,
            "history": evidence.model_copy(update={"files": tuple(f for f in evidence.files if f.touches)})}


def clean(svc: ContextService, repo: Path) -> dict[str, Any]:
    """The snapshot of a clean import of ``repo`` into the same (emptied) store."""
    svc.store.clear()
    run(svc, repo)
    return snapshot(svc, repo)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    project(tmp_path / "repo")
    return tmp_path / "repo"


def test_a_project_is_imported_and_again_changes_nothing(svc: ContextService, repo: Path) -> None:
    first = run(svc, repo)
    assert (first.mode, first.read, first.imported) == ("full", 9, 6)
    assert first.skipped == {"release": 1, "no-files": 1, "revert": 1}
    assert first.files_dropped == {"lock": 2} and first.signals == 6 and not first.partial
    assert [r["subject"] for r in first.reverts] == ['Revert "Use the new cache"']
    tasks = {t.id: t for t in svc.list_tasks()}
    assert len(tasks) == 6 and all(t.status.value == "completed" and t.signals is not None for t in tasks.values())
    head = git(repo, "rev-parse", "HEAD")
    assert svc.store.handoff_files([task_id(head)]) == {task_id(head): ["src/auth/jwt.py"]}
    rows = list(svc.store.export_rows())
    again = run(svc, repo)
    assert (again.mode, again.read, again.imported) == ("up to date", 0, 0)
    assert list(svc.store.export_rows()) == rows


def test_the_bulk_path_leaves_what_ingest_leaves(svc: ContextService, repo: Path) -> None:
    run(svc, repo)
    [revert] = svc.store.imported_files("reverts")  # a gotcha of its own, not a task's: left out here
    svc.store.write_import("reverts", ImportBatch(removed=revert.items, gone=(revert.path,)))
    imported = [_without_created(r) for r in svc.store.export_rows()]
    evidence = history_of(svc.store, ["token", "session", "cookie"], top_files=20)
    svc.store.clear()
    kept = [e for e in entries(read_log(repo, ["HEAD"])) if e.task is not None]
    svc.add_tasks([e.task for e in kept if e.task is not None])
    svc.ingest_handoffs([(e.task_id, e.handoff) for e in kept if e.handoff is not None])
    assert [_without_created(r) for r in svc.store.export_rows()] == imported
    assert history_of(svc.store, ["token", "session", "cookie"], top_files=20) == evidence


def _without_created(row: dict[str, Any]) -> dict[str, Any]:
    if row.get("label") == "Task":  # add_tasks stamps a new task with the time it was added
        return {**row, "props": {k: v for k, v in row["props"].items() if k != "created_at"}}
    return row


def test_new_commits_are_read_alone(svc: ContextService, repo: Path) -> None:
    run(svc, repo)
    commit(repo, "Add refresh tokens", {"src/auth/refresh.py": "R = 1\n"}, date=900)
    report = run(svc, repo)
    assert (report.mode, report.read, report.imported, report.signals) == ("new commits", 1, 1, 1)
    assert snapshot(svc, repo) == clean(svc, repo)


def test_a_rename_moves_the_files_older_tasks_name(svc: ContextService, repo: Path) -> None:
    run(svc, repo)
    move(repo, "src/auth/session.py", "src/web/session.py", "Move sessions to web", date=900)
    report = run(svc, repo)
    assert report.mode == "full" and report.imported == 1 and report.updated == 2
    files = svc.store.handoff_files([t.id for t in svc.list_tasks()])
    assert not any("src/auth/session.py" in paths for paths in files.values())
    assert snapshot(svc, repo) == clean(svc, repo)


def test_an_amend_retires_the_old_commit(svc: ContextService, repo: Path) -> None:
    run(svc, repo)
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "commit", "-q", "--amend", "-m", "Rename the token module to jwt", date=950)
    report = run(svc, repo)
    assert (report.mode, report.retired, report.imported) == ("full", 1, 1)
    assert svc.get_task(task_id(head)).status.value == "retired"
    assert snapshot(svc, repo) == clean(svc, repo)


def test_a_rebase_ends_as_a_clean_import(svc: ContextService, repo: Path) -> None:
    run(svc, repo)
    # the last four commits written again on a base with a commit of its own
    git(repo, "checkout", "-q", "-b", "other", "HEAD~4")
    commit(repo, "Document the middleware", {"docs/middleware.md": "# middleware\n"}, date=960)
    git(repo, "rebase", "-q", "other", "main", date=970)
    report = run(svc, repo)
    assert (report.retired, report.imported) == (3, 4)
    assert snapshot(svc, repo) == clean(svc, repo)


def test_a_reset_away_and_back_retires_and_brings_back(svc: ContextService, repo: Path) -> None:
    run(svc, repo)
    tip = git(repo, "rev-parse", "HEAD")
    git(repo, "reset", "-q", "--hard", "HEAD~4")
    away = run(svc, repo)
    assert (away.mode, away.retired, away.read, away.imported) == ("full", 3, 5, 0)
    assert snapshot(svc, repo) == clean(svc, repo)
    run(svc, repo)
    git(repo, "reset", "-q", "--hard", tip)
    back = run(svc, repo)  # (a rename among the commits back: every commit read again)
    assert (back.mode, back.revived, back.imported) == ("full", 0, 3)
    git(repo, "reset", "-q", "--hard", "HEAD~4")
    run(svc, repo)
    git(repo, "reset", "-q", "--hard", tip)
    again = run(svc, repo)  # (the two tasks naming tokens.py named it at HEAD~4: jwt.py again)
    assert (again.mode, again.revived, again.imported, again.unchanged, again.updated) == ("full", 3, 0, 4, 2)
    assert len(svc.list_tasks()) == 6
    assert snapshot(svc, repo) == clean(svc, repo)


def test_a_time_limit_stops_cleanly_and_the_next_run_goes_on(svc: ContextService, repo: Path) -> None:
    first = run(svc, repo, time_limit=0.001, batch_size=2)
    assert first.stopped == "time limit" and first.imported == 2 and first.signals == 0
    assert svc.store.history_source("git") is None
    rest = run(svc, repo)
    assert (rest.mode, rest.imported, rest.unchanged, rest.signals) == ("full", 4, 2, 6)
    assert snapshot(svc, repo) == clean(svc, repo)


def test_a_repository_without_commits_has_nothing_to_import(svc: ContextService, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    git(empty.parent, "init", "-q", str(empty))
    report = run(svc, empty)
    assert (report.mode, report.read, report.head) == ("no commits", 0, "")
    assert svc.list_tasks() == []


def test_max_commits_reads_the_newest(svc: ContextService, repo: Path) -> None:
    report = run(svc, repo, max_commits=3)
    assert (report.read, report.imported, report.stopped) == (3, 2, "max commits")
    assert run(svc, repo).mode == "full"


def test_a_task_trailer_joins_its_task(svc: ContextService, repo: Path) -> None:
    svc.add_task({"id": "task-043", "name": "Add JWT refresh", "status": "in_progress"})
    sha = commit(repo, "Refresh tokens\n\nTask: task-043", {"src/auth/refresh.py": "R = 1\n"}, date=900)
    commit(repo, "Unknown task\n\nTask: task-999", {"src/auth/other.py": "O = 1\n"}, date=910)
    report = run(svc, repo)
    assert report.joined == 1 and report.imported == 7
    task = svc.get_task("task-043")
    assert task.status.value == "completed" and task.outcome_summary == "Refresh tokens"
    assert svc.store.handoff_files(["task-043"]) == {"task-043": ["src/auth/refresh.py"]}
    assert svc.store.get_task(task_id(sha)) is None
    assert run(svc, repo).mode == "up to date"
    assert svc.explain_commit(sha, repo).joins == "task-043"


def test_explain_says_what_became_of_a_commit(svc: ContextService, repo: Path) -> None:
    shas = project_shas(repo)
    run(svc, repo)
    kept = svc.explain_commit(shas[2], repo)
    assert kept.stored == "completed" and kept.verdict.startswith(f"{shas[2][:10]} is imported as c-")
    release = svc.explain_commit(shas[3], repo)
    assert release.rule == "release" and "'release'" in release.verdict
    assert svc.explain_commit(shas[5], repo).dropped == [{"path": "uv.lock", "rule": "lock"}]
    git(repo, "commit", "-q", "--amend", "-m", "Renamed", date=990)
    run(svc, repo)
    assert "now retired" in svc.explain_commit(shas[-1], repo).verdict


def project_shas(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%H", "--reverse").split()


def _store_beside(store: KnowledgeStore, tmp_path: Path, neo4j_settings: Callable[[], Any]) -> KnowledgeStore:
    """A second connection to the same store (another writer)."""
    if isinstance(store, LocalStore):
        return LocalStore.open(store.path)
    from ctxgraph.graph.neo4j_store import Neo4jStore

    return Neo4jStore.connect(neo4j_settings())


def test_two_imports_side_by_side_write_each_commit_once(
        store: KnowledgeStore, extractor: SignalExtractor, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    repo = tmp_path / "repo"
    project(repo)
    for i in range(40):  # enough batches of two for the runs to interleave
        commit(repo, f"Feature {i}", {f"src/feature_{i}.py": BODY}, date=1000 + i)
    other = _store_beside(store, tmp_path, lambda: request.getfixturevalue("neo4j_settings"))
    reports: list[HistoryReport] = []
    errors: list[BaseException] = []

    def one(target: KnowledgeStore) -> None:
        try:
            reports.append(ContextService(target, extractor).import_history(repo, HistoryOptions(batch_size=2)))
        except BaseException as exc:  # (re-raised below, in the test's thread)
            errors.append(exc)

    try:
        threads = [threading.Thread(target=one, args=(s,)) for s in (store, other)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        other.close()
    assert errors == []
    assert sum(r.imported for r in reports) == 46
    svc = ContextService(store, extractor)
    assert snapshot(svc, repo) == clean(svc, repo)


@pytest.fixture
def both(neo4j_store: KnowledgeStore, tmp_path: Path, extractor: SignalExtractor) -> Iterator[list[ContextService]]:
    neo4j_store.clear()
    local = LocalStore.open(tmp_path / "graph.db")
    try:
        yield [ContextService(local, extractor), ContextService(neo4j_store, extractor)]
    finally:
        local.close()
        neo4j_store.clear()


def test_both_stores_import_the_same_graph(both: list[ContextService], repo: Path) -> None:
    move(repo, "src/auth/session.py", "src/web/session.py", "Move sessions to web", date=900)
    for svc in both:
        run(svc, repo)
    a, b = both
    assert list(a.store.export_rows()) == list(b.store.export_rows())
    assert snapshot(a, repo) == snapshot(b, repo)
    git(repo, "commit", "-q", "--amend", "-m", "Moved", date=990)
    for svc in both:
        run(svc, repo)
    assert snapshot(a, repo) == snapshot(b, repo)


def test_a_bulk_write_with_signals_is_upsert_then_apply(svc: ContextService, repo: Path) -> None:
    kept = [e for e in entries(read_log(repo, ["HEAD"])) if e.task is not None and e.handoff is not None]
    tasks = [e.task.model_copy(update={"signals": svc.signals_for(e.task)}) for e in kept if e.task is not None]
    records = [svc._commit_record(e.handoff, f"handoff:{e.task_id}") for e in kept if e.handoff is not None]
    assert svc.store.import_history(tasks, records) == [True] * len(tasks)
    assert svc.store.import_history(tasks[:2], records[:2]) == [False, False]
    bulk = list(svc.store.export_rows())
    evidence = history_of(svc.store, ["token", "session", "cookie"], top_files=20)
    svc.store.clear()
    svc.store.upsert_tasks(tasks)
    svc.store.apply_handoffs(records)
    assert list(svc.store.export_rows()) == bulk
    assert history_of(svc.store, ["token", "session", "cookie"], top_files=20) == evidence


def test_the_embedded_bulk_write_keeps_its_triggers(tmp_path: Path, extractor: SignalExtractor, repo: Path) -> None:
    # the generation's row triggers are dropped for a bulk write and made again in
    # its transaction: afterwards a write bumps the generation as before
    import sqlite3

    store = LocalStore.open(tmp_path / "graph.db")
    try:
        def triggers() -> list[str]:
            with sqlite3.connect(store.path) as conn:
                return sorted(r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'"))

        before = triggers()
        svc = ContextService(store, extractor)
        run(svc, repo)
        assert triggers() == before
        with sqlite3.connect(store.path) as conn:
            generation = conn.execute("SELECT value FROM meta WHERE key = 'graph_generation'").fetchone()[0]
        svc.add_task({"id": "t-new", "name": "A task after the import"})
        with sqlite3.connect(store.path) as conn:
            assert conn.execute("SELECT value FROM meta WHERE key = 'graph_generation'").fetchone()[0] != generation
    finally:
        store.close()


def test_the_embedded_bulk_write_keeps_the_counts(tmp_path: Path, extractor: SignalExtractor, repo: Path) -> None:
    # the bulk write adds to the kept counts (labels, tag degrees) what the row
    # triggers it drops would have: they are the counts of the graph it leaves
    import sqlite3

    store = LocalStore.open(tmp_path / "graph.db")
    try:
        svc = ContextService(store, extractor)
        svc.add_task({"id": "t-before", "name": "Refresh the jwt session token"})
        kept = [e for e in entries(read_log(repo, ["HEAD"])) if e.task is not None and e.handoff is not None]
        tasks = [e.task.model_copy(update={"signals": svc.signals_for(e.task)}) for e in kept if e.task is not None]
        records = [svc._commit_record(e.handoff, f"handoff:{e.task_id}") for e in kept if e.handoff is not None]
        assert store.import_history(tasks[:3], records[:3]) == [True] * 3
        assert store.import_history(tasks, records) == [False] * 3 + [True] * (len(tasks) - 3)
        with sqlite3.connect(store.path) as conn:
            labels = dict(conn.execute("SELECT label, n FROM label_counts WHERE n > 0").fetchall())
            assert labels == dict(conn.execute("SELECT label, count(*) FROM nodes GROUP BY label").fetchall())
            degrees = dict(conn.execute("SELECT tag, n FROM tag_degrees WHERE n > 0").fetchall())
            assert degrees and degrees == dict(conn.execute(
                "SELECT dst_id, count(*) FROM edges WHERE type = 'TAGGED' GROUP BY dst_id").fetchall())
    finally:
        store.close()


def test_folders_keep_their_files_alone_and_changing_them_ends_as_a_clean_import(
        svc: ContextService, repo: Path) -> None:
    only = run(svc, repo, paths=("src/auth",))
    assert only.paths == ["src/auth/"]
    assert only.skipped["outside-paths"] == 1  # "Use the new cache": src/cache.py alone
    assert only.files_dropped["outside-paths"] == 2  # the first commit's README.md, and src/cache.py
    done = [t.id for t in svc.list_tasks() if t.status.value == "completed"]
    files = svc.store.handoff_files(done)
    assert len(done) == 5 and all(p.startswith("src/auth/") for paths in files.values() for p in paths)
    assert run(svc, repo).mode == "up to date"  # no folders given: the last import's
    kept = snapshot(svc, repo)
    whole = run(svc, repo, paths=())
    assert (whole.mode, whole.paths, whole.imported, whole.updated) == ("full", [], 1, 1)
    assert snapshot(svc, repo) == clean(svc, repo)
    back = run(svc, repo, paths=("./src/auth/",))
    assert (back.retired, back.revived, back.updated) == (1, 0, 1)
    assert snapshot(svc, repo)["completed"] == kept["completed"]
    svc.store.clear()
    run(svc, repo, paths=("src/auth",))
    assert snapshot(svc, repo) == kept


def test_a_folder_outside_the_repository_is_refused(svc: ContextService, repo: Path) -> None:
    for bad in ("/etc", "../other", ".", ""):
        with pytest.raises(InvalidArgumentError, match="not a folder inside the repository"):
            run(svc, repo, paths=(bad,))


def test_a_revert_becomes_a_gotcha_and_leaves_with_its_commit(svc: ContextService, repo: Path) -> None:
    shas = git(repo, "log", "--format=%H", "--reverse").split()
    first = run(svc, repo)
    assert (first.gotchas, first.gotchas_removed) == (1, 0)
    [state] = svc.store.imported_files("reverts")
    [item] = svc.store.get_knowledge(list(state.items))
    assert state.path == shas[7] and item.kind == "gotcha" and item.scope == "global"  # it deleted its one file
    assert item.summary == f'Reverted: "Use the new cache" ({task_id(shas[6])}, reverted by {task_id(shas[7])})'
    cache = Task(id="q-2", name="Cache the parsed tokens", objective="Add a cache in front of the token parser")
    shown = svc.compute(cache, now=NOW, record=False, memory=False)
    assert [w.issue for w in shown.warnings] == [item.summary]
    assert run(svc, repo).gotchas == 0  # up to date: nothing written
    # a revert with a reason, about a file still there
    commit(repo, "Parse tokens strictly", {"src/auth/jwt.py": "STRICT = True\n" + BODY}, date=900)
    git(repo, "revert", "--no-edit", "HEAD", date=950)
    git(repo, "commit", "-q", "--amend", "-m",
        f'Revert "Parse tokens strictly"\n\nThis reverts commit {git(repo, "rev-parse", "HEAD~1")}.\n\n'
        "Strict parsing refused the tokens of older clients.", date=960)
    later = run(svc, repo)
    assert (later.mode, later.gotchas) == ("new commits", 1)
    strict = next(k for k in svc.store.get_knowledge([i for f in svc.store.imported_files("reverts") for i in f.items])
                  if "strictly" in k.summary)
    assert strict.summary.endswith("): Strict parsing refused the tokens of older clients.")
    assert (strict.scope, strict.location) == ("path", "src/auth/jwt.py")
    git(repo, "reset", "-q", "--hard", "HEAD~2")
    away = run(svc, repo)
    assert (away.mode, away.gotchas_removed) == ("full", 1)
    assert len(svc.store.imported_files("reverts")) == 1
    assert snapshot(svc, repo) == clean(svc, repo)
