"""The library's edges: every mistake a caller can make is a CtxgraphError with
a clear message; handoffs come as paths too; the README's snippet runs alone."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import ctxgraph
from ctxgraph import ContextService, CtxgraphError, InvalidArgumentError, InvalidDocumentError, Task
from ctxgraph.signals import SignalExtractor

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
HANDOFF = "task_id: t-1\nsummary: Added the login route\nfiles_created: [{path: src/login.ts, purpose: route}]\n"


@pytest.fixture
def svc(tmp_path: Path, extractor: SignalExtractor) -> Iterator[ContextService]:
    from ctxgraph.graph.local import LocalStore

    with ContextService(LocalStore.open(tmp_path / "graph.db"), extractor) as service:
        service.add_task(Task(id="t-1", name="Login route", objective="POST /login"))
        yield service


@pytest.mark.parametrize(("options", "named"), [
    ({"complexity": "hard"}, "complexity: 'hard' is not one of easy, normal, complex"),
    ({"strategy": "newest"}, "strategy: 'newest' is not one of recent, important, balanced"),
    ({"budget": 0}, "budget: 0 is not a whole number"),
    ({"budget": "800"}, "budget: '800' is not a whole number"),
])
def test_bad_compute_arguments_are_ctxgraph_errors(svc: ContextService, options: dict[str, object],
                                                   named: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        svc.compute("t-1", **options)  # type: ignore[arg-type]
    assert named in str(info.value)
    assert info.value.exit_code == 2


def test_other_bad_arguments_are_ctxgraph_errors(svc: ContextService) -> None:
    with pytest.raises(InvalidArgumentError, match="status: 'done' is not one of"):
        svc.list_tasks("done")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="task: expected a task id"):
        svc.compute(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        svc.ingest_handoffs([], batch_size=0)
    with pytest.raises(CtxgraphError, match="not list"):
        svc.ingest_handoff([1, 2])  # type: ignore[arg-type]
    with pytest.raises(InvalidDocumentError, match="invalid document"):
        svc.add_task({"id": "t-2", "complexity": "hard"})


def test_a_handoff_comes_as_a_path_a_str_path_text_or_bytes(svc: ContextService, tmp_path: Path) -> None:
    (tmp_path / "h.yaml").write_text(HANDOFF)
    first = svc.ingest_handoff(tmp_path / "h.yaml")
    assert (first.source, first.task_id, first.written) == (str(tmp_path / "h.yaml"), "t-1", True)
    assert svc.ingest_handoff(str(tmp_path / "h.yaml")).written is False  # same content: unchanged
    assert svc.ingest_handoff(HANDOFF).written is False
    assert svc.ingest_handoff(HANDOFF.encode()).source == "<handoff>"
    with pytest.raises(InvalidDocumentError, match=r"missing\.yaml: invalid document: no such file"):
        svc.ingest_handoff(tmp_path / "missing.yaml")
    with pytest.raises(InvalidDocumentError, match="no such file"):
        svc.ingest_handoff("missing.yaml")


def test_the_errors_and_models_a_caller_needs_are_exported() -> None:
    for name in ("UnknownTaskError", "FileEntry", "IngestResult", "InvalidArgumentError", "ComputedContext"):
        assert name in ctxgraph.__all__
        assert getattr(ctxgraph, name).__name__ == name


def test_the_library_snippet_runs_alone_in_an_empty_folder(tmp_path: Path) -> None:
    section = (Path(__file__).resolve().parents[2] / "docs" / "library.md").read_text(encoding="utf-8")
    snippet = re.search(r"```python\n(.*?)```", section, re.S)
    assert snippet is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    proc = subprocess.run([sys.executable, "-c", snippet.group(1)], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## Context (Computed)")
    assert "Clock skew breaks exp checks" in proc.stdout
    assert "refused: unknown task: 'task-999'" in proc.stdout
    assert "refused: strategy: 'newest' is not one of recent, important, balanced" in proc.stdout
