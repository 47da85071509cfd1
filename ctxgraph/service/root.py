"""The project's root: the folder whose code the associative memory indexes
when nobody names one (issue 31).

Known, in this order, from:

1. ``--root PATH`` (``ctxgraph init``, ``ctxgraph context``);
2. the folder of the settings file (``ctxgraph.toml``, or a ``pyproject.toml``
   with ``[tool.ctxgraph]``: :func:`ctxgraph.settings.find_settings_file`);
3. the git work tree around the store: the nearest folder holding a ``.git``
   entry (a folder, or the file of a worktree or submodule) from the embedded
   store's file upwards; for a Neo4j store, from the current folder upwards.

Else there is none, and the memory behaves as before: it searches the only
project indexed, or the one ``--project``/``CTXGRAPH_PROJECT`` names.

The memory's project id for a root (:func:`project_id`) is the root folder's
name made valid for :data:`ctxgraph.memory.index.PROJECT_ID`: every run of
other characters becomes ``-``, leading ``.``, ``_`` and ``-`` go, at most 100
characters; a name with nothing left is ``project``. A folder name that is
already valid is kept as it is, so ``ctxgraph index ROOT`` without
``--project`` makes the same project.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxgraph.core.models import MemoryProject
from ctxgraph.memory.index import PROJECT_ID

_INVALID = re.compile(r"[^A-Za-z0-9._-]+")


def project_id(root: Path) -> str:
    """The memory's project id for ``root`` (see the module's text)."""
    name = _INVALID.sub("-", root.name).lstrip("._-")[:100]
    return name if PROJECT_ID.fullmatch(name) else "project"


@dataclass(frozen=True)
class ProjectRoot:
    """A known root: its resolved ``path`` and how it was found (``source``:
    ``--root``, ``settings file``, ``git work tree``)."""

    path: Path
    source: str

    @property
    def project(self) -> str:
        return project_id(self.path)

    def describe(self) -> str:
        return f"{self.path} ({self.source})"


def git_work_tree(start: Path) -> Path | None:
    """The nearest folder from ``start`` upwards holding a ``.git`` entry."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def find_root(explicit: Path | None = None, *, settings_source: str | None = None,
              store_path: Path | None = None, cwd: Path | None = None) -> ProjectRoot | None:
    """The project's root (see the module's text). ``settings_source``: the
    settings file read (:attr:`ctxgraph.settings.Settings.source`);
    ``store_path``: the embedded store's file (None for a Neo4j store, whose
    root is searched from ``cwd``, default: the current folder)."""
    if explicit is not None:
        return ProjectRoot(explicit.resolve(), "--root")
    if settings_source:
        return ProjectRoot(Path(settings_source).resolve().parent, "settings file")
    start = Path(store_path).resolve().parent if store_path is not None else (cwd or Path.cwd()).resolve()
    tree = git_work_tree(start)
    return ProjectRoot(tree, "git work tree") if tree is not None else None


def pick_project(projects: Sequence[MemoryProject], wanted: str | None,
                 root: ProjectRoot | None) -> tuple[str | None, str]:
    """(the project the memory searches, or None to leave the choice to
    :func:`ctxgraph.memory.recall.choose`; a note on the choice, or "").

    A project named (``wanted``) is searched. Else, with several projects
    indexed and a root known, the root's: the project indexed from that
    folder, else the one of its id."""
    if wanted or root is None or len(projects) < 2:
        return wanted, ""
    by_root = [p for p in projects if p.root == str(root.path)]
    by_id = [p for p in projects if p.id == root.project]
    for p in (*by_root, *by_id)[:1]:
        return p.id, f"associative memory: project {p.id}, the root's: {root.describe()}"
    return None, f"associative memory: no indexed project is the root's: {root.describe()}"


__all__ = ["ProjectRoot", "find_root", "git_work_tree", "pick_project", "project_id"]
