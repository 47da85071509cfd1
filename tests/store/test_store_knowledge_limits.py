"""Knowledge added or revised through the library holds to a handoff's limits,
on both stores; knowledge stored before the limits still loads, is found and
can be revised."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import KIND_LABELS, KnowledgeItem
from ctxgraph.errors import InvalidArgumentError
from ctxgraph.service import ContextService

HUGE = " ".join(f"jwt token{i}" for i in range(100_000))[:1_000_000]


def test_add_knowledge_refuses_a_huge_summary_and_tags(svc: ContextService) -> None:
    with pytest.raises(InvalidArgumentError) as refused:
        svc.add_knowledge("pattern", HUGE, tags=[f"tag{i}" for i in range(10_000)])
    assert str(refused.value) == ("invalid knowledge: summary: text is 1,000,000 characters; at most 10,000; "
                                  "tags: 10,000 given; at most 100")
    with pytest.raises(InvalidArgumentError, match="tags: 101 given"):  # any iterable is counted
        svc.add_knowledge("pattern", "Wrap handlers", tags=(f"t{i}" for i in range(101)))
    for bad, reason in (({"kind": "runbook"}, "kind: Input should be"), ({"scope": "team"}, "scope: Input should be"),
                        ({"importance": 7.0}, "importance: 7.0 is not between 0 and 1"),
                        ({"severity": "urgent"}, "severity: Input should be")):
        args = {"kind": "gotcha", "summary": "Clock skew breaks exp checks", **bad}
        with pytest.raises(InvalidArgumentError) as one:
            svc.add_knowledge(**args)  # type: ignore[arg-type]
        assert str(one.value).startswith(f"invalid knowledge: {reason}"), str(one.value)
    assert not any(svc.store.stats().labels.get(label) for label in KIND_LABELS.values())
    item = svc.add_knowledge("pattern", "Wrap handlers with requireAuth", tags="auth")  # one tag as text
    assert "auth" in item.tags
    assert svc.store.stats().labels.get("Pattern") == 1


def test_knowledge_stored_before_the_limits_still_loads(svc: ContextService) -> None:
    svc.store.upsert_knowledge([KnowledgeItem(
        id="pattern:legacy", kind="pattern", summary=HUGE, rationale="r" * 100_000,
        tags=("jwt", *(f"tag{i}" for i in range(2_000))), token_estimate=250_000)])
    old = svc.get_knowledge("pattern:legacy")
    assert (len(old.summary), len(old.tags)) == (1_000_000, 2_001)
    _, found = svc.search_knowledge("jwt token7")
    assert [m.item.id for m in found] == ["pattern:legacy"]
    with pytest.raises(InvalidArgumentError, match="summary: text is 20,000 characters"):
        svc.revise_knowledge("pattern:legacy", "x " * 10_000)
    new = svc.revise_knowledge("pattern:legacy", "Wrap handlers with requireAuth")
    assert (new.chain_id, new.version, new.rationale) == ("pattern:legacy", 2, "r" * 100_000)
