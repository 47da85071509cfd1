"""The embedded store's folder and files: readable by their owner alone, and
out of git (issues 40 and 42).

- A folder made for a store is made ``0700``; a ``.ctxgraph`` folder made
  here also gets a ``.gitignore`` holding ``*``, so ``git status`` never
  shows the store (nor the demo, nor a cache beside it).
- The store's file is created ``0600`` before SQLite opens it; SQLite gives
  its ``-wal`` and ``-shm`` files the mode of the database file.
- Files and a ``.ctxgraph`` folder made before, readable by others, are
  tightened (group and others' bits off) when a store is opened on them, if
  this user owns them; others' are left as they are.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

#: The folder the project's store, the demo and the caches go in.
FOLDER = ".ctxgraph"
#: What the ``.gitignore`` of a :data:`FOLDER` made here holds: everything in it is ignored.
GITIGNORE = "*\n"
#: The files of an embedded store beside its database file.
SIDE_FILES = ("-wal", "-shm", "-journal")


def make_folder(folder: Path) -> bool:
    """Make ``folder`` (and the folders above it) for a store, ``0700``; a
    :data:`FOLDER` gets its ``.gitignore``. True when ``folder`` was made here
    (False when it was there already)."""
    if folder.is_dir():
        return False
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:  # another process made it first
        return False
    if folder.name == FOLDER:
        write_gitignore(folder)
    return True


def write_gitignore(folder: Path) -> None:
    """``folder/.gitignore`` holding :data:`GITIGNORE`, unless there is one."""
    with contextlib.suppress(FileExistsError):
        fd = os.open(folder / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(GITIGNORE)


def private_file(path: Path) -> None:
    """Create the empty file ``path`` with mode ``0600`` when there is none
    (an empty file is an empty SQLite database)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def tighten(path: Path) -> None:
    """Group and others' bits off ``path`` (a store file, or a :data:`FOLDER`)
    when this user owns it and they are on; nothing for a path missing or
    not ours, nor where the mode cannot be changed (a read-only mount)."""
    try:
        st = os.stat(path)
        if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(path, stat.S_IMODE(st.st_mode) & 0o700)
    except OSError:
        pass


def prepare(db: Path, *, create: bool) -> None:
    """What opening the store ``db`` does to its folder and files: with
    ``create``, the folder (:func:`make_folder`) and the file
    (:func:`private_file`) made when missing; then the existing ones tightened."""
    if create:
        make_folder(db.parent)
        private_file(db)
    if db.parent.name == FOLDER:
        tighten(db.parent)
    for path in (db, *(db.with_name(db.name + side) for side in SIDE_FILES)):
        tighten(path)


__all__ = ["FOLDER", "GITIGNORE", "make_folder", "prepare", "private_file", "tighten",
           "write_gitignore"]
