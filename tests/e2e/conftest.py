"""Fixtures of the end-to-end tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _fresh_install import FreshInstall, make_fresh_install


@pytest.fixture(scope="session")
def fresh_install(tmp_path_factory: pytest.TempPathFactory) -> FreshInstall:
    """The README's first command, run once per session in a fresh venv."""
    return make_fresh_install(tmp_path_factory.mktemp("fresh-install"))


@pytest.fixture(params=["local", "neo4j"])
def store_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The environment a CLI process needs for each store: nothing for the
    embedded default, the server's NEO4J_ variables (the graph emptied before
    and after) for Neo4j."""
    if request.param == "local":
        yield {}
        return
    from ctxgraph.graph.neo4j_store import Neo4jSettings

    settings = request.getfixturevalue("neo4j_settings")
    shared = request.getfixturevalue("neo4j_store")
    assert isinstance(settings, Neo4jSettings)
    shared.clear()
    yield {"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user, "NEO4J_PASSWORD": settings.password or ""}
    shared.clear()
