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

from ctxgraph.graph.factory import StoreLocation, open_store, parse_location
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


#: The image of the Neo4j testcontainers starts: the official one, or the stand-in
#: scripts/docker_stack.py builds under its name where no registry is reachable.
NEO4J_IMAGE = os.environ.get("CTXGRAPH_TEST_NEO4J_IMAGE", "neo4j:5.26-community")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _neo4j_container() -> Iterator[object]:
    """Neo4j in a container, by testcontainers' Neo4j module (``testcontainers.community.neo4j``).

    Ryuk (testcontainers' reaper, an image of its own) is off unless
    ``TESTCONTAINERS_RYUK_DISABLED`` says otherwise: the ``with`` block removes
    the container. On an engine without a bridge network (``dockerd
    --bridge=none``) the container shares the host's network, Neo4j listening
    on free loopback ports instead of mapped ones."""
    import docker  # type: ignore[import-untyped]
    from testcontainers.community.neo4j import Neo4jContainer
    from testcontainers.core.config import testcontainers_config

    from ctxgraph.graph.neo4j_store import Neo4jSettings

    if "TESTCONTAINERS_RYUK_DISABLED" not in os.environ:
        testcontainers_config.ryuk_disabled = True
    client = docker.from_env(timeout=10)
    try:
        bridged = bool(client.networks.list(names=["bridge"]))
    finally:
        client.close()
    password = "ctxgraph-test-" + os.urandom(6).hex()
    env = {"NEO4J_internal_dbms_index_vector_standard__merge__factor": "2"}
    if bridged:
        container = Neo4jContainer(NEO4J_IMAGE, password=password)
    else:
        bolt = _free_port()
        container = _host_network_neo4j()(NEO4J_IMAGE, port=bolt, password=password, network_mode="host")
        env |= {"NEO4J_server_default__listen__address": "127.0.0.1",
                "NEO4J_server_bolt_listen__address": f"127.0.0.1:{bolt}",
                "NEO4J_server_http_listen__address": f"127.0.0.1:{_free_port()}"}
    for name, value in env.items():
        container.with_env(name, value)
    with container:
        yield Neo4jSettings(uri=container.get_connection_url(), user="neo4j", password=password)


def _host_network_neo4j() -> type:
    """Made on first use: testcontainers is imported only where an engine answers."""
    from testcontainers.community.neo4j import Neo4jContainer

    class HostNetworkNeo4j(Neo4jContainer):  # type: ignore[misc]
        """Neo4j on the host's network: its own port on 127.0.0.1, nothing mapped."""

        def start(self) -> HostNetworkNeo4j:
            self.ports = {}  # Docker refuses published ports with host networking
            return super().start()  # type: ignore[no-any-return]

        def get_container_host_ip(self) -> str:
            return "127.0.0.1"

        def get_exposed_port(self, port: int) -> int:
            return port

    return HostNetworkNeo4j


@pytest.fixture(scope="session")
def neo4j_settings() -> Iterator[object]:
    from ctxgraph.graph.neo4j_store import Neo4jSettings

    if os.environ.get("NEO4J_URI"):
        yield Neo4jSettings.from_env()
        return
    if _docker_answers():
        yield from _neo4j_container()
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
    from ctxgraph.graph.neo4j_store import Neo4jSettings

    assert isinstance(neo4j_settings, Neo4jSettings)
    store = open_store(StoreLocation("neo4j", neo4j_settings.uri, neo4j_settings.database),
                       user=neo4j_settings.user, password=neo4j_settings.password)
    yield store
    store.close()


@pytest.fixture(params=["local", "neo4j"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KnowledgeStore]:
    """An empty store of each kind, each opened by the store factory."""
    if request.param == "local":
        local = open_store(parse_location(tmp_path / "graph.db"))
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
