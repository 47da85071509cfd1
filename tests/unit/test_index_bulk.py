"""An index run's embedding path: more threads and larger, length-sorted
batches (``embed_bulk``) give the vectors the one-text-at-a-time path gives
(cosine 1.0000 on chunks of this project's own source), a run uses that path,
and a tree indexed once reports nothing re-indexed the next time, its empty
files included."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from ctxgraph.graph.local import LocalStore
from ctxgraph.memory.embed import Embedder
from ctxgraph.memory.embed_onnx import OnnxEmbedder
from ctxgraph.memory.index import index_project
from ctxgraph.memory.model import index_threads, threads
from ctxgraph.memory.scan import EMPTY, SourceFile, walk

SOURCE = Path(__file__).resolve().parents[2] / "ctxgraph" / "memory"


def sample_texts(limit: int = 24) -> list[str]:
    """Chunk texts as the index embeds them (path, newline, text), of several lengths."""
    from ctxgraph.memory.index import file_chunks

    texts = [f"{f.path}\n{c.text}" for f in walk(SOURCE) if isinstance(f, SourceFile)
             for c in file_chunks(f, lightweight=False)]
    return [*texts[:limit - 4], "short", "x = 1", "a few more words about parsing a header", texts[-1][:90]]


@pytest.mark.parametrize("runtime", ["onnx", "numpy"])
def test_the_bulk_path_gives_the_single_paths_vectors(runtime: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXGRAPH_EMBEDDING_THREADS", "2")  # two threads even where one CPU is free
    embedder = OnnxEmbedder(runtime) if runtime == "onnx" else Embedder()
    texts = sample_texts(12 if runtime == "numpy" else 24)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    bulk = embedder.embed_bulk(texts)
    cosines = (alone * bulk).sum(axis=1)
    assert f"{cosines.min():.4f}" == "1.0000", cosines
    assert np.abs(alone - bulk).max() < 1e-5


def test_threads_follow_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CTXGRAPH_EMBEDDING_THREADS", raising=False)
    assert threads() == 1 and index_threads() >= 1
    monkeypatch.setenv("CTXGRAPH_EMBEDDING_THREADS", "1")
    assert index_threads() == 1
    monkeypatch.setenv("CTXGRAPH_EMBEDDING_THREADS", "999")
    assert threads() == index_threads() >= 1  # at most the CPUs this process may use
    monkeypatch.setenv("CTXGRAPH_EMBEDDING_THREADS", "two")
    assert threads() == 1


class Recording:
    """Unit vectors from each text's hash; records which path each call took."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def _vectors(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rng = np.random.default_rng([sum(t.encode()) for t in texts] or [0])
        out = rng.standard_normal((len(texts), 384)).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        self.calls.append("embed")
        return self._vectors(texts)

    def embed_bulk(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        self.calls.append("bulk")
        return self._vectors(texts)


def test_an_unchanged_tree_is_not_indexed_again_empty_files_included(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "blank.md").write_text("\n  \n", encoding="utf-8")
    (root / "pkg" / "mod.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    embedder = Recording()
    with LocalStore.open(tmp_path / "graph.db") as store:
        first = index_project(store, root, embedder=embedder)
        assert first.indexed == 1 and first.complete
        assert {s.path: s.reason for s in first.skipped} == {"pkg/__init__.py": EMPTY, "pkg/blank.md": EMPTY}
        assert embedder.calls and set(embedder.calls) == {"bulk"}
        again = index_project(store, root, embedder=embedder)
        assert (again.indexed, again.unchanged, again.chunks) == (0, 1, 0)
        # A file emptied loses its chunks; one given text is indexed.
        (root / "pkg" / "mod.py").write_text("", encoding="utf-8")
        (root / "pkg" / "blank.md").write_text("# Notes\n\nA line.\n", encoding="utf-8")
        third = index_project(store, root, embedder=embedder)
        assert (third.indexed, third.removed) == (1, 1)
        assert set(store.memory_state(third.project).file_hashes) == {"pkg/blank.md"}


def test_the_one_time_model_build_is_an_info_line_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from ctxgraph.memory.embed_onnx import model_file

    monkeypatch.setenv("CTXGRAPH_MODEL_CACHE", str(tmp_path / "cache"))
    with caplog.at_level(logging.DEBUG, logger="ctxgraph.memory.embed_onnx"):
        first = model_file("onnx")
        assert model_file("onnx") == first and first.is_file()
    built = [r for r in caplog.records if "building the onnx model" in r.getMessage()]
    assert [r.levelno for r in built] == [logging.INFO]


def test_batches_on_several_threads_give_the_rows_of_one_thread() -> None:
    from ctxgraph.memory.model import BATCH, BATCH_PIECES, encode, run_encoded

    embedder = OnnxEmbedder("onnx")
    encoded = encode(embedder.tokenizer, sample_texts(), 256)
    session = embedder._session(1)

    def forward(ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return np.asarray(session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})[0])

    alone = run_encoded(encoded, forward, BATCH, BATCH_PIECES)
    together = run_encoded(encoded, forward, BATCH, BATCH_PIECES, workers=3)
    assert np.array_equal(alone, together)  # the same groups, each run whole on one thread
    assert np.abs(np.linalg.norm(together, axis=1) - 1).max() < 1e-5
