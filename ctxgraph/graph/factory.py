"""The one place a store is chosen and opened: from where it is.

A location is an embedded store file — a path, or ``sqlite://`` followed by
one (``sqlite:///home/me/graph.db``) — or a Neo4j server: ``neo4j://``,
``bolt://`` and their ``+s``/``+ssc`` variants (:data:`NEO4J_SCHEMES`), with
``#DATABASE`` naming a database. The user, password and database of a server
come beside the URI (the options and ``NEO4J_*`` variables, as
:meth:`Neo4jSettings.from_env` reads them): a URI holding credentials is
refused, and a message never repeats more of a URI than its scheme.

    store = open_store(parse_location("bolt://localhost:7687"), password=...)
    store = open_store(parse_location(".ctxgraph/graph.db"), read_only=True)

The Neo4j driver is imported only when a server is opened; it is the
``neo4j`` extra (``pip install 'ctxgraph[neo4j]'``), and a server named
without it is one error saying so.
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ctxgraph.core.neo4j_uri import NEO4J_SCHEMES, uri_scheme
from ctxgraph.errors import ConfigurationError
from ctxgraph.graph.local.store import default_path
from ctxgraph.graph.store import KnowledgeStore

#: The scheme of an embedded store file given as a URI.
EMBEDDED_SCHEME = "sqlite"
#: The variable naming the embedded store when no location is given.
STORE_ENV = "CTXGRAPH_STORE"
#: What to install for a Neo4j store: the driver is not part of a plain ``pip install ctxgraph``.
DRIVER_EXTRA = "ctxgraph[neo4j]"


@dataclass(frozen=True)
class StoreLocation:
    """Where one store is: an embedded file or a Neo4j server (and database)."""

    kind: Literal["embedded", "neo4j"]
    #: the file's path (embedded) or the server's URI without ``#DATABASE`` (neo4j)
    where: str
    database: str | None = None

    @property
    def path(self) -> Path | None:
        """The embedded store's file; None for a server."""
        return Path(self.where) if self.kind == "embedded" else None

    def __str__(self) -> str:
        return self.where


def parse_location(location: str | os.PathLike[str], *, database: str | None = None) -> StoreLocation:
    """The store ``location`` names. A path object is always a file; a string
    is a Neo4j URI (``database`` unless its ``#DATABASE`` names one), a
    ``sqlite://`` URI or a path. Anything else with ``://`` is refused."""
    if not isinstance(location, str):
        return StoreLocation("embedded", os.fspath(location))
    if not location.strip():
        raise ConfigurationError("no store location: give a path or a URI")
    if "://" not in location:
        return StoreLocation("embedded", location)
    scheme = uri_scheme(location)
    if scheme == EMBEDDED_SCHEME:
        return _embedded_uri(location)
    if scheme in NEO4J_SCHEMES:
        return neo4j_location(location, database)
    raise ConfigurationError(f"unsupported store URI scheme {scheme!r}: give a path or {EMBEDDED_SCHEME}:///PATH, "
                             f"or a Neo4j URI: use one of {', '.join(NEO4J_SCHEMES)}")


def _embedded_uri(uri: str) -> StoreLocation:
    path = uri.split("://", 1)[1]
    if not path or "?" in path or "#" in path:
        raise ConfigurationError(f"{EMBEDDED_SCHEME}:// takes the store file's path and nothing else, "
                                 f"e.g. {EMBEDDED_SCHEME}:///home/me/graph.db")
    return StoreLocation("embedded", path)


def neo4j_location(uri: str, database: str | None = None) -> StoreLocation:
    """The Neo4j server ``uri`` names (``#DATABASE``, else ``database``); a
    URI of another scheme, or one holding credentials, is refused."""
    scheme = uri_scheme(uri)
    if "://" not in uri or scheme not in NEO4J_SCHEMES:
        raise ConfigurationError(f"unsupported Neo4j URI scheme {scheme!r}: use one of {', '.join(NEO4J_SCHEMES)}")
    if "@" in urllib.parse.urlsplit(uri).netloc:
        raise ConfigurationError("the Neo4j URI must not contain credentials (user:password@): "
                                 "set NEO4J_USER and NEO4J_PASSWORD or NEO4J_PASSWORD_FILE instead")
    where, _, fragment = uri.partition("#")
    return StoreLocation("neo4j", where, fragment or database or None)


def chosen_location(store: StoreLocation | str | os.PathLike[str] | None = None, *, neo4j_uri: str | None = None,
                    database: str | None = None) -> StoreLocation:
    """The store a caller names: the Neo4j server ``neo4j_uri``, else
    ``store`` (a location, or as :func:`parse_location` reads it), else the file ``CTXGRAPH_STORE``
    names, else the project's embedded store
    (:func:`~ctxgraph.graph.local.store.default_path`)."""
    if neo4j_uri:
        return neo4j_location(neo4j_uri, database)
    if isinstance(store, StoreLocation):
        return store
    if store is not None and os.fspath(store):
        return parse_location(store, database=database)
    env = os.environ.get(STORE_ENV)
    return parse_location(Path(env) if env else default_path())


def open_store(location: StoreLocation, *, read_only: bool = False, user: str | None = None,
               password: str | None = None) -> KnowledgeStore:
    """Open the store at ``location``: the embedded file (created, with its
    schema, unless ``read_only``: then it must exist and nothing is written),
    or the Neo4j server, its credentials checked (``user`` and ``password``,
    else the ``NEO4J_*`` variables) and its schema applied unless
    ``read_only`` (then every session is a READ one)."""
    if location.kind == "embedded":
        from ctxgraph.graph.local import LocalStore

        return LocalStore.open(Path(location.where), read_only=read_only)
    try:
        from ctxgraph.graph.neo4j_store import Neo4jSettings, Neo4jStore
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "neo4j":
            raise
        raise ConfigurationError(f"a Neo4j store needs `pip install '{DRIVER_EXTRA}'`") from None
    settings = Neo4jSettings.from_env(uri=location.where, user=user, password=password, database=location.database)
    return Neo4jStore.connect(settings, read_only=read_only)


__all__ = ["DRIVER_EXTRA", "EMBEDDED_SCHEME", "STORE_ENV", "StoreLocation", "chosen_location", "neo4j_location",
           "open_store", "parse_location"]
