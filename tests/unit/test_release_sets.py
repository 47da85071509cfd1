"""The sets built from released packages (benchmarks/release_sets.py, issue 32)
on a tiny made-up pair of releases, no network: changelogs read, entries
mapped to the files defining what they name, the set's rows in the format
``ctxgraph eval`` reads, and the freshness measurement over a git commit
that renames and deletes files the history names."""

from __future__ import annotations

import io
import tarfile
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from benchmarks.release_derive import Release, SymbolIndex, build_rows, clean, parse_changelog, references
from benchmarks.release_eval import run
from benchmarks.release_sets import read_sdist, write_set
from ctxgraph.evaluation.dataset import load_set
from ctxgraph.evaluation.source import release_of

PREFIX, PACKAGE = "src/toy/", "toy"

OLD_LOG = """\
Changelog
=========

Version 1.1
-----------

Released 2020-02-01

-   Fix ``Engine.stop`` leaking threads. :issue:`12`
-   ``parse_tokens`` accepts bytes.
    It decodes them first. :pr:`13`

    -   and strings with a BOM

Version 1.0
-----------

Released 2020-01-01

Features

-   Add ``old_helper`` for legacy callers.
-   Add :meth:`toy.engine.Engine.run`.
-   Drop Python 2.
"""

NEW_LOG = """\
# Changelog

## 2.0 (3rd March, 2021)

### Changed

* `parse_tokens` is private now (`toy._parser`). (Pull #20)
* Add `Engine.pause`.
* Remove `old_helper`.

## 1.1 (2020-02-01)

* Fix `Engine.stop` leaking threads.
"""

PARSER = "def parse_tokens(text):\n" + "".join(f"    step_{i} = text  # step {i}\n" for i in range(20))
ENGINE = 'class Engine:\n    """Runs."""\n\n    def run(self):\n        pass\n\n    def stop(self):\n        pass\n'
OLD = Release("1.1", {
    "src/toy/__init__.py": '"""Toy package."""\nfrom toy.engine import Engine\n',
    "src/toy/engine.py": ENGINE,
    "src/toy/legacy.py": "def old_helper():\n    return 1\n",
    "src/toy/parser.py": PARSER,
}, OLD_LOG)
NEW = Release("2.0", {
    "src/toy/__init__.py": '"""Toy package."""\nfrom toy.engine import Engine\n',
    "src/toy/engine.py": ENGINE + "\n    def pause(self):\n        pass\n",
    "src/toy/_parser.py": PARSER,
    "src/toy/cache.py": '"""Token cache.\n\nMore."""\nclass TokenCache:\n    pass\n',
}, NEW_LOG)


@pytest.fixture(scope="module")
def rows() -> dict[str, Any]:
    return build_rows(OLD, NEW, prefix=PREFIX, package=PACKAGE)


def test_changelogs_rst_and_markdown_give_versions_dates_and_whole_entries() -> None:
    old = parse_changelog(OLD_LOG)
    assert [(str(s.version), s.released) for s in old] == [("1.1", date(2020, 2, 1)), ("1.0", date(2020, 1, 1))]
    assert [e.text for e in old[0].entries] == [
        "Fix ``Engine.stop`` leaking threads.",
        "``parse_tokens`` accepts bytes. It decodes them first. - and strings with a BOM",
    ]
    assert len(old[1].entries) == 3  # "Features" is a sub-heading, not a version
    new = parse_changelog(NEW_LOG)
    assert [(str(s.version), s.released, len(s.entries)) for s in new] == [
        ("2.0", date(2021, 3, 3), 3), ("1.1", date(2020, 2, 1), 1)]
    assert new[0].entries[0].name == "`parse_tokens` is private now (`toy._parser`)."


def test_references_and_their_files() -> None:
    raw = "Add :meth:`~toy.engine.Engine.run` and ``Engine.stop()``; see `toy._parser` (`#3 <http://x>`_)"
    assert references(raw, PACKAGE) == ["toy.engine.Engine.run", "Engine.stop", "toy._parser"]
    assert clean("`#116 <https://x/116>`_: Remove ``proc``. :issue:`9` (Pull #20, #21)") == "Remove ``proc``."
    index = SymbolIndex(NEW.tree, PREFIX, PACKAGE)
    assert index.resolve("toy.engine.Engine.run") == {"src/toy/engine.py"}
    assert index.resolve("toy.Engine") == {"src/toy/engine.py"}  # re-exported: where it is defined
    assert index.resolve("pause") == {"src/toy/engine.py"}  # a member's name alone
    assert index.resolve("toy._parser") == {"src/toy/_parser.py"}
    assert index.resolve("old_helper") == set()
    assert index.words("the cache of TokenCache") == ["src/toy/cache.py"]


def test_history_from_the_old_release_queries_from_the_new(rows: dict[str, Any]) -> None:
    history = [(h["version"], h["name"], [f["path"] for f in h["handoff"]["files_modified"]]) for h in rows["history"]]
    assert history == [
        ("1.0", "Add ``old_helper`` for legacy callers.", ["src/toy/legacy.py"]),
        ("1.0", "Add ``toy.engine.Engine.run``.", ["src/toy/engine.py"]),
        ("1.1", "Fix ``Engine.stop`` leaking threads.", ["src/toy/engine.py"]),
        ("1.1", "``parse_tokens`` accepts bytes.", ["src/toy/parser.py"]),
    ]
    assert rows["history"][0]["completed_at"] == "2020-01-01T12:00:00+00:00"
    # 1.1 is in the old changelog: not a query; "Remove old_helper" names nothing in the new tree
    assert [(q["version"], q["gold_files"]) for q in rows["queries"]] == [
        ("2.0", ["src/toy/_parser.py"]), ("2.0", ["src/toy/engine.py"])]
    assert [(e["location"], e["notes"]) for e in rows["context_map"]] == [
        ("src/toy/__init__.py", "Toy package."), ("src/toy/_parser.py", ""),
        ("src/toy/cache.py", "Token cache."), ("src/toy/engine.py", "")]
    stats = rows["stats"]
    assert stats["gone"] == stats["gone_named"] == ["src/toy/legacy.py", "src/toy/parser.py"]
    assert (stats["history_dropped"], stats["queries_dropped"]) == (1, 1)


def test_the_set_is_one_ctxgraph_eval_reads(rows: dict[str, Any], tmp_path: Path) -> None:
    meta = {"project": "toy", "pypi": "toy==2.0", "package_dir": "toy/", "src_prefix": PREFIX}
    write_set(tmp_path / "toy", rows, meta)
    es = load_set(tmp_path / "toy")
    assert len(es.history) == 4 and len(es.queries) == 2
    assert es.map_paths == [e["location"] for e in rows["context_map"]]
    assert release_of(es.meta, es.name) == ("toy==2.0", "toy/", PREFIX)


def test_an_sdist_is_read_under_repository_paths(tmp_path: Path) -> None:
    sdist = tmp_path / "toy-1.1.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        for name, text in {**{f"toy-1.1/{p}": t for p, t in OLD.tree.items()}, "toy-1.1/CHANGES.rst": OLD_LOG,
                           "toy-1.1/tests/test_engine.py": "x = 1\n", "toy-1.1/src/toy/py.typed": ""}.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    release = read_sdist(sdist, "1.1", PREFIX)
    assert release.tree == OLD.tree and release.changelog == OLD_LOG


def test_synced_anchors_follow_the_rename_and_leave_out_the_deleted(
        rows: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXGRAPH_TASK_VECTORS", "0")
    write_set(tmp_path / "toy", rows, {"project": "toy"})
    found = run(tmp_path / "toy", OLD, NEW)
    assert found["sync"]["renamed"] == 1 and found["sync"]["deleted"] == 1
    # off: the history names src/toy/parser.py, gone at the new release
    assert found["off"]["stale_at_5"] > 0
    assert found["synced"]["stale_at_5"] == 0
    assert found["synced"]["recall_at_5"] > found["off"]["recall_at_5"]  # parser.py shown as _parser.py


def test_a_rename_then_a_rewrite_is_followed_only_by_syncing_each_release(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXGRAPH_TASK_VECTORS", "0")
    rewritten = "def parse_tokens(text):\n" + "".join(f"    part_{i} = len(text) * {i}\n" for i in range(20))
    later = Release("2.1", {**NEW.tree, "src/toy/_parser.py": rewritten}, NEW_LOG)
    write_set(tmp_path / "toy", build_rows(OLD, later, prefix=PREFIX, package=PACKAGE), {"project": "toy"})
    found = run(tmp_path / "toy", OLD, later, via=[NEW])  # 2.0 renames parser.py, 2.1 rewrites it
    assert [s["renamed"] for s in found["sync_steps"]] == [1, 0]
    assert found["sync"]["renamed"] == 0  # one diff from 1.1 to 2.1: parser.py deleted
    assert found["synced"]["stale_at_5"] == found["synced_once"]["stale_at_5"] == 0
    assert found["synced"]["recall_at_5"] > found["synced_once"]["recall_at_5"]
