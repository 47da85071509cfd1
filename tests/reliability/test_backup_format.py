"""Import refuses a file that is not a valid export — unknown format or
version, a malformed line — whole, naming the line, before writing anything."""

from __future__ import annotations

import json

import pytest

from ctxgraph.errors import InvalidDocumentError
from ctxgraph.graph.backup import ExportReader, encode_row, import_rows_into, node_row, rel_row
from ctxgraph.graph.store import KnowledgeStore

HEAD = '{"format": "ctxgraph-export", "version": 1}'
T1 = encode_row(node_row("Task", "t1", {"id": "t1", "name": "one"}))
T2 = encode_row(node_row("Task", "t2", {"id": "t2", "name": "two"}))
DEP = encode_row(rel_row("DEPENDS_ON", ("Task", "t2"), ("Task", "t1"), {}))


def node(label: str = "Task", node_id: str = "t3", **props: object) -> str:
    return json.dumps({"kind": "node", "label": label, "id": node_id, "props": {"id": node_id, **props}})


BAD: dict[str, tuple[list[str] | bytes, str]] = {
    "empty file": (b"", "empty file"),
    "only blank lines": (b"\n\n  \n", "empty file"),
    "no header": ([T1, T2], "line 1: not a ctxgraph export"),
    "other format": (['{"format": "neo4j-dump", "version": 1}', T1], "line 1: not a ctxgraph export"),
    "version 2": (['{"format": "ctxgraph-export", "version": 2}', T1], "line 1: unsupported export version 2"),
    "version as text": (['{"format": "ctxgraph-export", "version": "1"}'], "unsupported export version '1'"),
    "version true": (['{"format": "ctxgraph-export", "version": true}'], "unsupported export version True"),
    "header not an object": (["[1, 2]"], "line 1: not a ctxgraph export"),
    "truncated line": ([HEAD, T1, T2[:-5], DEP], "line 3: not JSON"),
    "not utf-8": (HEAD.encode() + b"\n" + T1.encode()[:-3] + b'\xff"}}\n', "line 2: not UTF-8"),
    "NaN": ([HEAD, node(importance=float("nan"))], "line 2: not JSON"),
    "row not an object": ([HEAD, T1, '"text"'], "line 3: expected a JSON object"),
    "unknown kind": ([HEAD, '{"kind": "edge"}'], "line 2: unknown row kind 'edge'"),
    "unknown label": ([HEAD, node("Evil")], "line 2: unknown node label 'Evil'"),
    "shared label": ([HEAD, node("Knowledge")], "line 2: unknown node label 'Knowledge'"),
    "extra key": ([HEAD, T1[:-1] + ', "x": 1}'], "line 2: a node row has exactly"),
    "blank id": ([HEAD, json.dumps({"kind": "node", "label": "Task", "id": "", "props": {"id": ""}})],
                 "line 2: node id '' is not non-empty text"),
    "id mismatch": ([HEAD, json.dumps({"kind": "node", "label": "Task", "id": "a", "props": {"id": "b"}})],
                    "line 2: props.id must equal"),
    "file without path": ([HEAD, node("File", "a.py")], "line 2: a File node needs props.path"),
    "tag name differs": ([HEAD, node("Tag", "x", name="y")], "line 2: a Tag node needs props.name"),
    "null property": ([HEAD, node(name=None)], "line 2: property 'name': None"),
    "map property": ([HEAD, node(name={"a": 1})], "line 2: property 'name': {'a': 1}"),
    "huge integer": ([HEAD, node(n=2**63)], "line 2: property 'n'"),
    "infinite float": ([HEAD, T1.replace('"name": "one"', '"name": 1e999')], "line 2: property 'name'"),
    "mixed list": ([HEAD, node(tags=["a", 1])], "line 2: property 'tags': list mixes int, str"),
    "nested list": ([HEAD, node(tags=[["a"]])], "line 2: property 'tags': list holds"),
    "lone surrogate": ([HEAD, node(name="\ud800")], "line 2: property 'name'"),
    "unknown rel type": ([HEAD, T1, T2, DEP.replace("DEPENDS_ON", "OWNS")], "line 4: unknown relationship type"),
    "dangling rel": ([HEAD, T1, DEP], "line 3: src ['Task', 't2'] is not a node of this file"),
    "rel before its node": ([HEAD, T1, DEP, T2], "line 3: src"),
    "node after rels": ([HEAD, T1, T2, DEP, node()], "line 5: a node row after relationship rows"),
    "duplicate node": ([HEAD, T1, T1], "line 3: node ['Task', 't1'] given twice"),
    "duplicate rel": ([HEAD, T1, T2, DEP, DEP], "line 5: relationship"),
    "same knowledge id twice": ([HEAD, node("Pattern", "k:1"), node("Gotcha", "k:1")],
                                "line 3: knowledge id 'k:1' is both Pattern and Gotcha"),
    "bad end": ([HEAD, T1, DEP.replace('["Task", "t2"]', '["Task"]')], "line 3: src must be [label, id]"),
    "bad last line": ([HEAD, T1, T2, DEP, "}"], "line 5: not JSON"),
}


def as_bytes(content: list[str] | bytes) -> bytes:
    return content if isinstance(content, bytes) else ("\n".join(content) + "\n").encode("utf-8")


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_file_is_refused_whole_naming_the_line(store: KnowledgeStore, case: str) -> None:
    content, expected = BAD[case]
    before = store.stats()
    with pytest.raises(InvalidDocumentError) as err:
        import_rows_into(store, ExportReader.from_bytes(as_bytes(content), "backup.jsonl"))
    message = str(err.value)
    assert message.startswith("backup.jsonl: invalid document: ")
    assert expected in message
    assert "\n" not in message and len(message) < 400
    assert store.stats() == before  # nothing written, even for the valid lines before the bad one


def test_blank_lines_and_crlf_are_tolerated(store: KnowledgeStore) -> None:
    data = (HEAD + "\r\n\r\n" + T1 + "\r\n" + T2 + "\n\n" + DEP).encode()  # no newline at the end
    summary = import_rows_into(store, ExportReader.from_bytes(data))
    assert (summary.nodes, summary.relationships) == (2, 1)
    assert store.stats().relationships == {"DEPENDS_ON": 1}


def test_store_import_rows_checks_each_row_and_missing_ends(store: KnowledgeStore) -> None:
    with pytest.raises(InvalidDocumentError, match="unknown node label"):
        store.import_rows([{"kind": "node", "label": "Evil", "id": "x", "props": {"id": "x"}}])
    with pytest.raises(InvalidDocumentError, match="DEPENDS_ON relationship"):
        store.import_rows([json.loads(T1), json.loads(DEP)])  # t2 is missing
    assert store.stats().relationships == {}
