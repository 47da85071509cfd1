"""Compute does no IO (issue 43): the service gathers everything a context
needs first — the store's candidates, their code anchors checked against the
work tree, the candidate files' states and the anchors on the missing ones
(``ctxgraph.service.work_tree``) — and the compute stages run on that data
alone. Here they run with files, sockets and processes forbidden, on a real
project whose files were edited, renamed and deleted since its handoff, and
give the same context as unguarded."""

from __future__ import annotations

import builtins
import io
import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import ctxgraph.compute.context as context_module
from ctxgraph.compute.output import ComputedContext
from ctxgraph.graph.local import LocalStore
from ctxgraph.service import ContextService
from ctxgraph.service.root import ProjectRoot
from ctxgraph.signals import SignalExtractor
from tests._git_repo import MARK, TASKS, change_repo, handoff, make_repo


class IOForbidden(AssertionError):
    """IO was attempted while it was forbidden."""


def _refuse(what: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise IOForbidden(f"{what} during compute: {args[:2]!r}")
    return refuse


@contextmanager
def no_io() -> Iterator[None]:
    """Files, directories, sockets and processes forbidden while the block runs."""
    with pytest.MonkeyPatch.context() as mp:
        for module, names in ((builtins, ("open",)), (io, ("open", "open_code")),
                              (os, ("open", "stat", "lstat", "scandir", "listdir", "access", "walk")),
                              (socket.socket, ("connect", "connect_ex", "send", "sendall", "recv", "recv_into")),
                              (socket, ("create_connection",)), (subprocess, ("Popen",))):
            for name in names:
                mp.setattr(module, name, _refuse(f"{getattr(module, '__name__', module)}.{name}"))
        yield


@pytest.fixture
def project(tmp_path: Path, extractor: SignalExtractor) -> Iterator[ContextService]:
    """A project whose handoff anchored its files, then one commit that edits,
    renames and deletes them, and a file of the history deleted."""
    repo = tmp_path / "repo"
    commit = make_repo(repo)
    store = LocalStore.open(tmp_path / "graph.db")
    svc = ContextService(store, extractor)
    svc.root = ProjectRoot(repo.resolve(), "--root")
    svc.memory = False
    svc.add_tasks(TASKS)
    svc.ingest_handoff(handoff(commit), source="h.yaml")
    change_repo(repo)
    (repo / "src" / "app.py").unlink()
    try:
        yield svc
    finally:
        store.close()


def test_the_guard_refuses_io(tmp_path: Path) -> None:
    with no_io():
        with pytest.raises(IOForbidden):
            os.stat(tmp_path)
        with pytest.raises(IOForbidden):
            Path(tmp_path / "x").write_text("x")
        with pytest.raises(IOForbidden):
            socket.create_connection(("127.0.0.1", 9))
    os.stat(tmp_path)  # allowed again after it


def test_the_compute_stages_run_with_io_forbidden(project: ContextService,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    svc = project
    free = svc.compute("t-next", record=False, explain=True, debug=True)
    assert MARK in free.markdown  # the gathered anchors made it: the changed code is marked
    assert "src/legacy.py" not in free.markdown and "src/app.py" not in free.markdown
    original = context_module.compute_context
    guarded: list[ComputedContext] = []

    def compute_without_io(*args: Any, **kwargs: Any) -> ComputedContext:
        assert kwargs["files"] is not None  # the work tree's states, gathered before
        with no_io():
            ctx = original(*args, **kwargs)
        guarded.append(ctx)
        return ctx

    monkeypatch.setattr(context_module, "compute_context", compute_without_io)
    ctx = svc.compute("t-next", record=False, explain=True, debug=True)
    assert len(guarded) == 1
    assert ctx.markdown == free.markdown
    assert ctx.model_dump(mode="json") == free.model_dump(mode="json")
