"""The URI schemes of a Neo4j server, in one place: the Neo4j store refuses
any other when it makes its driver, and the MCP server tells a Neo4j project
(``--project NAME=URI``) from an embedded store file by them. Pure."""

from __future__ import annotations

#: ``neo4j`` (routing) and ``bolt`` (one server), each plain, ``+s`` (TLS,
#: certificate verified) or ``+ssc`` (TLS, self-signed certificate accepted).
NEO4J_SCHEMES = ("neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc")


def uri_scheme(uri: str) -> str:
    """The scheme of ``uri`` (what comes before ``://``), in lower case."""
    return uri.split("://", 1)[0].lower()


def is_neo4j_uri(uri: str) -> bool:
    """Whether ``uri`` has ``://`` and one of :data:`NEO4J_SCHEMES` before it."""
    return "://" in uri and uri_scheme(uri) in NEO4J_SCHEMES
