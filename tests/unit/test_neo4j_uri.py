"""The Neo4j URI schemes have one home (``ctxgraph.core.neo4j_uri``): the MCP
server's ``--project NAME=URI`` and the store's driver accept and refuse the
same ones, case-insensitively."""

from __future__ import annotations

import re

import pytest

from ctxgraph.core.neo4j_uri import NEO4J_SCHEMES, is_neo4j_uri
from ctxgraph.errors import ConfigurationError
from ctxgraph.graph.neo4j_store import Neo4jSettings, make_driver
from ctxgraph.mcp.projects import spec_for


@pytest.mark.parametrize("scheme", NEO4J_SCHEMES)
def test_every_scheme_names_a_neo4j_project_and_makes_a_driver(scheme: str) -> None:
    uri = f"{scheme.upper()}://127.0.0.1:7687"
    assert is_neo4j_uri(uri)
    spec = spec_for("p", f"{uri}#graph")
    assert (spec.kind, spec.location, spec.database) == ("neo4j", uri, "graph")
    make_driver(Neo4jSettings(uri=uri, user="neo4j", password=None)).close()  # no connection is made


@pytest.mark.parametrize("uri", ["https://db.example.com", "neo4j+x://h:7687", "bolt:/h"])
def test_other_uris_are_refused_by_both_with_the_same_list(uri: str) -> None:
    assert not is_neo4j_uri(uri)
    listed = re.escape(", ".join(NEO4J_SCHEMES))
    if "://" in uri:
        with pytest.raises(ConfigurationError, match=f"use one of {listed}$"):
            spec_for("p", uri)
    else:  # no "://": a file name for the MCP server
        assert spec_for("p", uri).kind == "embedded"
    with pytest.raises(ConfigurationError, match=f"use one of {listed}$"):
        make_driver(Neo4jSettings(uri=uri, user="neo4j", password=None))
