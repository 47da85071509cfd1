"""`ctxgraph eval SET --repo GIT_DIR` on a tiny repository made here with
git itself (issue 44): the set's history, ADRs and code notes imported from
the repository at the set's snapshot, never a query's own commit; the
ctxgraph and ctxgraph-day-zero rows; the knowledge's precision; the checkout
cached with its marker inside .git.

The repository, oldest first: the lexer, the printer and the widget module
(zap.py, whose name and first line say nothing of "frobnication") are added,
then three commits about frobnicating widgets change zap.py, a release bumps
the version; then the snapshot. After it, on the same branch, the two
queries' own commits: "Frobnicate widgets lazily" (gold zap.py) and "Speed
up the printer" (gold printer.py). Only the history knows that
"frobnicate" is zap.py's business: the ctxgraph row finds it, the day-zero
row (the context map and the source alone) does not. zap.py holds a
``# WARNING:`` note (a gotcha anchored in the gold file), and docs/adr holds
one ADR (a decision).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ctxgraph.cli._eval import eval_command
from ctxgraph.core.models import TaskStatus
from ctxgraph.evaluation.checkout import MARKER
from ctxgraph.evaluation.dataset import load_set
from ctxgraph.evaluation.repo import query_commits
from ctxgraph.service import ContextService
from ctxgraph.service.history_types import HistoryOptions
from tests._history_repo import commit, git, init

ZAP = ("def run(items):\n    return [step(i) for i in items]\n\n\n"
       "def step(item):\n    # WARNING: frobnicating a widget twice corrupts its widget state\n"
       "    return item\n")
ADR = ("# 1. Keep the printer pure\n\nStatus: Accepted\n\n## Context\n\nThe printer writes output.\n\n"
       "## Decision\n\nThe printer never mutates the tree it prints.\n")


def make_project(root: Path) -> tuple[Path, str, list[str]]:
    """The repository, the snapshot and the queries' commits."""
    repo = init(root / "repo")
    commit(repo, "Add the lexer", {"src/tiny/lexer.py": "def lex(text):\n    return text.split()\n",
                                   "src/tiny/__init__.py": "VERSION = '0.1'\n"}, date=0)
    commit(repo, "Add the printer", {"src/tiny/printer.py": "def show(tree):\n    return str(tree)\n",
                                     "docs/adr/0001-keep-the-printer-pure.md": ADR}, date=100)
    commit(repo, "Add the zap module", {"src/tiny/zap.py": "def run(items):\n    return items\n"}, date=200)
    for n, subject in enumerate(("Frobnicate widgets before running them", "Fix widget frobnication order",
                                 "Frobnication of nested widgets")):
        commit(repo, subject, {"src/tiny/zap.py": ZAP + f"# {n}\n"}, date=300 + n)
    commit(repo, "release version 0.2.0", {"src/tiny/__init__.py": "VERSION = '0.2'\n"}, date=400)
    snapshot = git(repo, "rev-parse", "HEAD")
    queries = [commit(repo, "Frobnicate widgets lazily", {"src/tiny/zap.py": ZAP + "# lazy\n"}, date=500),
               commit(repo, "Speed up the printer", {"src/tiny/printer.py": "def show(tree):\n    return repr(tree)\n"},
                      date=600)]
    return repo, snapshot, queries


def make_set(root: Path, snapshot: str, queries: list[str]) -> Path:
    folder = root / "tiny_repo"
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({"project": "example/tiny", "src_prefix": "src/tiny/",
                                                  "snapshot": snapshot}))
    (folder / "context_map.jsonl").write_text("".join(
        json.dumps({"component": name, "location": f"src/tiny/{name}.py", "notes": ""}) + "\n"
        for name in ("__init__", "lexer", "printer", "zap")))
    (folder / "history.jsonl").write_text(json.dumps(
        {"id": "c-0000000001", "name": "Add the lexer", "completed_at": "2024-01-01T00:00:00Z",
         "handoff": {"files_modified": [{"path": "src/tiny/lexer.py"}]}}) + "\n")
    rows = [("Frobnicate widgets lazily", "src/tiny/zap.py"), ("Speed up the printer", "src/tiny/printer.py")]
    (folder / "queries.jsonl").write_text("".join(
        json.dumps({"id": "q-" + sha[:10], "name": name, "objective": name, "gold_files": [gold]}) + "\n"
        for sha, (name, gold) in zip(queries, rows, strict=True)))
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, list[str]]:
    root = tmp_path_factory.mktemp("eval-repo")
    repo, snapshot, queries = make_project(root)
    return repo, make_set(root, snapshot, queries), snapshot, queries


def invoke(cache: Path, *args: str) -> Result:
    env = {"CTXGRAPH_CACHE_DIR": str(cache), "CTXGRAPH_TASK_VECTORS": "0"}
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2
    except TypeError:
        runner = CliRunner()
    return runner.invoke(eval_command, list(args), env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def report(project: tuple[Path, Path, str, list[str]], cache: Path) -> dict[str, Any]:
    repo, folder, _, _ = project
    result = invoke(cache, str(folder), "--repo", str(repo), "--no-embeddings", "--format", "json")
    assert result.exit_code == 0, result.stderr
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_rows_and_recall(report: dict[str, Any]) -> None:
    assert (report["set"], report["queries"], report["skipped"]) == ("tiny_repo", 2, 0)
    assert list(report["systems"]) == ["ctxgraph", "ctxgraph-day-zero", "bm25", "seed", "all"]
    # only the imported history ties "frobnicate" to zap.py
    assert report["systems"]["ctxgraph"]["recall_at_5"] == 1.0
    assert report["systems"]["ctxgraph-day-zero"]["recall_at_5"] < 1.0
    # with every file named counted (the ADR, a test), a set's file can only lose its place
    assert list(report["every_file"]) == list(report["systems"])
    for name, figures in report["every_file"].items():
        assert figures["recall_at_5"] <= report["systems"][name]["recall_at_5"], name


def test_imports_read_the_snapshot_alone(report: dict[str, Any]) -> None:
    imports = report["imports"]
    history = imports["history"]
    # six commits up to the snapshot; the release is skipped; the queries' two are not read
    assert (history["read"], history["imported"], history["skipped"]) == (7, 6, {"release": 1})
    assert imports["query_commits"] == 0
    assert (imports["knowledge"]["decisions"], imports["knowledge"]["gotchas"]) == (1, 1)
    # the memory indexes the package (src_prefix) alone by default
    assert report["index"]["scope"] == "package"
    # the files counted, not listed (--index-paths lists them: the tree test)
    assert (report["index"]["files_added"], report["index"]["indexed"]) == (4, 4) and "added" not in report["index"]


def test_knowledge_precision(report: dict[str, Any]) -> None:
    knowledge = report["knowledge"]
    assert knowledge["items"] == 2
    ours = knowledge["ctxgraph"]
    # the zap gotcha is shown for the frobnication query, whose gold file holds it
    assert ours["in_gold"] >= 1 and ours["hit"] >= 0.5
    assert knowledge["bm25"]["shown"] == ours["shown"]


def test_checkout_is_cached_with_its_marker_in_git(project: tuple[Path, Path, str, list[str]], cache: Path,
                                                   report: dict[str, Any]) -> None:
    repo, folder, snapshot, _ = project
    tree = cache / "eval-repo" / f"example+tiny-{snapshot[:12]}"
    assert (tree / ".git" / MARKER).is_file()
    assert git(tree, "rev-parse", "HEAD") == snapshot
    assert git(tree, "status", "--porcelain") == ""
    # a second run reuses it: its text report, with the imports' lines
    (tree / "src" / "tiny" / "lexer.py").write_text("def lex(text):\n    return text.split()\n# reused\n")
    result = invoke(cache, str(folder), "--repo", str(repo), "--no-embeddings", "--limit-queries", "1")
    assert result.exit_code == 0, result.stderr
    assert "# reused" in (tree / "src" / "tiny" / "lexer.py").read_text()
    lines = result.stdout.splitlines()
    assert lines[0].startswith("set: tiny_repo   queries: 1   skipped: 0")
    assert [line.split()[0] for line in lines[3:8]] == ["ctxgraph", "ctxgraph-day-zero", "bm25", "seed", "all"]
    assert any(line.startswith("history: 7 commits read, 6 imported (skipped: release 1)") for line in lines)
    assert any(line.startswith("knowledge shown: ") for line in lines)


def test_tree_scope_indexes_the_whole_checkout(project: tuple[Path, Path, str, list[str]], cache: Path) -> None:
    repo, folder, _, _ = project
    result = invoke(cache, str(folder), "--repo", str(repo), "--no-embeddings", "--index-scope", "tree",
                    "--format", "json", "--index-paths")
    assert result.exit_code == 0, result.stderr
    index = json.loads(result.stdout)["index"]
    assert index["scope"] == "tree"
    assert "docs/adr/0001-keep-the-printer-pure.md" in index["added"] and "src/tiny/zap.py" in index["added"]
    assert index["files_added"] == len(index["added"])


def test_a_query_commit_in_the_store_is_counted_and_retired(project: tuple[Path, Path, str, list[str]],
                                                            tmp_path: Path) -> None:
    repo, folder, _, queries = project
    with ContextService.open(tmp_path / "g.db") as svc:
        svc.task_vectors = False
        svc.import_history(repo, HistoryOptions(signals=False))  # the branch's tip: the queries' commits too
        assert query_commits(svc, load_set(folder)) == 2
        assert {t.status for t in svc.store.get_tasks(["c-" + q[:10] for q in queries])} == {TaskStatus.RETIRED}
        assert query_commits(svc, load_set(folder)) == 0


def one_line_error(result: Result, code: int) -> str:
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ctxgraph: error: ")
    return lines[0]


def test_a_repository_without_the_snapshot(project: tuple[Path, Path, str, list[str]], tmp_path: Path) -> None:
    _, folder, snapshot, _ = project
    other = init(tmp_path / "other")
    commit(other, "Unrelated", {"a.py": "A = 1\n"}, date=0)
    line = one_line_error(invoke(tmp_path / "cache", str(folder), "--repo", str(other)), 2)
    assert f"has no commit {snapshot}" in line
    assert not (tmp_path / "cache" / "eval-repo" / f"example+tiny-{snapshot[:12]}").exists()
    line = one_line_error(invoke(tmp_path / "cache", str(folder), "--repo", str(tmp_path / "nope")), 2)
    assert line.endswith("nope: no such folder")


def test_repo_with_no_index_source_is_refused(project: tuple[Path, Path, str, list[str]], tmp_path: Path) -> None:
    repo, folder, _, _ = project
    line = one_line_error(invoke(tmp_path, str(folder), "--repo", str(repo), "--no-index-source"), 2)
    assert "--no-index-source does not apply" in line


def test_index_scope_without_repo_is_refused(project: tuple[Path, Path, str, list[str]], tmp_path: Path) -> None:
    _, folder, _, _ = project
    line = one_line_error(invoke(tmp_path, str(folder), "--index-scope", "tree"), 2)
    assert "--index-scope applies to a --repo run only" in line


def test_a_set_without_a_snapshot_is_refused(project: tuple[Path, Path, str, list[str]], tmp_path: Path) -> None:
    repo, _, _, _ = project
    data = Path(__file__).parents[1] / "data" / "eval_tiny"
    line = one_line_error(invoke(tmp_path, str(data), "--repo", str(repo)), 2)
    assert "meta.json needs" in line and "for --repo" in line
