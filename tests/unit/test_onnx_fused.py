"""The fused graph (``onnx_build.build_graph(..., fused=True)``: onnxruntime's
``Attention``, ``SkipLayerNormalization`` and ``BiasGelu`` operators, what
``benchmarks/first_index.py`` measures against the plain graph) gives the
plain graph's vectors to float32 rounding, padding and all; and it is built
from the installed weights alone."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ctxgraph.memory.embed_onnx import OnnxEmbedder
from ctxgraph.memory.model import model_dir
from ctxgraph.memory.onnx_build import build, build_graph

TEXTS = [
    "short",
    "def chunk_file(path: str, text: str) -> list[Chunk]:\n    return list(_pack(text.splitlines(), spans))",
    "A handoff names the files it changed, the decisions taken and what is left to do. " * 12,
    "x = 1",
    "The first index embeds every chunk of every file; " * 40,  # cut to 256 word pieces
]


@pytest.fixture(scope="module")
def fused_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(model_dir() / "model.safetensors", tmp_path_factory.mktemp("fused") / "fused.onnx",
                 quantize=False, fused=True)


def test_the_fused_graph_uses_the_fused_operators() -> None:
    from safetensors.numpy import load_file

    weights = load_file(str(model_dir() / "model.safetensors"))
    fused = Counter(n.op_type for n in build_graph(weights, fused=True).graph.node)
    plain = Counter(n.op_type for n in build_graph(weights).graph.node)
    assert (fused["Attention"], fused["SkipLayerNormalization"], fused["BiasGelu"]) == (6, 12, 6)
    assert fused["Softmax"] == fused["Erf"] == 0 and plain["Softmax"] == plain["Erf"] == 6
    assert plain["Attention"] == plain["SkipLayerNormalization"] == 0


@pytest.mark.parametrize("bulk", [False, True])
def test_the_fused_graph_gives_the_plain_graphs_vectors(fused_file: Path, bulk: bool) -> None:
    plain = OnnxEmbedder("onnx")
    fused = OnnxEmbedder("onnx", model=fused_file)
    # one at a time, and batched (padding masked by Attention's own mask)
    a = plain.embed_bulk(TEXTS) if bulk else np.vstack([plain.embed([t]) for t in TEXTS])
    b = fused.embed_bulk(TEXTS) if bulk else np.vstack([fused.embed([t]) for t in TEXTS])
    cosines = (a * b).sum(axis=1)
    assert f"{cosines.min():.4f}" == "1.0000", cosines
    assert np.abs(a - b).max() < 1e-5
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)


def test_the_fused_graph_is_not_quantized(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not quantized"):
        build(model_dir() / "model.safetensors", tmp_path / "m.onnx", quantize=True, fused=True)
