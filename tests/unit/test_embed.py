"""Every embedding runtime gives sentence-transformers' vectors for
all-MiniLM-L6-v2: numpy and the float32 ONNX graph to float32 rounding, the
int8 one within its quantization's agreement."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ctxgraph.core.vectors import DIMENSIONS
from ctxgraph.memory import embed
from ctxgraph.memory.embed import RUNTIMES, CachedEmbedder, Embedder, EmbeddingUnavailableError, Vectors
from ctxgraph.memory.embed_onnx import OnnxEmbedder

REFERENCE = Path(__file__).parent.parent / "data" / "minilm_reference.json"
#: The least cosine with the reference vector each runtime keeps, per text.
AGREEMENT = {"numpy": 0.99999, "onnx": 0.99999, "onnx-int8": 0.97}


@pytest.fixture(scope="module", params=RUNTIMES)
def embedder(request: pytest.FixtureRequest) -> Vectors:
    runtime = request.param
    return Embedder() if runtime == "numpy" else OnnxEmbedder(runtime)


def runtime_of(embedder: Vectors) -> str:
    return str(getattr(embedder, "runtime", "numpy"))


def test_vectors_agree_with_the_reference_implementation(embedder: Vectors) -> None:
    cases = json.loads(REFERENCE.read_text(encoding="utf-8"))["cases"]
    got = embedder.embed([c["text"] for c in cases])
    want = np.array([c["vector"] for c in cases], dtype=np.float32)
    assert got.shape == (len(cases), DIMENSIONS)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() > AGREEMENT[runtime_of(embedder)]
    if runtime_of(embedder) != "onnx-int8":
        assert np.abs(got - want).max() < 1e-5


def test_vectors_are_unit_length_and_batching_does_not_change_them(embedder: Vectors) -> None:
    texts = ["short", "a much longer text about parsing multipart form data " * 10, "def f():\n    pass"]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.abs(together - alone).max() < 1e-5


def test_batches_keep_to_their_word_pieces_and_cover_every_text() -> None:
    from ctxgraph.memory.model import batches

    lengths = [256, 12, 40, 256, 12, 100, 12, 130, 90]
    groups = batches(lengths, batch=3, pieces=300)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    assert groups == [[1, 4, 6], [2, 8, 5], [7], [0], [3]]  # 40, 90, 100 pad to 3 x 100; 130 with them would not fit
    for g in groups:
        assert len(g) <= 3 and (len(g) == 1 or len(g) * max(lengths[i] for i in g) <= 300)
    assert batches(lengths, batch=4) == [[1, 4, 6, 2], [8, 5, 7, 0], [3]]  # no budget: by count, sorted


def test_related_texts_are_closer_than_unrelated(embedder: Vectors) -> None:
    a, b, c = embedder.embed(["parse the HTTP cookie header", "cookie header parsing", "train a neural network"])
    assert float(a @ b) > float(a @ c) + 0.2


def test_no_texts_gives_an_empty_matrix(embedder: Vectors) -> None:
    assert embedder.embed([]).shape == (0, DIMENSIONS)


def test_the_runtime_is_chosen_by_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    embed.shared_embedder.cache_clear()
    try:
        monkeypatch.setenv("CTXGRAPH_EMBEDDING_RUNTIME", "numpy")
        assert isinstance(embed.shared_embedder(), Embedder)
        embed.shared_embedder.cache_clear()
        monkeypatch.setenv("CTXGRAPH_EMBEDDING_RUNTIME", "torch")
        with pytest.raises(EmbeddingUnavailableError, match="onnx, onnx-int8, numpy"):
            embed.shared_embedder()
        embed.shared_embedder.cache_clear()
        monkeypatch.delenv("CTXGRAPH_EMBEDDING_RUNTIME")
        assert runtime_of(embed.shared_embedder()) == RUNTIMES[0]
    finally:
        embed.shared_embedder.cache_clear()


def test_a_built_model_is_reused_and_a_new_cache_builds_its_own(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxgraph.memory.embed_onnx import model_file

    monkeypatch.setenv("CTXGRAPH_MODEL_CACHE", str(tmp_path))
    built = model_file("onnx")
    assert built.parent == tmp_path / "models" and built.is_file()
    stamp = built.stat().st_mtime_ns
    assert model_file("onnx") == built and built.stat().st_mtime_ns == stamp
    # The model and its weights beside it (external data), no temporary left.
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [built.name, built.name + ".data"]
    assert built.stat().st_size < 1_000_000 < (tmp_path / "models" / (built.name + ".data")).stat().st_size


def test_cached_vectors_are_kept_apart_by_runtime(tmp_path: Path) -> None:
    numpy_runtime, int8 = Embedder(), OnnxEmbedder("onnx-int8")
    path = tmp_path / "vectors.npz"
    first = CachedEmbedder(path, numpy_runtime)
    first.embed(["cookie header parsing"])
    first.save()
    again = CachedEmbedder(path, int8)
    got = again.embed(["cookie header parsing"])
    assert np.array_equal(got, int8.embed(["cookie header parsing"]))
    assert not np.array_equal(got, numpy_runtime.embed(["cookie header parsing"]))


def test_the_default_runtime_falls_back_to_numpy_when_onnx_cannot_run(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("CTXGRAPH_MODEL_CACHE", str(blocked))  # no model can be built there
    embed.shared_embedder.cache_clear()
    try:
        assert isinstance(embed.shared_embedder(), Embedder)
        embed.shared_embedder.cache_clear()
        monkeypatch.setenv("CTXGRAPH_EMBEDDING_RUNTIME", "onnx")  # named: an error, not a fallback
        with pytest.raises(EmbeddingUnavailableError, match="the onnx runtime cannot run"):
            embed.shared_embedder()
    finally:
        embed.shared_embedder.cache_clear()


class _Constant:
    """A stand-in runtime: every text's vector is the same (only the cache's file is tested)."""

    def embed(self, texts: list[str], max_pieces: int = 256) -> np.ndarray:
        return np.ones((len(texts), 384), dtype=np.float32)


def test_caches_saved_at_once_to_one_file_all_succeed(tmp_path: Path) -> None:
    """Each save writes a temporary file of its own and replaces the cache whole: savers at the same
    moment (two benchmark processes) never fail and never leave a temporary behind."""
    import threading

    path = tmp_path / "vectors.npz"
    failures: list[BaseException] = []

    def saver(n: int) -> None:
        for i in range(25):
            cache = CachedEmbedder(path, _Constant())  # type: ignore[arg-type]
            cache.embed([f"text {n} {i}"])
            try:
                cache.save()
            except BaseException as exc:
                failures.append(exc)

    threads = [threading.Thread(target=saver, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert [p.name for p in tmp_path.iterdir()] == ["vectors.npz"]
    assert CachedEmbedder(path, _Constant()).embed(["text 0 0"]).shape == (1, 384)  # type: ignore[arg-type]
