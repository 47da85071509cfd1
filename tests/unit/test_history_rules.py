"""The history import's noise rules (ctxgraph/sources/history_rules.py) and
the documents a kept commit becomes, checked against what the ingest path
and the models make of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgraph.core.models import HandoffDoc, Task
from ctxgraph.errors import ConfigurationError, InvalidArgumentError
from ctxgraph.service import ContextService
from ctxgraph.service.history_types import folder, folders
from ctxgraph.sources.git_log import Change, Commit
from ctxgraph.sources.history import commit_handoff, commit_task
from ctxgraph.sources.history_rules import (
    MASS_CHANGE,
    MASS_CHANGE_IN_PATHS,
    RULES,
    commit_rule,
    file_rule,
    in_paths,
    judge,
    under,
)

A_FILE = [Change("M", "src/app.py")]


@pytest.mark.parametrize(("path", "rule"), [
    ("poetry.lock", "lock"), ("web/package-lock.json", "lock"), ("requirements/dev.txt", "lock"),
    ("go.sum", "lock"), ("uv.lock", "lock"),
    ("src/vendor/lib.js", "vendored"), ("pkg/_vendor/six.py", "vendored"), ("third_party/x/y.c", "vendored"),
    ("node_modules/a/index.js", "vendored"),
    ("static/app.min.js", "generated"), ("proto/api_pb2.py", "generated"), ("docs/_build/html/index.html",
                                                                             "generated"),
    ("src/pkg.egg-info/PKG-INFO", "generated"), ("pkg/__pycache__/m.cpython-311.pyc", "generated"),
    ("src/app.py", None), ("requirements.txt", None), ("docs/vendoring.md", None), ("src/builder.py", None),
])
def test_file_rules(path: str, rule: str | None) -> None:
    assert file_rule(path) == rule


@pytest.mark.parametrize("subject", [
    "Release 1.2.3", "release version 2.3.3", "v1.2.3", "2.0.0rc2", "Bump version", "version bump",
    "Bump version number to 0.12.4.dev", "start version 3.1.2", "Bump to dev version", "Prepare 0.9.4",
    "Prepare changelog for next release", "Version 4.1", "Released 0.9.6", "bump", "Back to development",
])
def test_release_subjects(subject: str) -> None:
    assert commit_rule(subject, subject, A_FILE) == "release"


def test_a_release_that_changes_a_version_file_is_a_task() -> None:
    # the precedent of the next release, which changes the same file
    bump = [Change("M", "HISTORY.md"), Change("M", "requests/__version__.py")]
    assert commit_rule("v2.22.0", "v2.22.0", bump) is None
    assert commit_rule("Bump version", "Bump version", [Change("M", "VERSION")]) is None
    # no version file: a release's __init__.py may hold anything
    assert commit_rule("Release 1.2.3", "", [Change("M", "CHANGES.rst"), Change("M", "src/pkg/__init__.py")]) == \
        "release"
    # the same files under another subject: only the changelog and a version
    assert commit_rule("Note", "", bump) == "changelog-only"
    many = [Change("M", "src/_version.py"), *(Change("M", f"src/m{i}.py") for i in range(MASS_CHANGE))]
    assert commit_rule("Release 1.2.3", "", many) == "mass-change"


@pytest.mark.parametrize("subject", [
    "Bump pytest from 6.2.4 to 6.2.5", "Bump the github-actions group with 2 updates",
    "[pre-commit.ci] pre-commit autoupdate", "build(deps): bump urllib3", "Update dependencies",
])
def test_dependency_subjects(subject: str) -> None:
    assert commit_rule(subject, subject, A_FILE) == "dependency-bump"


@pytest.mark.parametrize("subject", [
    "Fix version detection for bash", "Backported the fix from the development version.",
    "Begin dev section of README", "Add release notes for 2.6.2 of the parser", "Revert changes to params",
    "Reverted GET example back to GitHub", "update pypy test version",
])
def test_ordinary_subjects_are_tasks(subject: str) -> None:
    assert commit_rule(subject, subject, A_FILE) is None


def test_reverts() -> None:
    assert commit_rule('Revert "Add cache"', 'Revert "Add cache"\n\nThis reverts commit abcdef1.', A_FILE) == "revert"
    assert commit_rule("Use pytz again", "Use pytz again\n\nThis reverts commit abcdef1234.", A_FILE) == "revert"
    assert commit_rule("revert(assets): keep them", "revert(assets): keep them", A_FILE) == "revert"
    # a squashed pull request whose list names a revert is no revert
    squashed = "Update data (#3781)\n\n* update data\n\n* Revert \"update data\"\n\nThis reverts commit abcdef1."
    assert commit_rule("Update data (#3781)", squashed, A_FILE) is None
    found = judge(Commit(id="a" * 40, parents=(), date="", message='Revert "x"\n\nThis reverts commit ABCDEF12.',
                         changes=tuple(A_FILE)))
    assert found.rule == "revert" and found.reverts == "abcdef12"


def test_file_count_rules() -> None:
    many = [Change("M", f"src/m{i}.py") for i in range(MASS_CHANGE + 1)]
    assert commit_rule("Reformat with black", "", many) == "mass-change"
    assert commit_rule("Reformat with black", "", many[:MASS_CHANGE]) is None
    assert commit_rule("Note", "", [Change("M", "CHANGES.rst"), Change("M", "src/pkg/__about__.py")]) == \
        "changelog-only"
    assert commit_rule("Note", "", []) == "no-files"
    locked = judge(Commit(id="a" * 40, parents=(), date="", message="Pin",
                          changes=(Change("M", "poetry.lock"),)))
    assert locked.rule == "no-files" and locked.dropped == (("poetry.lock", "lock"),)
    assert set(RULES) >= {"lock", "vendored", "generated", "revert", "release", "dependency-bump",
                          "changelog-only", "mass-change", "no-files"}


def test_folders_keep_their_files_and_skip_a_commit_left_with_none() -> None:
    changes = (Change("M", "src/pkg/a.py"), Change("M", "tests/test_a.py"), Change("M", "poetry.lock"))
    verdict = judge(Commit(id="a" * 40, parents=(), date="", message="Fix a", changes=changes))
    files = tuple((c.status, c.path) for c in verdict.kept)
    kept, inside = in_paths(verdict, files, ("src/pkg/",))
    assert inside == (("M", "src/pkg/a.py"),) and kept.rule is None
    assert [c.path for c in kept.kept] == ["src/pkg/a.py"]
    assert kept.dropped == (("poetry.lock", "lock"), ("tests/test_a.py", "outside-paths"))
    none, left = in_paths(verdict, files, ("docs/",))
    assert none.rule == "outside-paths" and left == ()
    assert in_paths(verdict, files, ("src/", "tests/")) == (verdict, files)
    assert not under("src/pkgs/b.py", ("src/pkg/",))


def test_with_folders_a_commit_is_a_mass_change_by_its_files_under_them() -> None:
    """Tests, docs and the changelog do not count: a commit of 8 package files
    and 30 others is a task; one of 9 package files is a mass change."""
    others = tuple(Change("M", f"tests/test_{i}.py") for i in range(30))
    for n, rule in ((MASS_CHANGE_IN_PATHS, None), (MASS_CHANGE_IN_PATHS + 1, "mass-change")):
        changes = (*(Change("M", f"src/pkg/m{i}.py") for i in range(n)), *others)
        verdict = judge(Commit(id="b" * 40, parents=(), date="", message="Refactor", changes=changes))
        assert verdict.rule is None  # 38-39 files in all: under MASS_CHANGE
        kept, inside = in_paths(verdict, tuple((c.status, c.path) for c in verdict.kept), ("src/pkg/",))
        assert (kept.rule, len(inside)) == (rule, n)
    assert MASS_CHANGE_IN_PATHS < MASS_CHANGE


def test_folders_are_relative_to_the_top() -> None:
    assert folders(("src/pkg", "./src/pkg/", "docs\\api")) == ("docs/api/", "src/pkg/")
    for bad in ("/abs", "a/../../b", ".", ""):
        with pytest.raises(InvalidArgumentError):
            folder(bad)


def test_the_settings_name_the_folders(tmp_path: Path) -> None:
    from ctxgraph.settings import HistorySettings, load_settings

    assert load_settings(start=tmp_path).history == HistorySettings()
    (tmp_path / "ctxgraph.toml").write_text('[history]\npaths = ["src/pkg"]\n')
    assert load_settings(start=tmp_path).history == HistorySettings(paths=("src/pkg",))
    for bad in ('paths = "src"', "paths = [1]", "folders = []"):
        (tmp_path / "ctxgraph.toml").write_text(f"[history]\n{bad}\n")
        with pytest.raises(ConfigurationError, match=r"ctxgraph\.toml: (\[history\]|history\.)"):
            load_settings(start=tmp_path)


def _sample() -> tuple[Commit, dict[str, object]]:
    found = Commit(id="b" * 40, parents=("c" * 40,), date="2024-03-01T10:00:00Z",
                   message="Add JWT login  \n\nVerify tokens.\n",
                   changes=(Change("A", "src/auth/jwt.py"), Change("M", "src/app.py"), Change("D", "old.py")))
    files = [(c.status, c.path) for c in found.changes]
    return found, commit_handoff(found, "Add JWT login", files, "c-bbbbbbbbbb")


def test_the_task_is_what_the_model_validates() -> None:
    found, _ = _sample()
    built = commit_task(found, found.message)
    assert built == Task.model_validate(built.model_dump())
    assert built.text == "Add JWT login\nAdd JWT login\n\nVerify tokens."


def test_the_record_is_the_one_ingest_makes(svc_free: ContextService) -> None:
    _, handoff = _sample()
    fast = svc_free._commit_record(dict(handoff), "handoff:c-bbbbbbbbbb")
    slow = svc_free._handoff_record(HandoffDoc.model_validate(handoff), handoff, [], [], {})
    assert fast == slow
    assert [link.rel for link in fast.links] == ["CREATED", "MODIFIED"]
    assert "old.py" not in [f.path for f in fast.files]


@pytest.fixture
def svc_free() -> ContextService:
    from ctxgraph.graph.store import UnavailableStore

    return ContextService(UnavailableStore("nowhere", "no store in this test"))


def test_the_bulk_rows_are_the_finished_properties() -> None:
    # history_rows builds in one go what finished_task_props gives a task and its handoff
    from ctxgraph.core.models import Task
    from ctxgraph.graph.records import HandoffRecord, finished_task_props, history_rows, task_tags
    from ctxgraph.signals import TaskSignals

    tasks = [Task(id="c-1", name="Fix the parser", objective="Fix the parser\n\nIt broke on tabs", type="change"),
             Task(id="c-2", name="Cache tokens", acceptance_criteria=("fast",), status="blocked",
                  blocked_reason="waiting", blocked_at="2024-01-01T00:00:00Z", created_at="2024-01-01T00:00:00Z",
                  signals=TaskSignals(keywords=("cache",), domains=("auth",), files_mentioned=("a.py",),
                                      task_types=("feature",)))]
    records = [HandoffRecord(id=f"handoff:{t.id}", task_id=t.id, summary=f"done {t.id}", success=t.id == "c-1",
                             completed_at="2024-02-01T00:00:00Z", raw="{}", content_hash="x") for t in tasks]
    assert history_rows(tasks, records) == [
        {"props": finished_task_props(t, r), "tags": task_tags(t), "handoff": r.props()}
        for t, r in zip(tasks, records, strict=True)]
