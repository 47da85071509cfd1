"""The store factory (``ctxgraph.graph.factory``) reads a location — a path,
``sqlite://PATH`` or a Neo4j URI — as one store, and refuses anything else
with one message that never repeats more of the URI than its scheme."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxgraph.core.neo4j_uri import NEO4J_SCHEMES
from ctxgraph.errors import ConfigurationError, StoreUnavailableError
from ctxgraph.graph.factory import StoreLocation, chosen_location, neo4j_location, open_store, parse_location
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.local.store import default_path


@pytest.mark.parametrize(("text", "where"), [
    ("graph.db", "graph.db"),
    ("/srv/ctx/graph.db", "/srv/ctx/graph.db"),
    ("sqlite:///srv/ctx/graph.db", "/srv/ctx/graph.db"),
    ("SQLITE:///srv/ctx/graph.db", "/srv/ctx/graph.db"),
    ("sqlite://graph.db", "graph.db"),
    ("dir/with:colon.db", "dir/with:colon.db"),
])
def test_a_path_or_a_sqlite_uri_is_an_embedded_store(text: str, where: str) -> None:
    place = parse_location(text, database="ignored")
    assert place == StoreLocation("embedded", where)
    assert place.path == Path(where) and str(place) == where


def test_a_path_object_is_always_a_file() -> None:
    assert parse_location(Path("neo4j://host")).kind == "embedded"


@pytest.mark.parametrize("scheme", NEO4J_SCHEMES)
def test_every_neo4j_scheme_is_a_server_with_its_database(scheme: str) -> None:
    uri = f"{scheme.upper()}://db.example.com:7687"
    assert parse_location(f"{uri}#graph", database="other") == StoreLocation("neo4j", uri, "graph")
    assert parse_location(uri, database="other") == StoreLocation("neo4j", uri, "other")
    place = parse_location(uri)
    assert (place.database, place.path, str(place)) == (None, None, uri)


@pytest.mark.parametrize(("text", "message"), [
    ("https://user:hunter2@db.example.com", "unsupported store URI scheme 'https': give a path or sqlite:///PATH, "
                                            "or a Neo4j URI: use one of " + ", ".join(NEO4J_SCHEMES)),
    ("neo4j+x://hunter2@h:7687", "unsupported store URI scheme 'neo4j+x'"),
    ("bolt://neo4j:hunter2@h:7687", "the Neo4j URI must not contain credentials"),
    ("sqlite://", "sqlite:// takes the store file's path and nothing else"),
    ("sqlite:///graph.db?mode=ro", "sqlite:// takes the store file's path and nothing else"),
    ("sqlite:///graph.db#hunter2", "sqlite:// takes the store file's path and nothing else"),
    ("  ", "no store location"),
])
def test_a_bad_location_is_one_clear_error_without_the_secret(text: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        parse_location(text)
    assert str(caught.value).startswith(message)
    assert "hunter2" not in str(caught.value) and "\n" not in str(caught.value)


def test_the_neo4j_option_takes_a_neo4j_uri_only() -> None:
    with pytest.raises(ConfigurationError, match=r"^unsupported Neo4j URI scheme 'sqlite'"):
        neo4j_location("sqlite:///graph.db")
    with pytest.raises(ConfigurationError, match=r"^unsupported Neo4j URI scheme 'graph\.db'"):
        neo4j_location("graph.db")


def test_the_chosen_store_server_then_given_then_variable_then_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CTXGRAPH_STORE", raising=False)
    assert chosen_location() == StoreLocation("embedded", str(default_path()))
    monkeypatch.setenv("CTXGRAPH_STORE", "env.db")
    assert chosen_location() == StoreLocation("embedded", "env.db")
    assert chosen_location("sqlite:///given.db") == StoreLocation("embedded", "/given.db")
    assert chosen_location("given.db", neo4j_uri="bolt://h:1", database="d") == StoreLocation("neo4j", "bolt://h:1", "d")
    assert chosen_location(neo4j_uri="bolt://h:1#g", database="d") == StoreLocation("neo4j", "bolt://h:1", "g")
    place = StoreLocation("neo4j", "neo4j://h:1")
    assert chosen_location(place) is place


def test_open_store_opens_the_embedded_file_and_reads_it_again(tmp_path: Path) -> None:
    uri = f"sqlite://{tmp_path}/graph.db"
    with pytest.raises(StoreUnavailableError):
        open_store(parse_location(uri), read_only=True)  # read-only: it must exist; nothing is created
    assert not (tmp_path / "graph.db").exists()
    store = open_store(parse_location(uri))
    try:
        assert isinstance(store, LocalStore) and store.location == str(tmp_path / "graph.db")
    finally:
        store.close()
    reader = open_store(parse_location(tmp_path / "graph.db"), read_only=True)
    reader.close()


def test_the_factory_is_the_one_place_a_store_is_opened() -> None:
    package = Path(__file__).resolve().parents[2] / "ctxgraph"
    stores = (package / "graph" / "local", package / "graph" / "neo4j_store")
    opening = re.compile(r"\b(LocalStore\.open|Neo4jStore\.connect)\(")
    found = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                   if not any(p.is_relative_to(s) for s in stores) and opening.search(p.read_text(encoding="utf-8")))
    assert found == ["graph/factory.py"]
