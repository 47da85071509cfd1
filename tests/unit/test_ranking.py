"""The graph-aware file ranking (ctxgraph.compute.ranking) on hand-made evidence."""

from __future__ import annotations

from ctxgraph.compute.ranking import rank_files
from ctxgraph.core.models import FileEntry, FileEvidence, HistoryEvidence, TaskEvidence
from ctxgraph.core.paths import successors
from ctxgraph.signals import TaskSignals


def _file(path: str, touches: int = 0, in_map: bool = True) -> FileEvidence:
    return FileEvidence(entry=FileEntry(path=path), touches=touches, in_map=in_map)


def _task(tid: str, files: tuple[str, ...], matched: tuple[str, ...], score: float = 1.0) -> TaskEvidence:
    return TaskEvidence(id=tid, score=score, completed_at=f"2026-01-0{tid[-1]}T00:00:00Z", matched=matched,
                        files=files)


def test_successors_map_a_module_to_the_package_that_replaced_it() -> None:
    mapped = sorted(["pkg/data/__init__.py", "pkg/data/headers.py", "pkg/database.py", "pkg/http.py"])
    found = successors(["pkg/data.py", "pkg/http.py", "pkg/gone.py", "pkg/Makefile", "pkg/.env"], mapped)
    # pkg/database.py shares the prefix "pkg/data" but is not in the folder pkg/data/.
    assert found == {"pkg/data.py": ("pkg/data/__init__.py", "pkg/data/headers.py")}


def test_votes_of_a_moved_module_reach_its_package_files() -> None:
    files = (
        _file("pkg/data/__init__.py"), _file("pkg/data/headers.py"), _file("pkg/http.py", touches=1),
        _file("pkg/data.py", touches=3, in_map=False),
    )
    tasks = (
        _task("t1", ("pkg/data.py",), ("cookie",), 2.0),
        _task("t2", ("pkg/data.py",), ("cookie",), 2.0),
        _task("t3", ("pkg/http.py",), ("parse",)),
    )
    history = HistoryEvidence(n_tasks=3, tasks=tasks, files=files)
    ranked = {entry.path: parts for entry, _, parts in rank_files(history, TaskSignals())}
    assert "pkg/data.py" not in ranked  # not in the context map: never named
    # Two votes of similarity 1, each split over the package's two files (÷ √2):
    # the tasks name none of them and none kept the module's name.
    for path in ("pkg/data/__init__.py", "pkg/data/headers.py"):
        assert abs(ranked[path]["votes"] - 2 / 2 ** 0.5) < 1e-6
        assert ranked[path]["text"] == 0.0  # the moved module's text is not passed on
    # A task naming one of them ("headers", which the query has too) votes for it alone.
    named = history.model_copy(update={"tasks": (_task("t1", ("pkg/data.py",), ("headers",), 2.0), *tasks[1:])})
    ranked = {entry.path: parts for entry, _, parts in rank_files(named, TaskSignals())}
    assert abs(ranked["pkg/data/headers.py"]["votes"] - (1 + 1 / 2 ** 0.5)) < 1e-6


def test_without_a_context_map_nothing_is_moved() -> None:
    files = (_file("pkg/data.py", touches=1, in_map=False), _file("pkg/data/x.py", in_map=False))
    tasks = (_task("t1", ("pkg/data.py",), ("x",)),)
    history = HistoryEvidence(n_tasks=1, tasks=tasks, files=files)
    ranked = {entry.path: parts for entry, _, parts in rank_files(history, TaskSignals())}
    assert ranked["pkg/data.py"]["votes"] == 1.0
    assert "pkg/data/x.py" not in ranked


def test_a_moved_module_votes_for_the_package_files_named_by_task_and_query() -> None:
    from ctxgraph.compute.ranking import heirs, route

    kids = ("pkg/datastructures/__init__.py", "pkg/datastructures/headers.py", "pkg/datastructures/structures.py")
    assert heirs("pkg/datastructures.py", kids) == ("pkg/datastructures/structures.py",)
    # "at" is in "formats" too, but too short to be taken for its name
    assert heirs("pkg/formats.py", ("pkg/formats/at.py", "pkg/formats/formats.py")) == ("pkg/formats/formats.py",)
    # a term the task and the query share names a file: the vote goes there
    assert route("pkg/datastructures.py", kids, ["headers", "parse"]) == ("pkg/datastructures/headers.py",)
    # none named: the file that kept the module's name inherits it
    assert route("pkg/datastructures.py", kids, ["multidict"]) == ("pkg/datastructures/structures.py",)
    # no heir either: every file of the package, as before
    assert route("pkg/data.py", ("pkg/data/__init__.py", "pkg/data/x.py"), ()) == (
        "pkg/data/__init__.py", "pkg/data/x.py")


def test_neighbours_by_embedding_vote_for_their_files() -> None:
    from ctxgraph.compute import ranking
    from ctxgraph.core.models import NeighbourEvidence

    files = (_file("pkg/a.py", touches=1), _file("pkg/b.py", touches=1), _file("pkg/c.py", touches=1))
    tasks = (_task("t1", ("pkg/a.py",), ("parse",)),)
    near = (
        NeighbourEvidence(id="t2", score=0.8, completed_at="2026-01-02T00:00:00Z", matched=(), files=("pkg/b.py",)),
        NeighbourEvidence(id="t3", score=0.4, completed_at="2026-01-03T00:00:00Z", matched=(),
                          files=("pkg/b.py", "pkg/c.py")),
    )
    plain = HistoryEvidence(n_tasks=3, tasks=tasks, files=files)
    dense = plain.model_copy(update={"neighbours": near})
    ranked = {entry.path: parts for entry, _, parts in rank_files(plain, TaskSignals())}
    assert "dense" not in ranked["pkg/a.py"]
    ranked = {entry.path: (score, parts) for entry, score, parts in rank_files(dense, TaskSignals())}
    # relative to the best neighbour, divided by the square root of the files each touched
    assert abs(ranked["pkg/b.py"][1]["dense"] - (1.0 + 0.5 / 2 ** 0.5)) < 1e-6
    assert abs(ranked["pkg/c.py"][1]["dense"] - 0.5 / 2 ** 0.5) < 1e-6
    assert ranked["pkg/a.py"][1]["dense"] == 0.0
    b_score, b = ranked["pkg/b.py"]
    w = ranking.DEFAULT_WEIGHTS.dense  # the set of a history with neighbours by embedding: text 3, dense 3
    assert (w.votes, w.text, w.prior, w.seed, w.dense) == (1.0, 3.0, 0.2, 0.3, 3.0)
    expected = (b["votes"] + w.text * b["text"] + w.prior * b["prior"] + w.seed * b["seed"] + w.dense * b["dense"])
    assert abs(b_score - expected) < 1e-6
    assert next(iter(ranked)) == "pkg/b.py"
