"""A task's query vector is made once per text and read by its contexts; an
ingest embeds its own finished tasks once, even beside concurrent ingests."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from ctxgraph.core.models import Task
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.records import text_hash
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.embed import QUERY_PIECES, shared_embedder
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor


class CountingEmbedder:
    """The real embedder, counting the texts it embeds (by word pieces kept),
    a little slow so that concurrent callers overlap."""

    def __init__(self, delay: float = 0.0) -> None:
        self.texts: Counter[tuple[str, int]] = Counter()
        self.delay = delay
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        with self._lock:
            self.texts.update((t, max_pieces) for t in texts)
        if self.delay:
            threading.Event().wait(self.delay)
        return shared_embedder().embed(texts, max_pieces)


def handoff(task_id: str) -> dict[str, object]:
    return {"task_id": task_id, "summary": f"{task_id} done",
            "files_modified": [{"path": f"src/{task_id}.py", "purpose": "the change"}]}


def seed_history(svc: ContextService) -> None:
    """One finished task with its vector: contexts then search by vector."""
    svc.add_tasks([Task(id="old", name="Parse the cookie header")])
    svc.ingest_handoffs([("h", handoff("old"))])
    svc.embed_tasks()


def test_query_vectors_are_stored_by_text(store: KnowledgeStore) -> None:
    store.upsert_tasks([Task(id="t1", name="cookie header")])
    assert store.task_query_vectors(["t1", "ghost"]) == {}
    vec = [1.0] + [0.0] * 383
    store.write_task_query_vectors([("t1", text_hash("cookie header"), vec), ("ghost", "x", vec)])
    assert store.task_query_vectors(["t1", "ghost"]) == {"t1": (text_hash("cookie header"), vec)}
    store.upsert_tasks([Task(id="t1", name="cookie jar")])  # kept, with the hash of the text it was made of
    assert store.task_query_vectors(["t1"])["t1"][0] == text_hash("cookie header")
    rows = list(store.export_rows())
    assert not any("query_vector" in row.get("props", {}) for row in rows)
    assert store.task_vector_count() == 0 and not store.has_task_vectors()  # not a finished task's vector
    store.clear()
    assert store.task_query_vectors(["t1"]) == {}


def test_a_stored_task_is_embedded_once_for_all_its_contexts(store: KnowledgeStore,
                                                             extractor: SignalExtractor) -> None:
    svc = ContextService(store, extractor)
    seed_history(svc)
    svc.embedder = counting = CountingEmbedder()
    svc.add_tasks([Task(id="new", name="Parse the cookie jar")])  # embedded when added
    assert counting.texts == Counter({("Parse the cookie jar", QUERY_PIECES): 1})
    for _ in range(3):
        ctx = svc.compute("new", record=False)
    assert "old" in ctx.markdown  # its neighbour by embedding
    other = ContextService(store, extractor)  # another process: reads the stored vector
    other.embedder = counting
    other.compute("new", record=False)
    assert sum(counting.texts.values()) == 1
    svc.add_tasks([Task(id="new", name="Parse the cookie jar")])  # the same text: not again
    svc.add_tasks([Task(id="new", name="Parse the cookie jar twice")])  # a new text: once
    svc.compute("new", record=False)
    assert counting.texts[("Parse the cookie jar twice", QUERY_PIECES)] == 1
    assert sum(counting.texts.values()) == 2


def test_a_stored_task_without_a_vector_gets_one_at_its_first_context(store: KnowledgeStore,
                                                                     extractor: SignalExtractor) -> None:
    svc = ContextService(store, extractor)
    svc.embedder = counting = CountingEmbedder()
    svc.add_tasks([Task(id="new", name="Parse the cookie jar")])  # no finished task has a vector yet
    seed_history(svc)
    counting.texts.clear()
    for _ in range(2):
        svc.compute("new", record=False)
    assert counting.texts == Counter({("Parse the cookie jar", QUERY_PIECES): 1})


def test_an_unsaved_task_is_embedded_once_per_context(store: KnowledgeStore, extractor: SignalExtractor) -> None:
    svc = ContextService(store, extractor)
    seed_history(svc)
    svc.embedder = counting = CountingEmbedder()
    for _ in range(2):
        svc.compute(Task(id="inline", name="Parse the cookie jar"), record=False)
    assert counting.texts == Counter({("Parse the cookie jar", QUERY_PIECES): 2})
    assert store.task_query_vectors(["inline"]) == {}  # nothing written for it


@pytest.fixture(params=["local", "neo4j"])
def four_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[KnowledgeStore]]:
    """Four stores on one graph, as four processes would open it."""
    if request.param == "local":
        stores: list[KnowledgeStore] = [LocalStore.open(tmp_path / "graph.db") for _ in range(4)]
    else:
        from ctxgraph.graph.neo4j_store import Neo4jSettings, Neo4jStore

        settings = request.getfixturevalue("neo4j_settings")
        assert isinstance(settings, Neo4jSettings)
        stores = [Neo4jStore.connect(settings) for _ in range(4)]
        stores[0].clear()
    yield stores
    stores[0].clear()
    for s in stores:
        s.close()


def test_concurrent_ingests_of_disjoint_handoffs_embed_each_task_once(four_stores: list[KnowledgeStore],
                                                                      extractor: SignalExtractor) -> None:
    ids = [[f"w{w}-t{n}" for n in range(6)] for w in range(4)]
    first = ContextService(four_stores[0], extractor)
    first.add_tasks([Task(id=tid, name=f"Task {tid} about parsing") for group in ids for tid in group])
    counting = CountingEmbedder(delay=0.02)
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def ingest(store: KnowledgeStore, group: list[str]) -> None:
        try:
            svc = ContextService(store, extractor)
            svc.embedder = counting
            results = svc.ingest_handoffs([(tid, handoff(tid)) for tid in group], batch_size=2)
            start.wait()
            svc.embed_tasks(tasks=[r.task_id for r in results], batch=2)  # what `ingest handoff` does after
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    workers = [threading.Thread(target=ingest, args=(s, g)) for s, g in zip(four_stores, ids, strict=True)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert four_stores[0].task_vector_count() == 24
    assert counting.texts == Counter({(f"Task {tid} about parsing", 256): 1 for group in ids for tid in group})


def test_embed_tasks_skips_what_another_process_embedded_meanwhile(store: KnowledgeStore,
                                                                    extractor: SignalExtractor) -> None:
    svc = ContextService(store, extractor)
    svc.add_tasks([Task(id=f"t{n}", name=f"Task {n}") for n in range(4)])
    svc.ingest_handoffs([(f"t{n}", handoff(f"t{n}")) for n in range(4)])
    pending = svc.tasks_to_embed()  # read by this process ...
    other = ContextService(store, extractor)
    other.embedder = CountingEmbedder()
    assert other.embed_tasks(tasks=["t0", "t1"]) == 2  # ... while another embeds two of them
    svc.embedder = counting = CountingEmbedder()
    assert svc.embed_tasks(pending, batch=2) == 2
    assert set(counting.texts) == {("Task 2", 256), ("Task 3", 256)}


def test_a_finished_task_takes_its_query_vector_when_made_of_all_its_text(store: KnowledgeStore,
                                                                          extractor: SignalExtractor) -> None:
    svc = ContextService(store, extractor)
    seed_history(svc)
    svc.embedder = counting = CountingEmbedder()
    long = "Parse the multipart form body " + "and stream every part to disk " * 30  # over QUERY_PIECES
    svc.add_tasks([Task(id="short", name="Parse the cookie jar"), Task(id="long", name=long)])
    assert sum(counting.texts.values()) == 2  # their query vectors
    svc.ingest_handoffs([("s", handoff("short")), ("l", handoff("long"))])
    assert svc.embed_tasks(tasks=["short", "long"]) == 2
    assert counting.texts == Counter({("Parse the cookie jar", QUERY_PIECES): 1, (long, QUERY_PIECES): 1,
                                      (long, 256): 1})  # the short one is not embedded again
    assert store.tasks_to_embed(10) == []
