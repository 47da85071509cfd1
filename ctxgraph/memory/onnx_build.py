"""all-MiniLM-L6-v2 as an ONNX graph, built here from the model's own
``model.safetensors`` (no torch, no download): the runtime
:mod:`ctxgraph.memory.embed` prefers when ``onnxruntime`` and ``onnx`` are
installed.

Two graphs of the same forward pass (BERT embeddings and LayerNorm, six
encoder layers of 12 heads with exact erf GELU, mean pooling over the real
tokens, L2 normalisation):

- the plain graph, op for op the pass :class:`~ctxgraph.memory.embed.NumpyEmbedder`
  runs, in standard ONNX ops: what the ``onnx-int8`` variant quantizes
  (onnxruntime's ``quantize_dynamic``);
- the fused graph (the ``onnx`` variant): each layer in onnxruntime's own
  fused operators (``com.microsoft`` domain, in every onnxruntime build for
  the CPU) — ``Attention`` (the three projections as one matrix product, the
  heads' scores, mask and softmax in one kernel), ``SkipLayerNormalization``
  (bias, residual and LayerNorm), ``BiasGelu``. onnxruntime fuses almost
  none of the plain graph itself at load (six of 48 MatMuls); the fused
  graph's vectors are the plain graph's to float32 rounding.

Inputs ``input_ids`` (int64, batch x length) and ``attention_mask`` (float32,
1 for a real token); output ``embedding`` (float32, batch x 384).
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ctxgraph.core.vectors import DIMENSIONS

LAYERS = 6
HEADS = 12
EPS = 1e-12
OPSET = 17
#: The domain of onnxruntime's fused operators.
MS_DOMAIN = "com.microsoft"


class _Graph:
    """Nodes and initializers of a graph being built, with unique names."""

    def __init__(self, weights: dict[str, Any]) -> None:
        self.weights = weights
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._count = 0

    def name(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}_{self._count}"

    def const(self, array: Any, prefix: str = "c") -> str:
        from onnx import numpy_helper

        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def tensor(self, key: str) -> str:
        """The float32 weight ``key`` as an initializer."""
        return self.const(self.weights[key].astype(np.float32), key)

    def matrix(self, prefix: str) -> str:
        """The weight of the linear layer ``prefix``, transposed for ``MatMul``."""
        return self.const(np.ascontiguousarray(self.weights[f"{prefix}.weight"].T.astype(np.float32)),
                          prefix + ".weight")

    def op(self, kind: str, inputs: list[str], domain: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        out = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], name=out, domain=domain, **attrs))
        return out

    def linear(self, x: str, prefix: str) -> str:
        return self.op("Add", [self.op("MatMul", [x, self.matrix(prefix)]), self.tensor(f"{prefix}.bias")])

    def layer_norm(self, x: str, prefix: str) -> str:
        return self.op("LayerNormalization", [x, self.tensor(f"{prefix}.weight"), self.tensor(f"{prefix}.bias")],
                       axis=-1, epsilon=EPS)

    def skip_layer_norm(self, x: str, skip: str, dense: str, norm: str) -> str:
        """LayerNorm ``norm`` of ``x @ dense + bias + skip`` (the bias, the sum and the norm in one op)."""
        inputs = [self.op("MatMul", [x, self.matrix(dense)]), skip, self.tensor(f"{norm}.weight"),
                  self.tensor(f"{norm}.bias"), self.tensor(f"{dense}.bias")]
        return self.op("SkipLayerNormalization", inputs, domain=MS_DOMAIN, epsilon=EPS)


def _embeddings(g: _Graph, ids: str) -> str:
    """Word, position and (type 0) token-type embeddings, summed and normalized."""
    w = g.weights
    length = g.op("Slice", [g.op("Shape", [ids]), g.const(np.array([1], np.int64)), g.const(np.array([2], np.int64))])
    positions = g.op("Slice", [g.tensor("embeddings.position_embeddings.weight"), g.const(np.array([0], np.int64)),
                               length, g.const(np.array([0], np.int64))])
    x = g.op("Gather", [g.tensor("embeddings.word_embeddings.weight"), ids])
    x = g.op("Add", [g.op("Add", [x, positions]),
                     g.const(w["embeddings.token_type_embeddings.weight"][0].astype(np.float32))])
    return g.layer_norm(x, "embeddings.LayerNorm")


def _attention(g: _Graph, x: str, p: str, bias: str) -> str:
    """Self-attention of layer ``p`` over ``x`` in standard ops (``bias``: the
    mask's addend to the scores), before its output projection."""
    head = DIMENSIONS // HEADS
    split = g.const(np.array([0, 0, HEADS, head], np.int64))
    q = g.op("Transpose", [g.op("Reshape", [g.linear(x, f"{p}.attention.self.query"), split])], perm=[0, 2, 1, 3])
    k = g.op("Transpose", [g.op("Reshape", [g.linear(x, f"{p}.attention.self.key"), split])], perm=[0, 2, 3, 1])
    v = g.op("Transpose", [g.op("Reshape", [g.linear(x, f"{p}.attention.self.value"), split])], perm=[0, 2, 1, 3])
    scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), g.const(np.float32(1.0 / math.sqrt(head)))]), bias])
    probs = g.op("Softmax", [scores], axis=-1)
    merge = g.const(np.array([0, 0, DIMENSIONS], np.int64))
    return g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge])


def _plain_layers(g: _Graph, x: str, mask: str) -> str:
    one = g.const(np.float32(1.0))
    bias = g.op("Mul", [g.op("Sub", [one, mask]), g.const(np.float32(np.finfo(np.float32).min))])
    bias = g.op("Unsqueeze", [bias, g.const(np.array([1, 2], np.int64))])
    for n in range(LAYERS):
        p = f"encoder.layer.{n}"
        attended = g.op("Add", [g.linear(_attention(g, x, p, bias), f"{p}.attention.output.dense"), x])
        x = g.layer_norm(attended, f"{p}.attention.output.LayerNorm")
        inner = g.linear(x, f"{p}.intermediate.dense")
        erf = g.op("Erf", [g.op("Mul", [inner, g.const(np.float32(1.0 / math.sqrt(2.0)))])])
        gelu = g.op("Mul", [g.op("Mul", [inner, g.const(np.float32(0.5))]), g.op("Add", [erf, one])])
        x = g.layer_norm(g.op("Add", [g.linear(gelu, f"{p}.output.dense"), x]), f"{p}.output.LayerNorm")
    return x


def _fused_layers(g: _Graph, x: str, mask: str) -> str:
    # Attention's mask: int32, batch x length, 0 for padding (whose scores get
    # -10000 before the softmax: exp underflows to 0 in float32, as with the
    # plain graph's float32 minimum).
    index = g.op("Cast", [mask], to=6)  # INT32
    w = g.weights
    for n in range(LAYERS):
        p = f"encoder.layer.{n}"
        parts = [f"{p}.attention.self.{part}" for part in ("query", "key", "value")]
        qkv = g.const(np.ascontiguousarray(np.concatenate([w[f"{q}.weight"].T for q in parts], axis=1)
                                           .astype(np.float32)), f"{p}.attention.qkv.weight")
        qkv_bias = g.const(np.concatenate([w[f"{q}.bias"] for q in parts]).astype(np.float32),
                           f"{p}.attention.qkv.bias")
        context = g.op("Attention", [x, qkv, qkv_bias, index], domain=MS_DOMAIN, num_heads=HEADS)
        x = g.skip_layer_norm(context, x, f"{p}.attention.output.dense", f"{p}.attention.output.LayerNorm")
        inner = g.op("MatMul", [x, g.matrix(f"{p}.intermediate.dense")])
        gelu = g.op("BiasGelu", [inner, g.tensor(f"{p}.intermediate.dense.bias")], domain=MS_DOMAIN)
        x = g.skip_layer_norm(gelu, x, f"{p}.output.dense", f"{p}.output.LayerNorm")
    return x


def _pool(g: _Graph, x: str, mask: str) -> None:
    """Mean over the real tokens, L2-normalized, as the output ``embedding``."""
    from onnx import helper

    axis1 = g.const(np.array([1], np.int64))
    weighted = g.op("Mul", [x, g.op("Unsqueeze", [mask, g.const(np.array([2], np.int64))])])
    summed = g.op("ReduceSum", [weighted, axis1], keepdims=0)
    count = g.op("Max", [g.op("ReduceSum", [mask, axis1], keepdims=1), g.const(np.float32(1e-9))])
    pooled = g.op("Div", [summed, count])
    norm = g.op("Max", [g.op("ReduceL2", [pooled], axes=[1], keepdims=1), g.const(np.float32(1e-12))])
    g.nodes.append(helper.make_node("Div", [pooled, norm], ["embedding"]))


def build_graph(weights: dict[str, Any], *, fused: bool = False) -> Any:
    """The float32 ``onnx.ModelProto`` of the model whose tensors are
    ``weights``: the plain graph, or with ``fused`` onnxruntime's fused operators."""
    from onnx import TensorProto, helper

    g = _Graph(weights)
    ids, mask = "input_ids", "attention_mask"
    x = _embeddings(g, ids)
    x = (_fused_layers if fused else _plain_layers)(g, x, mask)
    _pool(g, x, mask)
    graph = helper.make_graph(
        g.nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "length"]),
         helper.make_tensor_value_info(mask, TensorProto.FLOAT, ["batch", "length"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", DIMENSIONS])],
        g.inits,
    )
    opsets = [helper.make_opsetid("", OPSET)] + ([helper.make_opsetid(MS_DOMAIN, 1)] if fused else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="ctxgraph")
    model.ir_version = 8
    return model


def float_matmuls(model: Any) -> list[str]:
    """The MatMul nodes the int8 variant keeps in float32: the attention
    products (both sides are activations) and the two output projections of
    each layer (quantizing them costs the most agreement: the cosine with the
    float32 vectors, min over the reference and eval texts, 0.980 -> 0.991)."""
    weights = {i.name for i in model.graph.initializer}
    keep = []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        constant = [i for i in node.input if i in weights]
        if not constant or constant[0].split("_")[0].endswith("output.dense.weight"):
            keep.append(node.name)
    return keep


def data_file(target: Path) -> Path:
    """Where the weights of the model file ``target`` are (beside it)."""
    return target.with_name(target.name + ".data")


def build(weights_path: Path, target: Path, *, quantize: bool = True, fused: bool = False) -> Path:
    """Write the model at ``target`` (the plain graph, its weights int8 with
    ``quantize``, else float32; the fused graph with ``fused``), its weights
    in :func:`data_file` beside it (ONNX external data:
    onnxruntime maps that file instead of copying 90 MB out of the model's
    protobuf, which took a session 50 ms of CPU instead of 140-170 on the
    development machine). Atomically: the weights are renamed into place
    first, then the model file that names them, so a model file seen is
    complete; a concurrent builder's identical files replace them whole."""
    import onnx
    from safetensors.numpy import load_file

    if quantize and fused:
        raise ValueError("the fused graph is not quantized")
    model = build_graph(load_file(str(weights_path)), fused=fused)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        plain = Path(tmp) / "model.onnx"
        onnx.save(model, str(plain))
        out = plain
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            out = Path(tmp) / "model.int8.onnx"
            logging.disable(logging.WARNING)  # its advice to pre-process the graph (shapes) is for developers
            try:
                quantize_dynamic(str(plain), str(out), weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"],
                                 per_channel=True, nodes_to_exclude=float_matmuls(model))
            finally:
                logging.disable(logging.NOTSET)
        final = Path(tmp) / "final.onnx"
        onnx.save_model(onnx.load(str(out)), str(final), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=data_file(target).name, size_threshold=1024)
        shutil.copymode(final, Path(tmp) / data_file(target).name)  # (onnx writes it owner-only)
        os.replace(Path(tmp) / data_file(target).name, data_file(target))
        os.replace(final, target)
    return target
