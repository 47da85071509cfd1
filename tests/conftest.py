"""Fixtures: every store test runs on the embedded store and on a real Neo4j.

Neo4j comes from ``NEO4J_URI`` (with ``NEO4J_PASSWORD`` or
``NEO4J_PASSWORD_FILE``) when set — `scripts/neo4j_local.py run -- ...` sets
them — else from testcontainers when a Docker engine answers, else the Neo4j
tests are skipped. With ``CI=true`` a missing Neo4j fails the run instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from importlib.resources.abc import Traversable
from pathlib import Path

import pytest

from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _docker_answers() -> bool:
    if not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return False
    try:
        import docker  # type: ignore[import-untyped]

        client = docker.from_env(timeout=3)
    except Exception:
        return False
    try:
        return bool(client.ping())
    except Exception:
        return False
    finally:
        client.close()


@pytest.fixture(scope="session")
def neo4j_settings() -> Iterator[object]:
    from ctxgraph.graph.neo4j_store import Neo4jSettings

    if os.environ.get("NEO4J_URI"):
        yield Neo4jSettings.from_env()
        return
    if _docker_answers():
        from testcontainers.neo4j import Neo4jContainer

        password = "ctxgraph-test-" + os.urandom(6).hex()
        with Neo4jContainer("neo4j:5.26-community", password=password) as container:
            yield Neo4jSettings(uri=container.get_connection_url(), user="neo4j", password=password)
        return
    message = (
        "no Neo4j: set NEO4J_URI (python scripts/neo4j_local.py run -- pytest ...) "
        "or run a Docker engine"
    )
    if IN_CI:
        pytest.fail(f"CI=true and {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def neo4j_store(neo4j_settings: object) -> Iterator[KnowledgeStore]:
    from ctxgraph.graph.neo4j_store import Neo4jSettings, Neo4jStore

    assert isinstance(neo4j_settings, Neo4jSettings)
    store = Neo4jStore.connect(neo4j_settings)
    yield store
    store.close()


@pytest.fixture(params=["local", "neo4j"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KnowledgeStore]:
    """An empty store of each kind."""
    if request.param == "local":
        local = LocalStore.open(tmp_path / "graph.db")
        yield local
        local.close()
    else:
        shared: KnowledgeStore = request.getfixturevalue("neo4j_store")
        shared.clear()
        yield shared
        shared.clear()


@pytest.fixture(scope="session", autouse=True)
def _onnx_model_built() -> None:
    """The ONNX file the default embedding runtime builds on its first use
    (docs/embedding.md), built before any test runs: a CLI process under test
    then never prints the one-time build message where a test reads stderr."""
    try:
        from ctxgraph.memory.embed_onnx import model_file

        model_file("onnx")
    except Exception:  # no model or no onnxruntime: nothing embeds by ONNX
        return


@pytest.fixture(scope="session")
def extractor() -> SignalExtractor:
    return SignalExtractor()


@pytest.fixture
def svc(store: KnowledgeStore, extractor: SignalExtractor) -> ContextService:
    """A service on an empty store of each kind (closing is the store fixture's job)."""
    return ContextService(store, extractor)


@pytest.fixture(scope="session")
def demo_root() -> Traversable:
    from ctxgraph.demo import demo_dir

    return demo_dir()
