"""The service opens each store by its location alone (``ctxgraph.graph.factory``):
what one opening wrote, another reads, whichever way the location is spelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgraph.core.models import Task
from ctxgraph.errors import StoreUnavailableError
from ctxgraph.graph.local import LocalStore
from ctxgraph.service import ContextService


def _round_trip(first: str, second: str, **open_args: object) -> None:
    with ContextService.open(first, **open_args) as svc:  # type: ignore[arg-type]
        svc.initialize(reset=True)
        svc.add_task(Task(id="t-factory", objective="Open the store by its location"))
    with ContextService.open(second, read_only=True, **open_args) as svc:  # type: ignore[arg-type]
        assert [t.id for t in svc.list_tasks()] == ["t-factory"]
        with pytest.raises(StoreUnavailableError):
            svc.add_task(Task(id="t-other", objective="refused: read only"))


def test_an_embedded_store_by_path_and_by_sqlite_uri(tmp_path: Path) -> None:
    db = tmp_path / "graph.db"
    _round_trip(f"sqlite://{db}", str(db))
    with ContextService.open(db) as svc:
        assert isinstance(svc.store, LocalStore) and svc.location == str(db)


def test_a_neo4j_server_by_uri(neo4j_settings: object) -> None:
    from ctxgraph.graph.neo4j_store import Neo4jSettings, Neo4jStore

    assert isinstance(neo4j_settings, Neo4jSettings)
    database = f"#{neo4j_settings.database}" if neo4j_settings.database else ""
    credentials = {"neo4j_user": neo4j_settings.user, "neo4j_password": neo4j_settings.password}
    try:
        _round_trip(neo4j_settings.uri + database, neo4j_settings.uri + database, **credentials)
        with ContextService.open(neo4j_settings.uri, **credentials) as svc:  # type: ignore[arg-type]
            assert isinstance(svc.store, Neo4jStore) and svc.location == neo4j_settings.uri
    finally:
        with ContextService.open(neo4j_settings.uri + database, **credentials) as svc:  # type: ignore[arg-type]
            svc.initialize(reset=True)
