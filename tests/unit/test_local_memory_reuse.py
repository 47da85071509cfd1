"""The embedded store's in-memory chunk index after a write: rows whose
stored text is the same are reused, changed and new rows parsed, removed
rows dropped — searches answer as a store opened afresh does."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ctxgraph.core.models import MemoryChunk, MemoryProject
from ctxgraph.graph.local import LocalStore


def chunk(path: str, words: str, seed: int) -> MemoryChunk:
    v = np.random.default_rng(seed).standard_normal(384)
    v /= np.linalg.norm(v)
    return MemoryChunk(path=path, start_line=1, end_line=2, text=words, text_hash=str(seed), token_estimate=5,
                       file_sha256=f"sha{seed}", embedding=tuple(float(x) for x in v), search_text=words)


def answers(store: LocalStore, query: MemoryChunk) -> list[list[tuple[str, float]]]:
    assert query.embedding is not None
    found = store.search_memory("p", query.embedding, query.search_text.split(), 3)
    return [[(h.chunk.path, h.score) for h in hits] for hits in found]


def test_a_rebuild_after_a_write_answers_as_a_fresh_store(tmp_path: Path) -> None:
    project = MemoryProject(id="p", root=str(tmp_path), indexed_at="", embeddings=True, model="m", files=3,
                            chunks=0, files_indexed=0)
    with LocalStore.open(tmp_path / "graph.db") as store:
        store.write_memory(project, [chunk("a.py", "parse header", 1), chunk("b.py", "render page", 2),
                                     chunk("c.py", "close socket", 3)], [])
        before = answers(store, chunk("q", "parse header", 1))
        assert before[0][0] == ("a.py", 1.0) and before[1][0][0] == "a.py"
        # a.py's text and vector change, c.py goes, d.py comes
        store.write_memory(project, [chunk("a.py", "open socket", 4), chunk("d.py", "parse header", 1)],
                           ["a.py", "c.py"])
        after = [answers(store, chunk("q", "parse header", 1)), answers(store, chunk("q", "open socket", 4))]
    with LocalStore.open(tmp_path / "graph.db") as fresh:
        assert after == [answers(fresh, chunk("q", "parse header", 1)), answers(fresh, chunk("q", "open socket", 4))]
    assert after[0][0][0] == ("d.py", 1.0) and after[1][0][0] == ("a.py", 1.0)
    assert all(path != "c.py" for hits in after for side in hits for path, _ in side)


def test_the_index_of_counts_is_the_index_build_makes() -> None:
    from ctxgraph.core import bm25

    rng = np.random.default_rng(7)
    words = [f"w{n}" for n in range(40)]
    docs = [{words[int(t)]: int(rng.integers(1, 4)) for t in rng.integers(0, 40, int(rng.integers(0, 12)))}
            for _ in range(60)]
    vocabulary = {w: i for i, w in enumerate(words)}
    counted = bm25.Index.of_counts(words, [(np.asarray([vocabulary[t] for t in d], dtype=np.int64),
                                            np.asarray(list(d.values()), dtype=np.int64)) for d in docs])
    built = bm25.Index.build(docs)
    assert (counted.count, counted.size) == (built.count, built.size)
    assert np.array_equal(counted.inverse, built.inverse)
    assert set(counted.postings) == set(built.postings)
    for term, (rows, tf) in built.postings.items():
        assert np.array_equal(counted.postings[term][0], rows) and np.array_equal(counted.postings[term][1], tf)
    query = ["w1", "w7", "w33", "nowhere"]
    assert np.array_equal(counted.scores(query), built.scores(query))
