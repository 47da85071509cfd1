"""The export/import tables follow the graph schema: a label or relationship
type added to the Cypher must be added to ``ctxgraph.graph.backup`` and to the
import statements, or an export would refuse to import (or lose data)."""

from __future__ import annotations

import re
from pathlib import Path

from ctxgraph import cypher
from ctxgraph.graph.backup import (
    DERIVED_LABELS,
    DROPPED_REL_TYPES,
    KEY_PROPERTY,
    KNOWLEDGE_LABELS,
    NODE_LABELS,
    REL_TYPES,
    UNEXPORTED_LABELS,
)

CYPHER_DIR = Path(cypher.__file__).resolve().parent
NODE_PATTERN = re.compile(r"\(\s*\w*\s*:\s*([A-Z]\w*)")
REL_PATTERN = re.compile(r"\[\s*\w*\s*:\s*([A-Z_|]+)")


def cypher_texts() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(CYPHER_DIR.rglob("*.cypher"))}


def test_every_constrained_label_is_exported_with_its_key() -> None:
    schema = cypher.load("schema")
    constrained = dict(re.findall(r"FOR \(n:(\w+)\) REQUIRE n\.(\w+) IS UNIQUE", schema))
    assert constrained.pop("Knowledge") == "id"
    for label in UNEXPORTED_LABELS:
        assert constrained.pop(label) == "id"
    for label, key in constrained.items():
        assert label in NODE_LABELS, f"backup.NODE_LABELS lacks {label}"
        assert KEY_PROPERTY.get(label, "id") == key, f"backup.KEY_PROPERTY: {label} is keyed by {key}"


def test_every_label_and_type_in_the_cypher_is_known_to_the_import() -> None:
    labels: set[str] = set()
    types: set[str] = set()
    for text in cypher_texts().values():
        labels.update(NODE_PATTERN.findall(text))
        for group in REL_PATTERN.findall(text):
            types.update(t for t in group.split("|") if t)
    assert labels - {"Knowledge", *UNEXPORTED_LABELS, *DERIVED_LABELS} <= set(NODE_LABELS), labels - set(NODE_LABELS)
    # (mentions_drop deletes the relationships of a type no longer kept)
    assert types <= {*REL_TYPES, *DROPPED_REL_TYPES}, types - set(REL_TYPES)


def test_import_statements_cover_every_label_and_type() -> None:
    nodes = cypher.load("import_nodes")
    rels = cypher.load("import_relationships")
    for label in NODE_LABELS:
        if label in KNOWLEDGE_LABELS:
            continue
        key = KEY_PROPERTY.get(label, "id")
        assert f"MERGE (n:{label} {{{key}: row.id}})" in nodes, label
        for end in ("src", "dst"):
            assert f"MATCH (n:{label} {{{key}: row.{end}[1]}}) WHERE row.{end}[0] = '{label}'" in rels, label
    for rel_type in REL_TYPES:
        assert f"WITH * WHERE row.type = '{rel_type}'\n  MERGE (a)-[r:{rel_type}]->(b)" in rels, rel_type
