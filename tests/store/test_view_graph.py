"""What ``ctxgraph view`` draws, on both stores: a task's neighbourhood is its
context's (dependencies, their handoffs and files, the knowledge shown),
with stale and superseded items marked; the overview holds every task,
knowledge item and handed-off file, and is refused past its limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgraph.errors import CtxgraphError
from ctxgraph.graph.records import stable_id
from ctxgraph.service import ContextService
from ctxgraph.service.view import overview, task_view

HS256 = "Sign JWT access tokens with HS256 and one shared secret"
RS256 = "Sign JWT access tokens with RS256 and per-service keys"
PATTERN = "Wrap JWT routes with require_auth()"


@pytest.fixture
def graph(svc: ContextService, tmp_path: Path) -> ContextService:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "auth.py").write_text("def require_auth(handler):\n    return handler\n")
    svc.use_root(tmp_path)
    svc.add_tasks([
        {"id": "t-sign", "name": "Sign JWT access tokens", "objective": "Sign the JWT access token at login"},
        {"id": "t-rotate", "name": "Rotate JWT signing keys", "objective": "Rotate the keys that sign JWT tokens"},
        {"id": "t-review", "name": "Review JWT signing", "objective": "Review how JWT access tokens are signed",
         "depends_on": ["t-sign", "t-rotate"]},
    ])
    svc.ingest_handoff({
        "task_id": "t-sign", "summary": "Signed tokens", "completed_at": "2026-01-05T10:00:00Z",
        "decisions": [{"decision": HS256, "rationale": "one service", "applies_to": ["jwt", "signing"]}],
        "patterns_discovered": [{"pattern": PATTERN, "applies_to": ["jwt", "signing"], "location": "src/auth.py"}],
        "dependencies_for_next": [{"file": "src/auth.py", "reason": "the wrapper"}],
    })
    svc.ingest_handoff({
        "task_id": "t-rotate", "summary": "Rotated keys", "completed_at": "2026-02-01T09:00:00Z",
        "decisions": [{"decision": RS256, "rationale": "many services", "applies_to": ["jwt", "signing"],
                       "supersedes": [HS256]}],
    })
    return svc


def test_a_task_view_is_its_context_with_marks(graph: ContextService, tmp_path: Path) -> None:
    (tmp_path / "src" / "auth.py").write_text("def require_auth(handler, scopes):\n    return handler\n")
    graph.sync()
    drawn = task_view(graph, "t-review", memory=False)
    nodes = {n.id: n for n in drawn.nodes}
    edges = {(e.source, e.target, e.label) for e in drawn.edges}
    assert nodes["task:t-review"].marks == ("focus",)
    assert {("task:t-review", "task:t-sign", "depends on"), ("task:t-review", "task:t-rotate", "depends on"),
            ("task:t-sign", "handoff:t-sign", "handed off"), ("handoff:t-sign", "file:src/auth.py", "names")} <= edges
    new, old, pattern = (f"k:{stable_id('decision', RS256)}", f"k:{stable_id('decision', HS256)}",
                         f"k:{stable_id('pattern', PATTERN)}")
    assert nodes[new].marks == () and ("handoff:t-rotate", new, "discovered") in edges
    assert "superseded" in nodes[old].marks and ("task:t-review", old, "dropped") in edges
    assert nodes[pattern].marks == ("stale",) and "code changed since t-sign: src/auth.py" in nodes[pattern].title
    assert "stale" in nodes["file:src/auth.py"].marks
    assert drawn.title == "ctxgraph view: t-review"


def test_the_overview_and_its_limit(graph: ContextService) -> None:
    drawn = overview(graph)
    kinds = sorted(n.kind for n in drawn.nodes)
    assert kinds.count("task") == 3 and kinds.count("decision") == 2 and kinds.count("pattern") == 1
    assert {("task:t-review", "task:t-sign", "depends on"),
            ("task:t-sign", f"k:{stable_id('pattern', PATTERN)}", "discovered")} <= {
        (e.source, e.target, e.label) for e in drawn.edges}
    old = next(n for n in drawn.nodes if n.id == f"k:{stable_id('decision', HS256)}")
    assert old.marks == ("superseded",)
    with pytest.raises(CtxgraphError, match=r"^the graph has \d+ nodes .*ctxgraph view TASK_ID$"):
        overview(graph, limit=len(drawn.nodes) - 1)
