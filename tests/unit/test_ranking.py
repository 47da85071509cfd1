"""The graph-aware file ranking (ctxgraph.compute.ranking) on hand-made evidence."""

from __future__ import annotations

from ctxgraph.compute.ranking import rank_files
from ctxgraph.graph.models import FileEntry, FileEvidence, HistoryEvidence, TaskEvidence
from ctxgraph.graph.records import successors
from ctxgraph.signals import TaskSignals


def _file(path: str, touches: int = 0, in_map: bool = True) -> FileEvidence:
    return FileEvidence(entry=FileEntry(path=path), touches=touches, task_len=5 * touches, own_len=0,
                        own_terms=(), in_map=in_map)


def _task(tid: str, files: tuple[str, ...], matched: tuple[tuple[str, int], ...]) -> TaskEvidence:
    return TaskEvidence(id=tid, term_count=5, completed_at=f"2026-01-0{tid[-1]}T00:00:00Z", matched=matched,
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
        _task("t1", ("pkg/data.py",), (("headers", 1),)),
        _task("t2", ("pkg/data.py",), (("headers", 1),)),
        _task("t3", ("pkg/http.py",), (("parse", 2),)),
    )
    history = HistoryEvidence(n_tasks=3, total_task_len=15, tasks=tasks, files=files)
    ranked = {entry.path: parts for entry, _, parts in rank_files(history, TaskSignals())}
    assert "pkg/data.py" not in ranked  # not in the context map: never named
    # Two votes of similarity 1, each split over the package's two files (÷ √2).
    for path in ("pkg/data/__init__.py", "pkg/data/headers.py"):
        assert abs(ranked[path]["votes"] - 2 / 2 ** 0.5) < 1e-6
        assert ranked[path]["text"] == 0.0  # the moved module's text is not passed on


def test_without_a_context_map_nothing_is_moved() -> None:
    files = (_file("pkg/data.py", touches=1, in_map=False), _file("pkg/data/x.py", in_map=False))
    tasks = (_task("t1", ("pkg/data.py",), (("x", 1),)),)
    history = HistoryEvidence(n_tasks=1, total_task_len=5, tasks=tasks, files=files)
    ranked = {entry.path: parts for entry, _, parts in rank_files(history, TaskSignals())}
    assert ranked["pkg/data.py"]["votes"] == 1.0
    assert "pkg/data/x.py" not in ranked
