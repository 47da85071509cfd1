"""Writing a file whole or not at all: the one atomic write every file ctxgraph
writes in place goes through (an export, the settings file, the Browser zip,
the embedding cache). Beside ``errors.py`` on the floor: it imports nothing of
ctxgraph, and everything above ``core/`` may use it (``core/`` and
``compute/`` do no IO)."""

from __future__ import annotations

import io
import os
import secrets
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import IO, Any, Literal, overload


@overload
def atomic_write(path: Path, *, text: Literal[True]) -> AbstractContextManager[IO[str]]: ...


@overload
def atomic_write(path: Path, *, text: Literal[False] = False) -> AbstractContextManager[IO[bytes]]: ...


def atomic_write(path: Path, *, text: bool = False) -> AbstractContextManager[IO[Any]]:
    """A file to write ``path``'s new contents to (UTF-8 with ``\\n`` line ends
    when ``text``, else bytes); on a clean exit it replaces ``path`` whole.

    - The temporary file is this call's own (process id and a random part in
      its name, created exclusively beside ``path``): two writers at once
      each replace the file whole, neither fails on the other's temporary.
    - Its contents reach the disk (``fsync``) before it replaces ``path``
      (``os.replace``, atomic on one file system), and the folder's entry is
      synced after: after a crash ``path`` holds the old contents or the new.
    - It gets the mode of the file it replaces, else the mode a plain
      ``open()`` gives (0o666 less the umask).
    - On any failure the temporary is removed and ``path`` is untouched.
    """
    return _atomic_write(path, text)


@contextmanager
def _atomic_write(path: Path, text: bool) -> Iterator[IO[Any]]:
    path = Path(path)
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as raw:
            handle: IO[Any] = io.TextIOWrapper(raw, encoding="utf-8", newline="\n") if text else raw
            yield handle
            handle.flush()
            os.fsync(raw.fileno())
            if text:
                handle.detach()  # type: ignore[attr-defined]  # leave ``raw`` to its own ``with``
        with suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """The folder's entries to disk (POSIX; where a folder cannot be opened, as on Windows, nothing)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def cache_root() -> Path:
    """Where ctxgraph keeps what it builds once from installed models (the ONNX
    embedding model, the signals' snapshot): ``$CTXGRAPH_MODEL_CACHE``, else
    ``$XDG_CACHE_HOME/ctxgraph``, else ``~/.cache/ctxgraph``."""
    override = os.environ.get("CTXGRAPH_MODEL_CACHE")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ctxgraph"


__all__ = ["atomic_write", "cache_root"]
