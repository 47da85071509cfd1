"""Decisions over time and concurrent work (docs/decisions.md), on both stores:
a handoff's decision supersedes an earlier one, likely conflicts are listed
and marked, tasks in progress on the same files warn each other."""

from __future__ import annotations

from typing import Any

import pytest

from ctxgraph.errors import InvalidDocumentError
from ctxgraph.graph.records import stable_id
from ctxgraph.service import ContextService

HS256 = "Sign JWT access tokens with HS256 and one shared secret"
RS256 = "Sign JWT access tokens with RS256 and per-service keys"
TASKS = [
    {"id": "t-sign", "name": "Sign JWT access tokens", "objective": "Sign the JWT access token at login"},
    {"id": "t-rotate", "name": "Rotate JWT signing keys", "objective": "Rotate the keys that sign JWT access tokens"},
    {"id": "t-review", "name": "Review JWT signing", "objective": "Review how JWT access tokens are signed"},
]


def _handoff(task_id: str, at: str, decision: str, **extra: Any) -> dict[str, Any]:
    return {"task_id": task_id, "summary": f"{task_id} done", "completed_at": at,
            "decisions": [{"decision": decision, "rationale": "why not", "applies_to": ["jwt", "signing"], **extra}]}


def _export(svc: ContextService) -> list[str]:
    return sorted(repr(sorted(r.items())) for r in svc.store.export_rows())


@pytest.mark.parametrize("by", ["text", "id"])
def test_a_superseded_decision_is_replaced_in_contexts(svc: ContextService, by: str) -> None:
    svc.add_tasks(TASKS)
    svc.ingest_handoff(_handoff("t-sign", "2026-01-05T10:00:00Z", HS256))
    old_id = stable_id("decision", HS256)
    ref = " sign jwt ACCESS tokens with hs256 and one shared secret " if by == "text" else old_id
    before = svc.compute("t-review", record=False)
    assert [d.decision for d in before.relevant_decisions] == [HS256]

    newer = _handoff("t-rotate", "2026-02-01T09:00:00Z", RS256, supersedes=[ref])
    assert svc.ingest_handoff(newer).written
    ctx = svc.compute("t-review", record=False, explain=True)
    assert [d.decision for d in ctx.relevant_decisions] == [RS256]
    assert ctx.relevant_decisions[0].replaces == (HS256,)
    assert f"- {RS256} — why not (replaces: {HS256})" in ctx.markdown
    assert HS256 not in ctx.markdown.replace(f"(replaces: {HS256})", "")
    assert {e.id: e.reason for e in ctx.explain or ()}[old_id] == "superseded"
    (old,) = svc.store.get_knowledge([old_id])
    assert (old.status, old.valid_from, old.valid_until) == (
        "superseded", "2026-01-05T10:00:00Z", "2026-02-01T09:00:00Z")
    (new,) = svc.store.get_knowledge([stable_id("decision", RS256)])
    assert new.status == "active" and new.valid_until is None and new.replaces == (HS256,)
    assert svc.store.stats().relationships["SUPERSEDES"] == 1
    assert svc.conflicts() == []  # the superseded one is not in force

    # Idempotent: the same handoff again changes nothing; the old one restated stays superseded.
    graph = _export(svc)
    assert not svc.ingest_handoff(newer).written
    assert _export(svc) == graph
    svc.ingest_handoff(_handoff("t-review", "2026-03-01T00:00:00Z", HS256))
    (old,) = svc.store.get_knowledge([old_id])
    assert (old.status, old.valid_until) == ("superseded", "2026-02-01T09:00:00Z")


def test_supersedes_naming_no_known_decision_writes_nothing(svc: ContextService) -> None:
    svc.add_tasks(TASKS)
    svc.ingest_handoff(_handoff("t-sign", "2026-01-05T10:00:00Z", HS256))
    graph = _export(svc)
    bad = _handoff("t-rotate", "2026-02-01T09:00:00Z", RS256, supersedes=[HS256, "Sign JWT with magic"])
    with pytest.raises(InvalidDocumentError) as caught:
        svc.ingest_handoffs([("ok.yaml", _handoff("t-review", "2026-02-02T00:00:00Z", "Review done")),
                             ("bad.yaml", bad)])
    assert str(caught.value) == ("bad.yaml: invalid document: decisions[0].supersedes[1]: no decision "
                                 "'Sign JWT with magic' is stored or in this batch (name one by its id, "
                                 "decision:…, or by its exact text)")
    itself = _handoff("t-rotate", "2026-02-01T09:00:00Z", RS256, supersedes=RS256)
    with pytest.raises(InvalidDocumentError, match="cannot supersede itself"):
        svc.ingest_handoff(itself)
    assert _export(svc) == graph  # neither batch wrote anything
    # A decision stated by another handoff of the same run may be superseded, even
    # one written by a later transaction (here batches of one, the superseding one first).
    svc.ingest_handoffs([("b", _handoff("t-review", "2026-02-02T09:00:00Z", RS256,
                                        supersedes=["Sign JWT with EdDSA", HS256])),
                         ("a", _handoff("t-rotate", "2026-02-01T09:00:00Z", "Sign JWT with EdDSA"))],
                        batch_size=1)
    assert {k.summary for k in svc.store.decisions_in_force()} == {RS256}
    assert svc.store.stats().relationships["SUPERSEDES"] == 2


def test_conflicting_decisions_are_listed_and_marked(svc: ContextService) -> None:
    svc.add_tasks(TASKS)
    svc.ingest_handoff(_handoff("t-sign", "2026-01-05T10:00:00Z", HS256))
    svc.ingest_handoff(_handoff("t-rotate", "2026-02-01T09:00:00Z", RS256))
    (conflict,) = svc.conflicts()
    assert {conflict.first, conflict.second} == {HS256, RS256}
    assert {"jwt", "signing"} <= set(conflict.shared_tags) and conflict.tag_similarity >= 0.4
    ctx = svc.compute("t-review", record=False)
    assert {d.decision for d in ctx.relevant_decisions} == {HS256, RS256}
    assert len(ctx.decision_conflicts) == 1
    assert "⚠ These decisions may conflict (both in force, shared tags: " in ctx.markdown
    # Restating a decision in other words is not a conflict.
    svc.ingest_handoff(_handoff("t-review", "2026-03-01T00:00:00Z", HS256 + "."))
    assert len(svc.conflicts()) == 2  # the restatement conflicts with RS256 only, not with HS256


def _concurrent_section(markdown: str) -> str:
    return markdown.split("### Concurrent Work")[1].split("###")[0] if "### Concurrent Work" in markdown else ""


def test_tasks_in_progress_on_the_same_files_warn_each_other(svc: ContextService) -> None:
    from ctxgraph.core.models import FileEntry

    svc.add_files([FileEntry(path="src/auth/jwt.ts", component="auth", notes="JWT signing keys"),
                   FileEntry(path="src/auth/expiry.ts", component="auth", notes="JWT exp checks"),
                   FileEntry(path="src/auth/keys.ts", component="auth", notes="JWT key store"),
                   *(FileEntry(path=f"src/pricing/{name}.ts", component="pricing", notes="pricing module")
                     for name in ("index", "rules", "tax"))])
    svc.add_tasks([
        {"id": "t-a", "name": "Harden src/auth/jwt.ts expiry checks", "objective": "Check exp in src/auth/jwt.ts",
         "status": "in_progress"},
        {"id": "t-b", "name": "Add key rotation", "objective": "Rotate keys used by src/auth/jwt.ts",
         "status": "in_progress"},
        {"id": "t-c", "name": "Old jwt.ts work", "objective": "Touch src/auth/jwt.ts", "status": "completed"},
        {"id": "t-d", "name": "Rename the pricing module", "objective": "Move src/pricing/index.ts",
         "status": "in_progress"},
        {"id": "t-e", "name": "Rotate JWT signing keys", "objective": "Rotate the JWT keys", "status": "in_progress"},
    ])
    # t-e names no file: what it expects to change is what its delivered context named.
    e = svc.compute("t-e")
    assert "src/auth/jwt.ts" in [r.file for r in e.code_references]
    assert [w.task_id for w in e.concurrent_work] == ["t-a", "t-b"]  # by their texts (newest first, then by id)
    svc.flush_outcomes()
    a = svc.compute("t-a", record=False)
    assert [(w.task_id, w.files[0]) for w in a.concurrent_work] == [
        ("t-b", "src/auth/jwt.ts"), ("t-e", "src/auth/jwt.ts")]
    assert "- ⚠ t-b (in progress) also expects to change `src/auth/jwt.ts`\n" in a.markdown
    assert "- ⚠ t-e (in progress) also expects to change `src/auth/jwt.ts`" in a.markdown
    b = svc.compute("t-b", record=False)
    assert [w.task_id for w in b.concurrent_work] == ["t-a", "t-e"]
    assert "t-c" not in _concurrent_section(b.markdown)  # a completed task does not warn
    assert svc.compute("t-d", record=False).concurrent_work == ()
    assert _concurrent_section(svc.compute("t-c", record=False).markdown) == ""
