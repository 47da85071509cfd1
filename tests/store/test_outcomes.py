"""Context outcomes on both stores: a delivered context is recorded, its task's
handoff scores it exactly as a hand count does, a corrupt or missing record
never breaks a context, an ingestion or a report, and the retention cap holds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.outcomes.records import DeliveredItem, Delivery, parse_delivery, parse_score
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor

AUTH = """\
task_id: t-auth
summary: Added JWT validation middleware
completed_at: "2026-03-01T10:00:00Z"
files_created: [{path: src/auth/jwt.ts, purpose: JWT verify helper}]
files_modified: [{path: src/app.ts, purpose: mount middleware}]
patterns_discovered: [{pattern: Wrap handlers with requireAuth(), applies_to: [auth, api], location: src/auth/middleware.ts}]
"""
# The handoff of the task whose context is scored: no knowledge, so only files count.
REFRESH = """\
task_id: t-refresh
summary: Rotating refresh tokens
completed_at: "2026-03-02T10:00:00Z"
files_created: [{path: src/auth/refresh.ts}]
files_modified: [{path: src/auth/jwt.ts}, {path: src/other.ts}]
"""
# The same task's handoff, changed: a gotcha tagged `api`, which the pattern carries too.
REFRESH_V2 = REFRESH.replace("Rotating refresh tokens", "Rotating refresh tokens, v2") + \
    "gotchas: [{issue: Refresh races on api restarts, severity: high, applies_to: [api]}]\n"


@pytest.fixture
def outcomes_svc(svc: ContextService) -> Iterator[ContextService]:
    """The store fixture's service with two tasks and the first one's handoff."""
    svc.add_task({"id": "t-auth", "name": "Add JWT validation middleware", "objective": "Verify JWT tokens"})
    svc.add_task({"id": "t-refresh", "name": "Refresh tokens", "objective": "Rotate the JWT on login",
                  "depends_on": ["t-auth"]})
    svc.ingest_handoff(AUTH.encode(), source="auth.yaml")
    yield svc
    svc.flush_outcomes()  # nothing left to land in the next test's store


def _corrupt(store: KnowledgeStore, record: str | None, score: object) -> None:
    """Overwrite every stored delivery's record and score, bypassing the store's API."""
    if isinstance(store, LocalStore):
        store.db.conn.execute("UPDATE deliveries SET record = ?, score = ?", (record, score))
        return
    text = "MATCH (d:Delivery) SET d.record = $record, d.score = $score"
    store._write(lambda tx: tx.run(text, record=record, score=score).consume())  # type: ignore[attr-defined]


def test_a_delivered_context_scored_by_its_handoff_gives_the_hand_count(outcomes_svc: ContextService) -> None:
    svc = outcomes_svc
    ctx = svc.compute("t-refresh")
    svc.flush_outcomes()
    (stored,) = svc.store.deliveries(task_ids=["t-refresh"])
    delivery = parse_delivery(stored)
    assert delivery is not None and stored.score is None
    # What the context names, in the order it names it: the pattern's location,
    # the prior work's file, then the code references.
    assert [r.file for r in ctx.code_references] == ["src/auth/jwt.ts", "src/app.ts"]
    assert delivery.files == ("src/auth/middleware.ts", "src/auth/jwt.ts", "src/app.ts")
    assert [(i.section, i.id, i.rank) for i in delivery.items] == [
        ("patterns", ctx.patterns_to_follow[0].id, 1), ("prior_work", "t-auth", 1),
        ("code_references", "src/auth/jwt.ts", 1), ("code_references", "src/app.ts", 2)]
    assert delivery.tokens == ctx.tokens and delivery.sections["code_references"] > 0
    # Deliveries are a log, not knowledge: neither counted nor exported.
    assert "Delivery" not in svc.store.stats().labels
    assert not any(r.get("label") == "Delivery" for r in svc.store.export_rows())

    svc.ingest_handoff(REFRESH.encode(), source="refresh.yaml")
    (stored,) = svc.store.deliveries(task_ids=["t-refresh"])
    score = parse_score(stored)
    assert score is not None
    # By hand: changed = refresh.ts, jwt.ts, other.ts; of the 3 files named, jwt.ts
    # (2nd) is one. The pattern (its location untouched, no knowledge to share
    # tags with) and app.ts are not used; t-auth's own handoff created jwt.ts: used.
    tokens = {(i.section, i.id): i.tokens for i in delivery.items}
    pattern = ("patterns", ctx.patterns_to_follow[0].id)
    assert (score.changed, score.files, score.hit5, score.hit10) == (3, 3, 1, 1)
    assert (score.items, score.used) == (4, 2)
    assert score.used_items == ("prior_work:t-auth", "code_references:src/auth/jwt.ts")
    assert score.sections["patterns"].wasted == tokens[pattern]
    assert score.sections["prior_work"].wasted == 0
    assert score.sections["code_references"].wasted == tokens[("code_references", "src/app.ts")]
    assert score.wasted == tokens[pattern] + tokens[("code_references", "src/app.ts")]

    report = svc.outcomes()
    assert (report.deliveries, report.scored, report.unscored, report.unreadable) == (1, 1, 0, 0)
    assert (report.recall5, report.recall10, report.hit_rate5) == (round(1 / 3, 4), round(1 / 3, 4), 1.0)
    assert (report.items, report.items_used, report.used_share) == (4, 2, 0.5)
    assert report.wasted_tokens == score.wasted

    # The same handoff again changes nothing; a changed one rescores.
    before = stored.score
    svc.ingest_handoff(REFRESH.encode(), source="refresh.yaml")
    assert svc.store.deliveries(task_ids=["t-refresh"])[0].score == before
    svc.ingest_handoff(REFRESH_V2.encode(), source="refresh.yaml")
    rescored = parse_score(svc.store.deliveries(task_ids=["t-refresh"])[0])
    assert rescored is not None and rescored.handoff != score.handoff
    assert rescored.used_items == (f"{pattern[0]}:{pattern[1]}", "prior_work:t-auth",
                                   "code_references:src/auth/jwt.ts")
    assert rescored.sections["patterns"].wasted == 0


def test_recording_can_be_turned_off(outcomes_svc: ContextService) -> None:
    outcomes_svc.record_outcomes = False
    outcomes_svc.compute("t-refresh")
    outcomes_svc.compute("t-refresh", record=True)
    outcomes_svc.flush_outcomes()
    assert outcomes_svc.store.deliveries() == []
    outcomes_svc.record_outcomes = True
    outcomes_svc.compute("t-refresh", record=False)
    outcomes_svc.flush_outcomes()
    assert outcomes_svc.store.deliveries() == []


@pytest.mark.parametrize(("record", "score"), [("garbage{", "also garbage"), (None, None), ('{"v": 1}', 42),
                                               ('{"v":1,"tokens":1,"sections":{},"items":[["x"]],"files":[]}', "{}")])
def test_a_corrupt_or_missing_record_never_breaks_a_context(outcomes_svc: ContextService, record: str | None,
                                                            score: object) -> None:
    svc = outcomes_svc
    first = svc.compute("t-refresh")
    svc.flush_outcomes()
    _corrupt(svc.store, record, score)
    again = svc.compute("t-refresh")
    assert again.markdown == first.markdown
    svc.ingest_handoff(REFRESH.encode(), source="refresh.yaml")  # scores what it can read
    report = svc.outcomes()
    assert (report.deliveries, report.unreadable, report.scored) == (2, 1, 1)
    assert svc.outcomes(last=1).deliveries == 1


def test_the_newest_deliveries_are_kept(store: KnowledgeStore) -> None:
    def delivery(n: int) -> Delivery:
        return Delivery(id=f"delivery:{n:03d}", task_id=f"t-{n % 2}", at=f"2026-03-0{n}T10:00:00.000000Z",
                        tokens=n, items=(DeliveredItem(section="code_references", id="a.py", rank=1, tokens=3),),
                        files=("a.py",))

    store.record_deliveries([delivery(1), delivery(2)], keep=3)
    store.record_deliveries([delivery(5), delivery(3), delivery(4)], keep=3)
    assert [d.id for d in store.deliveries()] == ["delivery:003", "delivery:004", "delivery:005"]
    assert [d.id for d in store.deliveries(last=2)] == ["delivery:004", "delivery:005"]
    assert [d.id for d in store.deliveries(since="2026-03-04")] == ["delivery:004", "delivery:005"]
    assert [d.id for d in store.deliveries(task_ids=["t-1"])] == ["delivery:003", "delivery:005"]
    assert parse_delivery(store.deliveries(last=1)[0]) == delivery(5)
    store.clear()
    assert store.deliveries() == []


def test_deliveries_at_the_same_time_are_kept_by_the_larger_id(store: KnowledgeStore) -> None:
    same = [Delivery(id=f"delivery:{c}", task_id="t-1", at="2026-03-01T10:00:00.000000Z", tokens=1,
                     items=(DeliveredItem(section="code_references", id="a.py", rank=1, tokens=3),), files=("a.py",))
            for c in "cab"]
    store.record_deliveries(same, keep=2)
    assert [d.id for d in store.deliveries()] == ["delivery:b", "delivery:c"]


def test_the_settings_cap_applies(tmp_path: Path, extractor: SignalExtractor) -> None:
    (tmp_path / "ctxgraph.toml").write_text("outcomes_keep = 2\n")
    svc = ContextService.open(tmp_path / "graph.db", settings_file=tmp_path / "ctxgraph.toml")
    svc.extractor = extractor
    svc.add_task({"id": "t-1", "name": "Add JWT login", "objective": "JWT"})
    for _ in range(4):
        svc.compute("t-1")
    svc.close()  # writes what is queued
    with LocalStore.open(tmp_path / "graph.db") as store:
        assert len(store.deliveries()) == 2


def test_a_read_only_store_records_nothing_and_still_answers(tmp_path: Path, extractor: SignalExtractor) -> None:
    writer = ContextService(LocalStore.open(tmp_path / "graph.db"), extractor)
    writer.add_task({"id": "t-1", "name": "Add JWT login", "objective": "JWT"})
    expected = writer.compute("t-1", record=False).markdown
    writer.close()
    reader = ContextService(LocalStore.open(tmp_path / "graph.db", read_only=True), extractor)
    assert reader.compute("t-1").markdown == expected
    reader.close()
    with LocalStore.open(tmp_path / "graph.db") as store:
        assert store.deliveries() == []


def test_outcomes_refuses_a_bad_window(svc: ContextService) -> None:
    from ctxgraph.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="since: 'yesterday'"):
        svc.outcomes(since="yesterday")
    with pytest.raises(InvalidArgumentError, match="last: 0"):
        svc.outcomes(last=0)
    assert json.loads(svc.outcomes(since="2026-01-01").model_dump_json())["since"] == "2026-01-01T00:00:00.000000Z"
