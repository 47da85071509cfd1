"""Concurrent work: which other tasks in progress expect to change the files a
context names. Pure (docs/decisions.md).

A task *expects to change* the files its text names and the first
:data:`EXPECTED_FILES_TOP` file items of a context (its snippets, then its
code references): for another task in progress, those of its latest delivered
context (the outcome log's record); for the task whose context is computed,
those of this context. Two paths are the same file when equal or when one ends
with the other after a ``/`` (a task may name ``jwt.ts`` for
``src/auth/jwt.ts``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxgraph.compute.output import ConcurrentWork
from ctxgraph.core.models import ConcurrentTask

#: File items of a context that count as expected changes (the rest are background).
EXPECTED_FILES_TOP = 3
#: Warnings a context shows at most (the template names three files of each).
CONCURRENT_SHOWN = 5


def expected_files(mentioned: Sequence[str], delivered: Sequence[str]) -> tuple[str, ...]:
    """The files a task expects to change: those it names, then its context's first file items."""
    return tuple(dict.fromkeys([*mentioned, *delivered[:EXPECTED_FILES_TOP]]))


def same_file(a: str, b: str) -> bool:
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def concurrent_work(own: Sequence[str], others: Sequence[ConcurrentTask]) -> tuple[ConcurrentWork, ...]:
    """The other tasks expecting to change some of ``own`` (this context's
    expected files), each with those files (the longer path of a pair), in the
    order ``others`` came (newest first); at most :data:`CONCURRENT_SHOWN`."""
    out: list[ConcurrentWork] = []
    for other in others:
        theirs = expected_files(other.mentioned, other.delivered)
        shared = [max(a, b, key=len) for a in own for b in theirs if same_file(a, b)]
        if shared:
            out.append(ConcurrentWork(task_id=other.id, intent=other.intent, files=tuple(dict.fromkeys(shared))))
        if len(out) == CONCURRENT_SHOWN:
            break
    return tuple(out)


__all__ = [
    "CONCURRENT_SHOWN", "EXPECTED_FILES_TOP",
    "concurrent_work", "expected_files", "same_file",
]
