"""Handoff, task-file and context-map documents: validation and error messages."""

from __future__ import annotations

import json

import pytest

from ctxgraph.core.documents import load_context_map, load_handoff, load_tasks
from ctxgraph.core.models import Severity, infer_component, split_location
from ctxgraph.errors import InvalidDocumentError

GOOD = b"""
task_id: task-043
summary: Added JWT validation middleware
success: true
files_created:  [{path: src/auth/jwt.ts, purpose: JWT verify helper}]
files_modified: [{path: ./src/app.ts, lines: "10-24", purpose: mount middleware}]
dependencies_for_next: [{file: src/auth/jwt.ts, reason: reuse verify()}]
patterns_discovered: [{pattern: Wrap handlers with requireAuth(), applies_to: [auth, api], location: src/auth/middleware.ts}]
gotchas: [{issue: Clock skew breaks exp checks, severity: HIGH, applies_to: jwt}]
decisions: [{decision: HS256 for now, rationale: single service}]
open_questions: [{question: "Rotate keys how?", context: c, recommendation: r, blocking: true}]
reviewer_notes: keep me
"""


def test_good_handoff_parses_and_keeps_unknown_keys() -> None:
    doc, raw = load_handoff(GOOD, "h.yaml")
    assert doc.task_id == "task-043"
    assert doc.files_modified[0].path == "src/app.ts"
    assert doc.gotchas[0].severity is Severity.HIGH
    assert doc.gotchas[0].applies_to == ["jwt"]
    assert doc.open_questions[0].blocking is True
    assert raw["reviewer_notes"] == "keep me"
    assert doc.model_extra == {"reviewer_notes": "keep me"}


def test_json_handoff_parses() -> None:
    doc, _ = load_handoff(b'{"task_id": "t1", "summary": "s", "files_modified": [{"path": "a.py"}]}', "h.json")
    assert doc.success is True and doc.files_modified[0].path == "a.py"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"summary: s\n", "h.yaml: invalid document: task_id: Field required"),
        (b"task_id: t\nsummary: s\ngotchas: [{issue: x, severity: urgent}]\n",
         "gotchas[0].severity: Input should be 'low', 'medium', 'high' or 'critical'"),
        (b"task_id: t\nsummary: s\npatterns_discovered: [{applies_to: [a]}]\n",
         "patterns_discovered[0].pattern: Field required"),
        (b"task_id: t\nsummary: s\nsuccess: maybe\n", "success: Input should be a valid boolean"),
        (b"task_id: t\nsummary: [unclosed\n", "not valid YAML/JSON: line 3, column 1"),
        (b"- just\n- a list\n", "expected a mapping at the top, got list"),
        (b"", "expected a mapping at the top, got empty"),
        (b"task_id: t\x00\n", "binary content"),
        (b"task_id: \xff\xfe\n", "not UTF-8 text"),
        (b"task_id: t\nsummary: s\ncompleted_at: yesterday\n", "completed_at: Value error, not an ISO-8601"),
    ],
)
def test_bad_handoffs_name_file_field_and_reason(data: bytes, expected: str) -> None:
    with pytest.raises(InvalidDocumentError) as err:
        load_handoff(data, "h.yaml")
    assert str(err.value).startswith("h.yaml: invalid document: ")
    assert expected in str(err.value)


def test_yaml_alias_bomb_is_refused() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    prev = "a"
    for i in range(20):
        lines.append(f"b{i}: &b{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
        prev = f"b{i}"
    with pytest.raises(InvalidDocumentError, match="aliases"):
        load_handoff("\n".join(lines).encode(), "bomb.yaml")


def test_oversized_document_is_refused() -> None:
    with pytest.raises(InvalidDocumentError, match="the limit is"):
        load_handoff(b"#" * (6 * 1024 * 1024), "big.yaml")



@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"task_id: " + b"t" * 201 + b"\nsummary: s\n", "task_id: String should have at most 200 characters"),
        (b"task_id: t\nsummary: " + b"w " * 10_001 + b"\n", "summary: String should have at most 20000 characters"),
        (b"task_id: t\nsummary: s\ndecisions: [{decision: d, rationale: " + b"r" * 20_001 + b"}]\n",
         "decisions[0].rationale: String should have at most 20000 characters"),
        (b"task_id: t\nsummary: s\npatterns_discovered: [{pattern: p, location: " + b"d/" * 2_100 + b"x}]\n",
         "patterns_discovered[0].location: path is 4,201 bytes"),
        (b"task_id: t\nsummary: s\ngotchas: [{issue: i, applies_to: [" + b"a, " * 101 + b"]}]\n",
         "gotchas[0].applies_to: List should have at most 100 items"),
    ],
)
def test_every_handoff_text_has_a_limit(data: bytes, expected: str) -> None:
    """A handoff's texts are bounded (a summary of megabytes would be stored and overfill every listing)."""
    with pytest.raises(InvalidDocumentError) as err:
        load_handoff(data, "h.yaml")
    assert expected in str(err.value)
    assert len(str(err.value)) < 1_000  # the input is not repeated whole


def test_every_task_text_has_a_limit() -> None:
    for field, value, expected in [
        ("objective", "o " * 10_001, "objective: String should have at most 20000 characters"),
        ("name", "n" * 501, "name: String should have at most 500 characters"),
        ("acceptance_criteria", ["c" * 2_001], "acceptance_criteria.0: String should have at most 2000 characters"),
        ("acceptance_criteria", ["c"] * 51, "acceptance_criteria: List should have at most 50 items"),
        ("depends_on", [f"t{i}" for i in range(101)], "depends_on: List should have at most 100 items"),
    ]:
        data = json.dumps({"tasks": [{"id": "t1", field: value}]}).encode()
        with pytest.raises(InvalidDocumentError) as err:
            load_tasks(data, "tasks.json")
        assert expected.replace(f"{field}.0", f"tasks[0].{field}[0]").replace(f"{field}:", f"tasks[0].{field}:") \
            in str(err.value), str(err.value)[:300]

def test_tasks_file_forbids_unknown_keys() -> None:
    doc = load_tasks(b"tasks:\n  - id: t1\n    depends_on: t0\n", "tasks.yaml")
    assert doc.tasks[0].depends_on == ["t0"]
    with pytest.raises(InvalidDocumentError, match=r"tasks\[0\].colour: Extra inputs are not permitted"):
        load_tasks(b"tasks:\n  - id: t1\n    colour: red\n", "tasks.yaml")


def test_context_map_accepts_seed_location_and_jsonl() -> None:
    entries = load_context_map(
        b'{"component": "core", "location": "src/click/core.py", "notes": "Core"}\n'
        b'{"location": "src/click/utils.py:10-20", "notes": null}\n',
        "map.jsonl",
    )
    assert [(e.path, e.component, e.notes, e.lines) for e in entries] == [
        ("src/click/core.py", "core", "Core", None), ("src/click/utils.py", "click", "", "10-20")]
    with pytest.raises(InvalidDocumentError, match="line 2"):
        load_context_map(b'{"location": "a"}\nnot json\n', "map.jsonl")


def test_component_inference_and_locations() -> None:
    assert infer_component("src/auth/jwt.ts") == "auth"
    assert infer_component("src/app.ts") == "app"
    assert infer_component("README.md") == "README"
    assert split_location("src/a.ts:10-24") == ("src/a.ts", "10-24")
    assert split_location("C:thing") == ("C:thing", None)
