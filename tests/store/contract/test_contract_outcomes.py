"""The contract of the ``OutcomeStore`` role (``ctxgraph.graph.store``), run
on every store: deliveries recorded, read by window, scored, trimmed."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import FileEntry, Task
from ctxgraph.graph.records import FileLink, HandoffRecord
from ctxgraph.graph.store import KnowledgeStore, OutcomeStore
from ctxgraph.outcomes.records import DeliveredItem, Delivery, DeliveryScore, parse_delivery, parse_score

AT = "2026-01-01T00:00:00Z"


@pytest.fixture
def outcomes(store: KnowledgeStore) -> OutcomeStore:
    """The store of each kind, seen as its outcome role."""
    return store


def delivery(n: int, task_id: str = "t-1") -> Delivery:
    return Delivery(id=f"delivery:{n:03d}", task_id=task_id, at=f"2026-03-0{n}T10:00:00.000000Z", tokens=n,
                    sections={"code_references": 3},
                    items=(DeliveredItem(section="code_references", id="a.py", rank=1, tokens=3),), files=("a.py",))


def score(handoff: str, hit5: int) -> DeliveryScore:
    return DeliveryScore(handoff=handoff, changed=2, files=1, hit5=hit5, hit10=hit5, items=1, used=hit5,
                         wasted=0 if hit5 else 3, used_items=("code_references:a.py",) if hit5 else ())


def test_a_recorded_delivery_reads_back_whole_and_unscored(outcomes: OutcomeStore) -> None:
    outcomes.record_deliveries([delivery(1)], keep=10)
    [stored] = outcomes.deliveries()
    assert (stored.id, stored.task_id, stored.at, stored.score) == ("delivery:001", "t-1", delivery(1).at, None)
    assert parse_delivery(stored) == delivery(1)


def test_the_windows_oldest_first(outcomes: OutcomeStore) -> None:
    outcomes.record_deliveries([delivery(3, "t-b"), delivery(1, "t-a"), delivery(2, "t-b")], keep=10)
    assert [d.id for d in outcomes.deliveries()] == ["delivery:001", "delivery:002", "delivery:003"]
    assert [d.id for d in outcomes.deliveries(last=2)] == ["delivery:002", "delivery:003"]
    assert [d.id for d in outcomes.deliveries(since="2026-03-02")] == ["delivery:002", "delivery:003"]
    assert [d.id for d in outcomes.deliveries(since="2026-03-02", last=1)] == ["delivery:003"]
    assert [d.id for d in outcomes.deliveries(task_ids=["t-a", "t-zz"])] == ["delivery:001"]
    assert outcomes.deliveries(task_ids=[]) == [] and outcomes.deliveries(since="2999-01-01") == []


def test_scores_are_set_and_unknown_ids_skipped(outcomes: OutcomeStore) -> None:
    outcomes.record_deliveries([delivery(1), delivery(2)], keep=10)
    outcomes.score_deliveries([("delivery:002", score("h1", 1)), ("delivery:gone", score("h1", 1))])
    first, second = outcomes.deliveries()
    assert parse_score(first) is None and parse_score(second) == score("h1", 1)
    outcomes.score_deliveries([("delivery:002", score("h2", 0))])  # a newer handoff scores it again
    assert parse_score(outcomes.deliveries()[1]) == score("h2", 0)


def test_a_delivery_recorded_again_replaces_the_old_one_unscored(outcomes: OutcomeStore) -> None:
    outcomes.record_deliveries([delivery(1)], keep=10)
    outcomes.score_deliveries([("delivery:001", score("h1", 1))])
    again = delivery(1).model_copy(update={"tokens": 99})
    outcomes.record_deliveries([again, again], keep=10)  # idempotent, even within a call
    [stored] = outcomes.deliveries()
    assert parse_delivery(stored) == again and stored.score is None


def test_only_the_newest_are_kept_once_over_the_cap(outcomes: OutcomeStore) -> None:
    outcomes.record_deliveries([delivery(1), delivery(2)], keep=3)
    outcomes.record_deliveries([delivery(5), delivery(3), delivery(4)], keep=3)
    assert [d.id for d in outcomes.deliveries()] == ["delivery:003", "delivery:004", "delivery:005"]


def test_handoff_files_are_the_created_and_modified_sorted(store: KnowledgeStore) -> None:
    store.upsert_tasks([Task(id=t, name=t, objective=t, created_at=AT, updated_at=AT) for t in ("a", "b", "c")])
    links = (FileLink(path="src/z.py", rel="MODIFIED"), FileLink(path="src/a.py", rel="CREATED"),
             FileLink(path="docs/read.md", rel="READ_NEXT"))
    for tid, made in (("a", links), ("b", links[2:])):
        files = tuple(FileEntry(path=link.path, component="c") for link in made)
        store.apply_handoffs([HandoffRecord(id=f"handoff:{tid}", task_id=tid, summary="done", success=True,
                                            completed_at=AT, raw="{}", content_hash=tid, files=files, links=made)])
    outcomes: OutcomeStore = store
    assert outcomes.handoff_files(["a", "b", "c", "zz"]) == {"a": ["src/a.py", "src/z.py"]}
