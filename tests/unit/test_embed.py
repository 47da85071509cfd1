"""The numpy forward pass gives sentence-transformers' vectors for all-MiniLM-L6-v2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ctxgraph.core.vectors import DIMENSIONS
from ctxgraph.memory.embed import Embedder, shared_embedder

REFERENCE = Path(__file__).parent.parent / "data" / "minilm_reference.json"


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return shared_embedder()


def test_vectors_equal_the_reference_implementation(embedder: Embedder) -> None:
    cases = json.loads(REFERENCE.read_text(encoding="utf-8"))["cases"]
    got = embedder.embed([c["text"] for c in cases])
    want = np.array([c["vector"] for c in cases], dtype=np.float32)
    assert got.shape == (len(cases), DIMENSIONS)
    assert np.abs(got - want).max() < 1e-5
    assert (got * want).sum(axis=1).min() > 0.99999


def test_vectors_are_unit_length_and_batching_does_not_change_them(embedder: Embedder) -> None:
    texts = ["short", "a much longer text about parsing multipart form data " * 10, "def f():\n    pass"]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.abs(together - alone).max() < 1e-5


def test_related_texts_are_closer_than_unrelated(embedder: Embedder) -> None:
    a, b, c = embedder.embed(["parse the HTTP cookie header", "cookie header parsing", "train a neural network"])
    assert float(a @ b) > float(a @ c) + 0.2


def test_no_texts_gives_an_empty_matrix(embedder: Embedder) -> None:
    assert embedder.embed([]).shape == (0, DIMENSIONS)
