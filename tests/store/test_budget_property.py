"""The budget property through the real stores: random histories, tasks, budgets
and tiers; the rendered context never exceeds the budget and only a chain's
latest version is shown."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ctxgraph.compute.budget import BudgetExceededError
from ctxgraph.core.models import Task
from ctxgraph.service import ContextService

VOCAB = ["jwt", "login", "token", "cache", "schema", "migration", "route", "queue", "retry", "session"]
phrase = st.lists(st.sampled_from([*VOCAB, "the", "uses", "never", "always", "認証"]), min_size=2, max_size=40).map(
    " ".join)


@st.composite
def history(draw: st.DrawFn) -> dict[str, object]:
    n = draw(st.integers(1, 4))
    handoffs = []
    for i in range(n):
        handoffs.append({
            "task_id": f"h{i}", "summary": draw(phrase), "completed_at": f"2026-01-0{i + 1}T00:00:00Z",
            "patterns_discovered": [{"pattern": f"{draw(phrase)} p{i}{j}", "applies_to": draw(
                st.lists(st.sampled_from(VOCAB), max_size=3))} for j in range(draw(st.integers(0, 6)))],
            "gotchas": [{"issue": f"{draw(phrase)} g{i}{j}", "severity": draw(st.sampled_from(
                ["low", "medium", "high", "critical"]))} for j in range(draw(st.integers(0, 4)))],
            "files_modified": [{"path": f"src/{draw(st.sampled_from(VOCAB))}/m{j}.py", "purpose": draw(phrase)}
                               for j in range(draw(st.integers(0, 4)))],
        })
    return {"handoffs": handoffs, "query": draw(phrase), "budget": draw(st.integers(80, 3000)),
            "tier": draw(st.sampled_from(["easy", "normal", "complex"])), "revise": draw(st.booleans())}


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=history())
def test_budget_holds_on_real_stores(svc: ContextService, case: dict[str, object]) -> None:
    svc.store.clear()
    handoffs = case["handoffs"]
    assert isinstance(handoffs, list)
    svc.add_tasks([{"id": h["task_id"], "objective": h["summary"]} for h in handoffs])
    svc.ingest_handoffs([(f"h{i}.yaml", h) for i, h in enumerate(handoffs)])
    revised = None
    if case["revise"]:
        first = svc.add_knowledge("decision", "Use jwt tokens for login sessions v1", tags=["jwt"])
        revised = svc.revise_knowledge(first.id, "Use jwt tokens for login sessions v2")
    task = Task(id="q", objective=str(case["query"]), depends_on=tuple(h["task_id"] for h in handoffs[:2]))
    # A refused budget is one the never-compressed part (headings, working
    # memory, blocking questions) really exceeds: the tokens the refusal names
    # are over it, and that many are then enough. Every example reaches the check.
    budget = int(str(case["budget"]))
    for _ in range(3):
        try:
            ctx = svc.compute(task, complexity=str(case["tier"]), budget=budget, explain=True)
            break
        except BudgetExceededError as exc:
            need = re.search(r"needs? (\d+) tokens", str(exc))
            assert need is not None, str(exc)
            assert int(need.group(1)) > budget, str(exc)
            event("budget refused, then the tokens it named")
            budget = int(need.group(1))
    else:
        raise AssertionError(f"refused three times, lastly at {budget} tokens")
    event("within the budget drawn" if budget == case["budget"] else "within the budget the refusal named")
    assert ctx.tokens <= ctx.budget == budget
    if revised is not None:
        # The superseded version is never an item of its own; the revision may name it
        # in its "(replaces: ...)".
        assert "sessions v1" not in ctx.markdown.replace("(replaces: Use jwt tokens for login sessions v1)", "")
