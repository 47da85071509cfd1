"""The benchmark generator: seeded, reproducible, the requested size, Zipf-shaped
tags, valid documents, and planted items a query can find."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from benchmarks.generator import PLANTED_FILES, PLANTED_KNOWLEDGE, Zipf, generate, vocabulary
from benchmarks.suite import accumulated, percentile
from benchmarks.tables import markdown_table, table
from ctxgraph.core.documents import validate
from ctxgraph.core.models import FileEntry, HandoffDoc, TaskDoc


def _dump(ds: object) -> str:
    return json.dumps([ds.files, ds.tasks, ds.handoffs, ds.queries], sort_keys=True)  # type: ignore[attr-defined]


def test_same_seed_same_documents_other_seed_other_documents() -> None:
    assert _dump(generate(1000, seed=7)) == _dump(generate(1000, seed=7))
    assert _dump(generate(1000, seed=7)) != _dump(generate(1000, seed=8))


@pytest.mark.parametrize("nodes", [300, 1000, 10_000])
def test_content_nodes_add_up_to_the_size(nodes: int) -> None:
    counts = generate(nodes).counts()
    assert counts["total"] == nodes
    assert counts["tasks"] > counts["handoffs"] > 0 and counts["knowledge"] > counts["files"] > 0


def test_sizes_below_the_minimum_are_refused() -> None:
    with pytest.raises(ValueError):
        generate(50)


def test_documents_validate_and_dependencies_point_backwards() -> None:
    ds = generate(1000)
    seen: set[str] = set()
    for raw in ds.tasks:
        task = validate(TaskDoc, raw, "<task>")
        assert set(task.depends_on) <= seen, task.id  # dependency order: no cycles, no forward references
        seen.add(task.id)
    chained = sum(1 for t in ds.tasks if t["depends_on"])
    assert chained > 0.7 * len(ds.tasks)  # epics are chains
    finished = {h["task_id"] for h in ds.handoffs}
    for raw in ds.handoffs:
        validate(HandoffDoc, raw, "<handoff>")
    assert finished <= seen and not finished & set(ds.queries)
    stamps = [h["completed_at"] for h in ds.handoffs]
    assert stamps == sorted(stamps)
    paths = [FileEntry(**f).path for f in ds.files]
    assert len(set(paths)) == len(paths)
    known = set(paths)
    for h in ds.handoffs:
        assert {c["path"] for c in h["files_created"] + h["files_modified"]} <= known


def test_tags_follow_a_zipf_distribution() -> None:
    ds = generate(10_000)
    ranked = [count for _, count in ds.tag_counts.most_common()]
    assert len(ranked) > 300
    # frequency x rank is roughly constant for the head (Zipf, exponent 1)
    head = [ranked[r - 1] * r for r in (1, 2, 4, 8, 16)]
    assert max(head) / min(head) < 2.0, head
    # a long tail: most distinct tags are rare, a few are everywhere
    rare = sum(1 for c in ranked if c <= 3)
    assert rare > len(ranked) / 3
    assert ranked[0] > 50 * ranked[len(ranked) // 2]
    # the log-log slope over ranks 1..100 is close to -1
    xs = [math.log(r) for r in range(1, 101)]
    ys = [math.log(ranked[r - 1]) for r in range(1, 101)]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    assert -1.4 < slope < -0.6, slope


def test_zipf_draws_are_seeded() -> None:
    import random

    z = Zipf(100)
    a = [z.draw(random.Random(1)) for _ in range(5)]
    assert a == [z.draw(random.Random(1)) for _ in range(5)]
    counts = Counter(z.draw(random.Random(i)) for i in range(5000))
    assert counts[0] > counts[9] > counts[99]


def test_vocabulary_is_distinct_and_stable() -> None:
    words = vocabulary(2000, 1)
    assert len(set(words)) == 2000 and words == vocabulary(2000, 1)
    assert not any(w.endswith("s") and w not in ("sort",) for w in words[200:])


def test_planted_items_exist_and_share_rare_words_with_their_query() -> None:
    ds = generate(1000)
    texts = {
        x.get("pattern") or x.get("issue") or x.get("decision"): (h["task_id"], x)
        for h in ds.handoffs
        for key in ("patterns_discovered", "gotchas", "decisions")
        for x in h[key]
    }
    queries = {t["id"]: t for t in ds.tasks if t["id"] in ds.queries}
    for qid, planted in ds.planted.items():
        query = queries[qid]
        w1, w2 = planted.words
        assert len(planted.knowledge) == PLANTED_KNOWLEDGE and len(planted.files) == PLANTED_FILES
        for marker in planted.knowledge:
            owners = [(tid, x) for text, (tid, x) in texts.items() if text.startswith(marker + " ")]
            assert len(owners) == 1, marker
            tid, item = owners[0]
            assert tid not in query["depends_on"]  # found by its tags, not inherited
            assert item["applies_to"] == [w1, w2]
        for path in planted.files:
            entry = next(f for f in ds.files if f["path"] == path)
            assert entry["component"] == w1
        # the rare words appear nowhere else
        others = [t for t in ds.tasks if t["id"] != qid]
        assert not any(w1 in json.dumps(t) for t in others)
        assert w1 in query["objective"] and w2 in query["name"]
        assert 80 <= len(" ".join([query["name"], query["objective"], *query["acceptance_criteria"]]).split()) <= 120


def test_planted_words_become_the_query_keywords(extractor: object) -> None:
    from ctxgraph.signals import SignalExtractor

    assert isinstance(extractor, SignalExtractor)
    ds = generate(1000)
    hits = 0
    for t in ds.tasks:
        if t["id"] in ds.planted:
            signals = extractor.extract("\n".join([t["name"], t["objective"], *t["acceptance_criteria"]]))
            hits += sum(1 for w in ds.planted[t["id"]].words if w in signals.keywords)
    assert hits >= 0.9 * 2 * len(ds.planted)


def test_accumulated_baseline_locates_every_planted_item() -> None:
    ds = generate(1000)
    base = accumulated(ds)
    assert base.total > 8000
    first, used = base.window(8000)
    assert used <= 8000 and 0 < first < len(base.chunk_tokens)
    items = ds.planted[ds.queries[0]].items
    assert base.tokens_for(items, len(items)) >= base.tokens_for(items, 1) > 0
    assert base.tokens_for(items, 0) == 0


def test_percentile_is_nearest_rank() -> None:
    values = list(range(1, 101))
    assert (percentile(values, 50), percentile(values, 95), percentile(values, 99)) == (50, 95, 99)
    assert percentile([3.0], 99) == 3.0


def test_the_table_shows_each_configuration_and_the_ratio_on_the_vectors_row() -> None:
    rows = [{"store": "local", "nodes": 1000, "vectors": True, "compute_p95_ms": 12.0, "p95_vs_full_text": 1.2},
            {"store": "local", "nodes": 1000, "vectors": False, "compute_p95_ms": 10.0}]
    header, with_vectors, full_text = table(rows).splitlines()
    assert header.split()[:3] == ["store", "nodes", "vectors"] and "p95/ft" in header
    assert with_vectors.split()[:3] == ["local", "1,000", "yes"] and "1.20x" in with_vectors
    assert full_text.split()[:3] == ["local", "1,000", "no"] and "x" not in full_text.replace("local", "")
    assert "| yes |" in markdown_table(rows) and "| 1.20x |" in markdown_table(rows)
