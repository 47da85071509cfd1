"""The contract of the ``MemoryStore`` role (``ctxgraph.graph.store``), run on
every store: chunks written per project and file, replaced by path, their
state, vectors and stats read back, and searched by vector and by words."""

from __future__ import annotations

import pytest

from ctxgraph.core.models import FileStat, MemoryChunk, MemoryProject
from ctxgraph.graph.store import KnowledgeStore, MemoryStore

AT = "2026-03-01T00:00:00Z"


def unit(*weights: float) -> tuple[float, ...]:
    return (*weights, *[0.0] * (384 - len(weights)))


def project(pid: str = "shop", files: int = 2, chunks: int = 3) -> MemoryProject:
    return MemoryProject(id=pid, root=f"/src/{pid}", indexed_at=AT, embeddings=True, model="m", files=files,
                         chunks=chunks, files_indexed=files)


def chunk(path: str, start: int, words: str, vector: tuple[float, ...] | None, sha: str = "s1") -> MemoryChunk:
    return MemoryChunk(path=path, start_line=start, end_line=start + 9, text=words, text_hash=f"{path}:{start}:{sha}",
                       token_estimate=5, file_sha256=f"{path}:{sha}", file_mtime_ns=7, file_size=70,
                       embedding=vector, search_text=f"{path} {words}")


@pytest.fixture
def memory(store: KnowledgeStore) -> MemoryStore:
    """The store of each kind with one indexed project, seen as its memory role."""
    store.write_memory(project(), [chunk("pay.py", 1, "invoice pdf render", unit(1.0)),
                                   chunk("pay.py", 11, "refund the card", unit(0.0, 1.0)),
                                   chunk("cart.py", 1, "basket totals", unit(0.6, 0.8))], [])
    return store


def test_the_project_and_its_files_state(memory: MemoryStore) -> None:
    assert memory.memory_projects() == [project()]
    state = memory.memory_state("shop")
    assert state.project == project()
    assert state.file_hashes == {"cart.py": "cart.py:s1", "pay.py": "pay.py:s1"}
    assert state.file_stats == {"cart.py": FileStat(mtime_ns=7, size=70, sha256="cart.py:s1"),
                                "pay.py": FileStat(mtime_ns=7, size=70, sha256="pay.py:s1")}
    assert memory.memory_state("other").project is None and memory.memory_state("other").file_hashes == {}


def test_vectors_by_path_and_text_hash(memory: MemoryStore) -> None:
    assert memory.memory_vectors("shop", ["pay.py", "gone.py"]) == {
        "pay.py": {"pay.py:1:s1": unit(1.0), "pay.py:11:s1": unit(0.0, 1.0)}}
    assert memory.memory_vectors("other", ["pay.py"]) == {}


def test_a_touch_records_the_new_stat_only(memory: MemoryStore) -> None:
    memory.touch_memory("shop", {"pay.py": FileStat(mtime_ns=9, size=71, sha256="pay.py:s1")})
    state = memory.memory_state("shop")
    assert state.file_stats["pay.py"] == FileStat(mtime_ns=9, size=71, sha256="pay.py:s1")
    assert state.file_stats["cart.py"] == FileStat(mtime_ns=7, size=70, sha256="cart.py:s1")
    assert state.file_hashes["pay.py"] == "pay.py:s1"


def test_a_replaced_path_loses_its_old_chunks(memory: MemoryStore) -> None:
    memory.write_memory(project(chunks=2), [chunk("pay.py", 1, "invoice email", unit(1.0), sha="s2")], ["pay.py"])
    assert memory.memory_state("shop").file_hashes == {"cart.py": "cart.py:s1", "pay.py": "pay.py:s2"}
    assert memory.memory_vectors("shop", ["pay.py"]) == {"pay.py": {"pay.py:1:s2": unit(1.0)}}
    memory.write_memory(project(files=1, chunks=1), [], ["pay.py"])  # a file gone
    assert memory.memory_state("shop").file_hashes == {"cart.py": "cart.py:s1"}


def test_search_by_vector_and_by_words_best_first(memory: MemoryStore) -> None:
    by_vector, by_text = memory.search_memory("shop", unit(1.0), ["invoice", "pdf"], 2)
    assert [(h.chunk.path, h.chunk.start_line) for h in by_vector] == [("pay.py", 1), ("cart.py", 1)]
    assert [h.rank for h in by_vector] == [1, 2] and by_vector[0].score > by_vector[1].score
    assert [(h.chunk.path, h.chunk.start_line) for h in by_text] == [("pay.py", 1)]
    assert memory.search_memory("shop", None, ["refund"], 5)[0] == []
    assert memory.search_memory("other", unit(1.0), ["invoice"], 5) == ([], [])
