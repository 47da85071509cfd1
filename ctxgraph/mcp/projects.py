"""The projects one MCP server serves: a name, a store, and the one
``ContextService`` opened on it (lazily, again after a failure).

A project is an embedded store file, a project folder (its root, with its
store in ``FOLDER/.ctxgraph/graph.db``) or a Neo4j server (``neo4j://``,
``bolt://`` and their ``+s``/``+ssc`` variants; ``URI#DATABASE`` names a
database). Where a project's root is known (the folder given, else as
:func:`ctxgraph.service.root.find_root` finds it from the store), its code is
indexed in the background and kept current
(:class:`~ctxgraph.service.keeper.MemoryKeeper`). Every call on a project runs under that project's lock, so one
service is never used by two requests at once; projects never share a
service, a store or a lock.

A request may be limited to some projects (its bearer token is a project's,
see :mod:`ctxgraph.mcp.transport`): :data:`ALLOWED` holds them while it runs,
and the other projects are, for it, not served at all.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from ctxgraph.errors import ConfigurationError, CtxgraphError, StoreUnavailableError
from ctxgraph.service import ContextService, StoreLocation, parse_location

if TYPE_CHECKING:
    from ctxgraph.service.keeper import MemoryKeeper
    from ctxgraph.service.readiness import Neo4jProbe

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Project names: what a tool's ``project`` argument and a resource URI carry.
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: The name of the one project served when no ``--project`` is given.
DEFAULT_NAME = "default"
#: Where a project folder's store is (as ``ctxgraph init`` makes it in the folder).
STORE_IN_ROOT = Path(".ctxgraph") / "graph.db"
#: The client id of a bearer token that reaches one project: this prefix and its name.
PROJECT_CLIENT = "ctxgraph-project:"
#: The projects the running request may use (None: every one).
ALLOWED: ContextVar[frozenset[str] | None] = ContextVar("ctxgraph_mcp_allowed", default=None)


@dataclass(frozen=True)
class ProjectSpec:
    """Where one project's graph lives."""

    name: str
    kind: Literal["embedded", "neo4j"]
    #: the store file (embedded) or the server's URI without a ``#database`` (neo4j)
    location: str
    database: str | None = None
    #: the project's root, when given (a project folder, or ``--root``); else found from the store
    root: str | None = None
    #: ``root`` came from ``--root`` (not from the project given as a folder)
    root_option: bool = False
    #: with no root given, a Neo4j project looks for one from the current folder
    #: (as every command does); not when several projects are served
    root_from_cwd: bool = True

    @property
    def place(self) -> StoreLocation:
        """Where the project's store is, as the store factory opens it."""
        return StoreLocation(self.kind, self.location, self.database)

    @property
    def identity(self) -> tuple[str, str, str | None]:
        """Two specs with the same identity name the same graph."""
        if self.kind == "embedded":
            return (self.kind, os.path.realpath(self.location), None)
        return (self.kind, self.location.rstrip("/").lower(), self.database)


def parse_project(text: str) -> ProjectSpec:
    """``NAME=PATH`` (an embedded store file, or a project folder: its root)
    or ``NAME=URI[#DATABASE]`` (Neo4j)."""
    name, sep, where = text.partition("=")
    name, where = name.strip(), where.strip()
    if not sep or not where:
        raise ConfigurationError(f"--project {text!r}: expected NAME=PATH or NAME=neo4j://HOST:PORT")
    if not NAME.match(name):
        raise ConfigurationError(
            f"--project {name!r}: a name is 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit")
    return spec_for(name, where)


def spec_for(name: str, where: str, database: str | None = None) -> ProjectSpec:
    """The spec of project ``name`` stored at ``where``: a project folder, or a
    store location (:func:`ctxgraph.graph.factory.parse_location`: a file, a
    ``sqlite://`` URI or a Neo4j URI, with ``#DATABASE`` else ``database``)."""
    path = Path(where).expanduser()
    if "://" not in where and path.is_dir():  # a project folder: its root, its store where `ctxgraph init` puts it
        return ProjectSpec(name=name, kind="embedded", location=str(path / STORE_IN_ROOT),
                           root=str(path.resolve()))
    try:
        found = parse_location(where if "://" in where else path, database=database)
    except ConfigurationError as exc:
        raise ConfigurationError(f"project {name!r}: {exc}") from None
    return spec_of(name, found)


def spec_of(name: str, place: StoreLocation) -> ProjectSpec:
    """The spec of project ``name`` whose store is at ``place``."""
    return ProjectSpec(name=name, kind=place.kind, location=place.where, database=place.database)


def with_roots(specs: Sequence[ProjectSpec], given: Sequence[str], several: bool) -> list[ProjectSpec]:
    """``specs`` with the roots ``--root`` gives: ``FOLDER`` for the one project
    served without ``--project``, ``NAME=FOLDER`` for a project named by
    ``--project`` (a store file or a Neo4j server: a project folder is its own
    root). With several projects, a Neo4j project given no root has none."""
    by_name = {s.name: s for s in specs}
    roots: dict[str, str] = {}
    for text in given:
        name, sep, folder = text.partition("=")
        if not several:
            name, folder = DEFAULT_NAME, text
        elif not sep or not folder.strip():
            raise ConfigurationError(f"--root {text!r}: with --project, give NAME=FOLDER")
        name, folder = name.strip(), folder.strip()
        if name not in by_name:
            raise ConfigurationError(f"--root {text!r}: {name!r} is not a served project")
        if name in roots:
            raise ConfigurationError(f"--root: project {name!r} is given two roots")
        if by_name[name].root is not None:
            raise ConfigurationError(f"--root {text!r}: project {name!r} is a project folder, its own root")
        path = Path(folder).expanduser()
        if not path.is_dir():
            raise ConfigurationError(f"--root {text!r}: {folder!r} is not a folder")
        roots[name] = str(path.resolve())
    return [replace(s, root=roots[s.name], root_option=True) if s.name in roots
            else replace(s, root_from_cwd=False) if several and s.kind == "neo4j" else s for s in specs]


def check_distinct(specs: Sequence[ProjectSpec]) -> None:
    """Refuse two projects of one name, or two names for one store (their data would mix)."""
    seen: dict[str, ProjectSpec] = {}
    stores: dict[tuple[str, str, str | None], str] = {}
    for spec in specs:
        if spec.name in seen:
            raise ConfigurationError(f"project {spec.name!r} is given twice")
        seen[spec.name] = spec
        other = stores.get(spec.identity)
        if other is not None:
            raise ConfigurationError(f"projects {other!r} and {spec.name!r} name the same store; "
                                     "each project needs its own (a file, or a Neo4j server or database)")
        stores[spec.identity] = spec.name


class Project:
    """One served project: its spec, its service (opened on first use) and its lock."""

    def __init__(self, spec: ProjectSpec, *, neo4j_user: str | None = None, neo4j_password: str | None = None,
                 read_only: bool = False) -> None:
        self.spec = spec
        self.neo4j_user = neo4j_user
        self._neo4j_password = neo4j_password
        self.read_only = read_only
        self._svc: ContextService | None = None
        self._lock = threading.Lock()
        self.keeper: MemoryKeeper | None = None
        #: Why the memory is not kept here ("" while it is, or before :meth:`keep_memory`).
        self.memory_off = ""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def is_open(self) -> bool:
        """The store is open (its schema was applied, or checked, when it was opened)."""
        return self._svc is not None

    def neo4j_probe(self, timeout: float) -> Neo4jProbe:
        """A readiness probe of the project's Neo4j store, with the settings its service opens it with."""
        from ctxgraph.service.readiness import Neo4jProbe

        return Neo4jProbe(self.spec.location, user=self.neo4j_user, password=self._neo4j_password,
                          database=self.spec.database, timeout=timeout)

    def _new_service(self) -> ContextService:
        svc = ContextService.open(self.spec.place, neo4j_user=self.neo4j_user, neo4j_password=self._neo4j_password,
                                  read_only=self.read_only, root=self.spec.root)
        if self.spec.root is None and not self.spec.root_from_cwd:
            svc.root = None  # one of several servers: the current folder is not known to be its project
        return svc

    def _open(self) -> ContextService:
        if self._svc is None:
            self._svc = self._new_service()
        return self._svc

    def keep_memory(self, say: Callable[[str], None], *, watch_mode: str = "auto") -> str:
        """Index the project's root in the background and keep it current
        (a second store connection, for the indexer); returns what was done,
        as a line to show."""
        from ctxgraph.service.keeper import keep_memory

        if self.read_only:
            self.memory_off = "--read-only"
        else:
            try:
                svc = self.call(lambda s: s)
            except CtxgraphError as exc:
                self.memory_off = f"the store cannot be opened ({exc})"
            else:
                kept = keep_memory(svc, self._new_service, say=say, watch_mode=watch_mode, label=self.name)
                if isinstance(kept, str):
                    self.memory_off = kept
                else:
                    self.keeper = kept
        if self.keeper is None:
            return f"project {self.name}: associative memory not indexed here: {self.memory_off}"
        return f"project {self.name}: {self.keeper.describe()}"

    def memory_status(self) -> dict[str, object]:
        """The background index's state (:meth:`MemoryKeeper.status`), or why there is none."""
        if self.keeper is None:
            return {"state": "off", "reason": self.memory_off or "not started"}
        return self.keeper.status()

    def history_status(self) -> dict[str, int] | None:
        """The background import of the project's history (git commits): runs done, commits
        imported, 1 when the latest run stopped early (more to import); None when there is none."""
        past = self.keeper.on_past if self.keeper is not None else None
        if past is None:
            return None
        return {"runs": past.runs, "imported": past.imported, "partial": int(past.partial)}

    def call(self, fn: Callable[[ContextService], T]) -> T:
        """``fn(service)`` under the project's lock; the store is opened first if it is not open."""
        with self._lock:
            return fn(self._open())

    def call_or_degrade(self, fn: Callable[[ContextService], T]) -> T:
        """As :meth:`call`, but when the store cannot be opened ``fn`` runs on a
        service without a store (``ContextService.unavailable``), as
        ``ctxgraph context --task-file`` does: only for work that can be done
        from nothing stored (the context of an unsaved task)."""
        with self._lock:
            try:
                svc = self._open()
            except StoreUnavailableError as exc:
                svc = ContextService.unavailable(self.spec.location, str(exc))
            return fn(svc)

    def try_open(self) -> str | None:
        """Open the store now; the reason when it cannot be (the server still serves it, lazily)."""
        try:
            self.call(lambda svc: None)
        except CtxgraphError as exc:
            return str(exc)
        return None

    def close(self) -> None:
        if self.keeper is not None:  # first: its run is cancelled and its store closed
            self.keeper.stop()
            self.keeper = None
        with self._lock:
            if self._svc is not None:
                try:
                    self._svc.close()
                except Exception as exc:  # closing must not hide why the server stopped
                    log.warning("closing project %s: %s", self.name, exc)
                self._svc = None


class Projects:
    """The served projects by name, with the default one (the only one, or the one named)."""

    def __init__(self, projects: Sequence[Project], default: str | None = None) -> None:
        if not projects:
            raise ConfigurationError("no project to serve")
        self.by_name = {p.name: p for p in projects}
        if default is not None and default not in self.by_name:
            raise ConfigurationError(f"--default-project {default!r} is not a served project ({self.names()})")
        self.default = default or (projects[0].name if len(projects) == 1 else None)

    def visible(self) -> list[Project]:
        """The projects the running request may use, by name."""
        allowed = ALLOWED.get()
        return [self.by_name[n] for n in sorted(self.by_name) if allowed is None or n in allowed]

    def names(self) -> str:
        return ", ".join(p.name for p in self.visible())

    def get(self, name: str | None) -> Project:
        """The project called ``name`` (``None``: the default one) among those
        the running request may use."""
        visible = {p.name: p for p in self.visible()}
        if name is None:
            if self.default in visible:
                return visible[self.default]
            if len(visible) == 1 and ALLOWED.get() is not None:
                return next(iter(visible.values()))  # the one project of the request's token
            raise ConfigurationError(f"several projects are served ({self.names()}): name one with `project`")
        found = visible.get(name)
        if found is None:
            raise ConfigurationError(f"unknown project: {name!r} (served: {self.names()})")
        return found

    def close(self) -> None:
        for project in self.by_name.values():
            project.close()
