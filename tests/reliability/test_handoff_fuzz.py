"""Fuzzing the handoff parser and ``ContextService.ingest_handoff``.

Random YAML and JSON (handoff-shaped or not), wrong types, huge strings, deep
nesting, NUL bytes, invalid UTF-8, lone surrogates, YAML alias and merge-key
bombs, 10 MB files, binary: every case ends in an ``InvalidDocumentError``
with a one-line message, or in a valid ingest — never another exception — and
a refused document writes nothing.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import yaml
from _reliability import FUZZ_CASES, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from ctxgraph.core.documents import MAX_DOCUMENT_BYTES, load_handoff
from ctxgraph.core.models import Task
from ctxgraph.errors import InvalidDocumentError, UnknownTaskError
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor

TASK_ID = "t-fuzz"
KEYS = ["task_id", "summary", "success", "completed_at", "files_created", "files_modified",
        "dependencies_for_next", "patterns_discovered", "gotchas", "decisions", "open_questions"]
ITEM_KEYS = ["path", "purpose", "description", "lines", "file", "reason", "pattern", "location", "applies_to",
             "issue", "severity", "decision", "rationale", "question", "context", "recommendation", "blocking"]

# ------------------------------------------------------------------ strategies

nasty_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from([
        "", " ", "\x00", "a\x00b", "\ud800", "\udfff", "\u2028", "\ufeff", "😀", "İ", "\\", "'", '"', "*a", "&a",
        "!!python/object:os.system", "2026-13-45", "2026-03-02", "yesterday", "null", "~", ".nan", "1e999",
        "9" * 5000, "x" * 2000, "w " * 3000, "src/" + "é" * 3000 + ".py", "../../etc/passwd", "src/./a//b.py",
        "MATCH (n) DETACH DELETE n", "'; DROP TABLE nodes; --", "critical", "HIGH", "low",
    ]),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**30), st.floats(allow_nan=True),
    nasty_text,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(ITEM_KEYS + KEYS), st.text(max_size=8)), inner, max_size=4),
    ),
    max_leaves=20,
)
item = st.one_of(
    json_values,
    st.dictionaries(st.sampled_from(ITEM_KEYS), json_values, max_size=6),
    st.fixed_dictionaries({
        "pattern": nasty_text, "issue": nasty_text, "decision": nasty_text, "question": nasty_text,
        "path": nasty_text, "file": nasty_text,
    }, optional={"applies_to": st.lists(nasty_text, max_size=3), "severity": nasty_text,
                 "lines": st.one_of(st.integers(), nasty_text), "blocking": json_values}),
)
handoff_shaped = st.fixed_dictionaries(
    {"task_id": st.one_of(st.just(TASK_ID), st.just(TASK_ID), json_values)},
    optional={
        "summary": st.one_of(nasty_text, json_values),
        "success": json_values,
        "completed_at": st.one_of(st.sampled_from(["2026-03-02T10:05:00Z", "2026-03-02", "soon"]), json_values),
        **{key: st.one_of(st.lists(item, max_size=3), json_values) for key in KEYS[4:]},
        "extra": json_values,
    },
)

# Well-typed handoffs with hostile text: these mostly ingest.
words = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30),
    st.sampled_from(["jwt", "login", "MATCH (n) DETACH DELETE n", "'; DROP TABLE nodes; --", "$x", "`x`", "😀",
                     "İstanbul", "a\u2028b", "{{x}}", "%s", "?", "\\", "naïve café"]),
)
good_text = st.lists(words, min_size=1, max_size=5).map(" ".join).filter(lambda t: t.strip() != "")
good_path = st.lists(st.sampled_from(["src", "a b", "..", ".", "x'y", 'q"z', "$(rm)", "é", "ü.py", "a.ts"]),
                     min_size=1, max_size=4).map("/".join)
valid_handoff = st.fixed_dictionaries(
    {"task_id": st.just(TASK_ID), "summary": good_text},
    optional={
        "success": st.booleans(),
        "completed_at": st.sampled_from(["2026-03-02T10:05:00Z", "2026-03-02T12:00:00+02:00"]),
        "files_created": st.lists(st.fixed_dictionaries({"path": good_path}, optional={"purpose": good_text}),
                                  max_size=3),
        "files_modified": st.lists(st.one_of(good_path, st.fixed_dictionaries(
            {"path": good_path}, optional={"lines": st.sampled_from(["1-2", "7", 12]), "purpose": good_text})),
            max_size=3),
        "dependencies_for_next": st.lists(st.fixed_dictionaries({"file": good_path, "reason": good_text}),
                                          max_size=2),
        "patterns_discovered": st.lists(st.fixed_dictionaries(
            {"pattern": good_text}, optional={"applies_to": st.lists(words, max_size=3), "location": good_path}),
            max_size=3),
        "gotchas": st.lists(st.fixed_dictionaries(
            {"issue": good_text}, optional={"severity": st.sampled_from(["low", "HIGH", "critical", "medium"]),
                                            "applies_to": words}), max_size=3),
        "decisions": st.lists(st.fixed_dictionaries({"decision": good_text}, optional={"rationale": good_text}),
                              max_size=2),
        "open_questions": st.lists(st.fixed_dictionaries(
            {"question": good_text}, optional={"blocking": st.booleans(), "context": good_text}), max_size=2),
        "reviewer": json_values,
    },
)


def _yaml(value: Any) -> str:
    try:
        return yaml.safe_dump(value, allow_unicode=True)
    except (yaml.YAMLError, UnicodeEncodeError, TypeError, ValueError):
        return repr(value)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """Bytes of a would-be handoff: serialized structures, mutated, or made up."""
    kind = draw(st.sampled_from(["valid", "valid", "yaml", "json", "text", "binary", "mutated", "special"]))
    if kind == "valid":
        value = draw(valid_handoff)
        return (_yaml(value) if draw(st.booleans()) else _json(value)).encode("utf-8", "surrogatepass")
    if kind in ("yaml", "json", "mutated"):
        value = draw(st.one_of(valid_handoff, handoff_shaped, handoff_shaped, json_values))
        text = _yaml(value) if kind == "yaml" or draw(st.booleans()) else _json(value)
        data = text.encode("utf-8", "surrogatepass")
        if kind == "mutated" and data:
            at = draw(st.integers(0, len(data) - 1))
            junk = draw(st.sampled_from([b"\x00", b"\xff", b"\xc3", b"&a", b"*a", b"!!binary ", b"{", b"]",
                                         b"\n  - ", b": ", b"\t", b"\xef\xbb\xbf", b"\\ud800", b"<<: *a\n"]))
            data = data[:at] + junk + data[at + draw(st.integers(0, 3)):]
        return data
    if kind == "text":
        return draw(st.text(alphabet=st.sampled_from([*"abc:-[]{}&*!|>'\"#%@`,?\n\t \\0x.", "\ud800"]),
                            max_size=200)).encode("utf-8", "surrogatepass")
    if kind == "binary":
        return draw(st.binary(max_size=300))
    return draw(st.sampled_from(SPECIAL))


def alias_bomb(levels: int, width: int) -> bytes:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return ("\n".join(lines) + f"\ntask_id: {TASK_ID}\nsummary: bomb\n").encode()


def merge_bomb(levels: int) -> bytes:
    lines = ["m0: &m0 {k: v}"]
    for i in range(1, levels):
        lines.append(f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: v}}")
    return ("\n".join(lines) + f"\ntask_id: {TASK_ID}\nsummary: bomb\n").encode()


SPECIAL: list[bytes] = [
    alias_bomb(9, 9),  # 81 aliases (under the alias count limit), 9^9 values once expanded
    alias_bomb(30, 3),
    merge_bomb(40),
    b"a: &a [*a]\ntask_id: t-fuzz\nsummary: s\n",  # recursive
    b'{"task_id": "t-fuzz", "summary": "s", "x": ' + b"[" * 150 + b"]" * 150 + b"}",
    b"task_id: t-fuzz\nsummary: s\nx: " + b"{a: " * 300 + b"1" + b"}" * 300 + b"\n",
    b"task_id: t-fuzz\nsummary: s\ncompleted_at: 2026-03-02\n",
    b"task_id: t-fuzz\nsummary: s\ncompleted_at: 2026-02-30\n",
    b"task_id: t-fuzz\nsummary: s\ncompleted_at: 17\n",
    b"task_id: t-fuzz\nsummary: s\ncompleted_at: [2026]\n",
    b"task_id: t-fuzz\nsummary: s\nn: " + b"7" * 10_000 + b"\n",
    b"task_id: t-fuzz\nsummary: s\n? [a, b]\n: c\n",
    b"task_id: t-fuzz\nsummary: s\n1: one\n",
    b"task_id: t-fuzz\nsummary: s\nx: {2026-01-01: a, null: b, 1.5: c}\n",
    b'task_id: t-fuzz\nsummary: "\\ud83d"\n',
    b'task_id: t-fuzz\nsummary: s\nextra: {"k": "\\udc00"}\n',
    b"task_id: t-fuzz\nsummary: \"a\\0b\"\nfiles_created: [\"src/\\0.py\"]\n",
    b"task_id: t-fuzz\nsummary: s\nx: !!binary aGVsbG8=\ny: !!set {a, b}\nz: !!omap [a: 1]\n",
    b"task_id: t-fuzz\nsummary: s\nx: !!python/object/apply:os.system [echo hi]\n",
    b"task_id: t-fuzz\nsummary: s\n---\ntask_id: t2\n",
    b"\xef\xbb\xbftask_id: t-fuzz\nsummary: with a BOM\n",
    b"task_id: t-fuzz\nsummary: s\npatterns_discovered: [{pattern: '" + b"word " * 4000 + b"'}]\n",
    b"task_id: t-fuzz\nsummary: s\ngotchas: [{issue: " + b"x" * 1500 + b"}]\n",
    b"task_id: t-fuzz\nsummary: s\ndecisions: [{decision: d, applies_to: [" + b"t" * 1500 + b"]}]\n",
    b"task_id: t-fuzz\nsummary: s\nfiles_modified: [{path: " + "é".encode() * 2500 + b"}]\n",
    b"task_id: t-fuzz\nsummary: s\ndependencies_for_next: [" + b"d/" * 2100 + b"x]\n",
    b"task_id: t-fuzz\nsummary: s\nopen_questions: [{question: q, blocking: maybe}]\n",
    b"task_id: t-fuzz\n" + b"#" * (MAX_DOCUMENT_BYTES + 1),
    b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4,
    b"\x89PNG\r\n\x1a\n" + bytes(range(1, 256)) * 4,
    b"task_id: \xff\xfe\n",
    b"task_id: t-fuzz\nsummary: \xed\xa0\x80\n",  # a UTF-8-encoded surrogate
    b"task_id: t-fuzz\nsummary: s\nx: \x01\n",
    b"\t\t: :\n",
    b"task_id: t-fuzz\nsummary: s\ntags: " + b"&x " * 50 + b"y\n",
]

#: Slower ones (a second or so each): not drawn by the fuzzers, tried once each.
HEAVY: list[bytes] = [
    b"task_id: t-fuzz\nsummary: s\nx: " + b"[" * 5000 + b"]" * 5000 + b"\n",
    b"task_id: t-fuzz\nsummary: " + b"s" * (MAX_DOCUMENT_BYTES - 40) + b"\n",  # just under the size limit
    b"[" * 100_000,
    b"- " * 100_000,
]

# ------------------------------------------------------------------- checks


def check_parse(data: bytes) -> str:
    """``load_handoff`` on the bytes: 'valid' or 'refused', nothing else."""
    try:
        load_handoff(data, "fuzz.yaml")
    except InvalidDocumentError as exc:
        message = str(exc)
        assert "\n" not in message and "\r" not in message, message[:300]
        assert message.startswith("fuzz.yaml: invalid document: "), message[:300]
        return "refused"
    return "valid"


def check_ingest(svc: ContextService, store: KnowledgeStore, data: bytes) -> str:
    before = store.stats()
    try:
        result = svc.ingest_handoff(data, source="fuzz.yaml")
    except (InvalidDocumentError, UnknownTaskError) as exc:
        message = str(exc)
        assert "\n" not in message and "\r" not in message, message[:300]
        assert store.stats() == before, message[:300]
        return "refused"
    assert result.task_id == TASK_ID
    return "ingested"


@pytest.fixture
def fuzz_svc(store: KnowledgeStore, extractor: SignalExtractor) -> ContextService:
    svc = ContextService(store, extractor)
    svc.add_task(Task(id=TASK_ID, name="Fuzzed task", objective="Take whatever comes"))
    return svc


# -------------------------------------------------------------------- tests


@pytest.mark.parametrize("index", range(len(SPECIAL) + len(HEAVY)))
def test_special_documents_parse_or_are_refused_in_one_line(index: int) -> None:
    started = time.monotonic()
    check_parse([*SPECIAL, *HEAVY][index])
    assert time.monotonic() - started < 20, "no document may take this long to refuse"
    FUZZ_CASES["parse: special documents"] += 1


def test_ten_megabytes_and_binary_are_refused() -> None:
    for data in (b"task_id: t-fuzz\nsummary: " + b"x" * (10 * 1024 * 1024), bytes(range(256)) * 40_000):
        assert check_parse(data) == "refused"
        FUZZ_CASES["parse: special documents"] += 1


@fuzz_settings(600)
@given(data=documents())
def test_parser_fuzz(data: bytes) -> None:
    check_parse(data)
    FUZZ_CASES["parse: load_handoff"] += 1


@fuzz_settings(150)
@given(data=documents())
def test_ingest_fuzz(fuzz_svc: ContextService, store: KnowledgeStore, request: pytest.FixtureRequest,
                     data: bytes) -> None:
    outcome = check_ingest(fuzz_svc, store, data)
    FUZZ_CASES[f"ingest_handoff [{request.node.callspec.id}]"] += 1
    FUZZ_CASES[f"ingest_handoff [{request.node.callspec.id}] {outcome}"] += 1


def test_ingest_special_documents(fuzz_svc: ContextService, store: KnowledgeStore,
                                  request: pytest.FixtureRequest) -> None:
    outcomes = [check_ingest(fuzz_svc, store, data) for data in [*SPECIAL, *HEAVY]]
    FUZZ_CASES[f"ingest_handoff [{request.node.callspec.id}] special documents"] += len(outcomes)
    assert "ingested" in outcomes and "refused" in outcomes


@fuzz_settings(60)
@given(doc=st.one_of(valid_handoff, handoff_shaped))
def test_ingest_mapping_fuzz(fuzz_svc: ContextService, store: KnowledgeStore, request: pytest.FixtureRequest,
                             doc: dict[str, Any]) -> None:
    """The same through the library's mapping input (no YAML in between)."""
    before = store.stats()
    outcome = "ingested"
    try:
        fuzz_svc.ingest_handoff(doc, source="mapping")
    except (InvalidDocumentError, UnknownTaskError) as exc:
        assert "\n" not in str(exc)
        assert store.stats() == before
        outcome = "refused"
    FUZZ_CASES[f"ingest_handoff mapping [{request.node.callspec.id}]"] += 1
    FUZZ_CASES[f"ingest_handoff mapping [{request.node.callspec.id}] {outcome}"] += 1
