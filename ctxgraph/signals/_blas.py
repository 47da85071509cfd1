"""Keep numpy's OpenBLAS on one thread while the tagger runs.

The tagger's matrices are small. Multi-threaded OpenBLAS gains little on
them, and on a busy machine its worker threads wait for a CPU and each
product can take a scheduler tick: 30x slower. So while a pipeline runs, the
OpenBLAS numpy loaded is set to one thread and put back afterwards (a
counter makes nested and concurrent uses restore it once, at the end).

The library is found among the shared objects the process has mapped
(Linux) or next to numpy (wheels); when none is found, :func:`find` returns
None and the pipeline keeps thinc's BLIS kernels, which are single-threaded.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# (get, set) symbol pairs: numpy >= 2 wheels, numpy 1.x wheels, system builds.
_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


class BlasThreads:
    """Get/set the thread count of one OpenBLAS library."""

    def __init__(self, get: Callable[[], int], set_: Callable[[int], None]) -> None:
        self._get = get
        self._set = set_
        self._lock = threading.Lock()
        self._depth = 0
        self._saved = 1

    def threads(self) -> int:
        return int(self._get())

    @contextmanager
    def single(self) -> Iterator[None]:
        """One BLAS thread inside the block; the previous count after it."""
        with self._lock:
            if self._depth == 0:
                self._saved = int(self._get())
                if self._saved > 1:
                    self._set(1)
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._saved > 1:
                    self._set(self._saved)


def _candidates() -> list[str]:
    paths: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    try:
        import numpy

        here = os.path.dirname(numpy.__file__)
        for pattern in ("../numpy.libs/*openblas*", ".dylibs/*openblas*"):
            for path in sorted(glob.glob(os.path.join(here, pattern))):
                if path not in paths:
                    paths.append(os.path.normpath(path))
    except ImportError:
        pass
    return paths


def _bind(path: str) -> BlasThreads | None:
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    for get_name, set_name in _SYMBOLS:
        get = getattr(lib, get_name, None)
        set_ = getattr(lib, set_name, None)
        if get is not None and set_ is not None:
            get.restype = ctypes.c_int
            get.argtypes = []
            set_.restype = None
            set_.argtypes = [ctypes.c_int]
            return BlasThreads(get, set_)
    return None


_FOUND: list[BlasThreads | None] = []
_FIND_LOCK = threading.Lock()


def find() -> BlasThreads | None:
    """The OpenBLAS numpy uses, once per process; None when there is none."""
    with _FIND_LOCK:
        if not _FOUND:
            found = None
            for path in _candidates():
                found = _bind(path)
                if found is not None:
                    break
            _FOUND.append(found)
        return _FOUND[0]
