"""all-MiniLM-L6-v2 as an ONNX graph, built here from the model's own
``model.safetensors`` (no torch, no download), then dynamically quantized to
int8 by onnxruntime's ``quantize_dynamic``: the runtime :mod:`ctxgraph.memory.embed`
prefers when ``onnxruntime`` and ``onnx`` are installed.

The graph is the forward pass :class:`~ctxgraph.memory.embed.NumpyEmbedder`
runs, op for op: BERT embeddings and LayerNorm, six encoder layers (12
heads, exact erf GELU), mean pooling over the real tokens, L2 normalisation.
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


def build_graph(weights: dict[str, Any]) -> Any:
    """The float32 ``onnx.ModelProto`` of the model whose tensors are ``weights``."""
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits: list[Any] = []
    counter = [0]

    def name(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}_{counter[0]}"

    def const(array: Any, prefix: str = "c") -> str:
        n = name(prefix)
        inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def op(kind: str, inputs: list[str], **attrs: Any) -> str:
        out = name(kind.lower())
        nodes.append(helper.make_node(kind, inputs, [out], name=out, **attrs))
        return out

    def linear(x: str, prefix: str) -> str:
        w = const(np.ascontiguousarray(weights[f"{prefix}.weight"].T.astype(np.float32)), prefix + ".weight")
        b = const(weights[f"{prefix}.bias"].astype(np.float32), prefix + ".bias")
        return op("Add", [op("MatMul", [x, w]), b])

    def layer_norm(x: str, prefix: str) -> str:
        g = const(weights[f"{prefix}.weight"].astype(np.float32))
        b = const(weights[f"{prefix}.bias"].astype(np.float32))
        return op("LayerNormalization", [x, g, b], axis=-1, epsilon=EPS)

    head = DIMENSIONS // HEADS
    ids, mask = "input_ids", "attention_mask"
    length = op("Slice", [op("Shape", [ids]), const(np.array([1], np.int64)), const(np.array([2], np.int64))])
    positions = op("Slice", [const(weights["embeddings.position_embeddings.weight"].astype(np.float32)),
                             const(np.array([0], np.int64)), length, const(np.array([0], np.int64))])
    x = op("Gather", [const(weights["embeddings.word_embeddings.weight"].astype(np.float32)), ids])
    x = op("Add", [op("Add", [x, positions]),
                   const(weights["embeddings.token_type_embeddings.weight"][0].astype(np.float32))])
    x = layer_norm(x, "embeddings.LayerNorm")
    one = const(np.float32(1.0))
    bias = op("Mul", [op("Sub", [one, mask]), const(np.float32(np.finfo(np.float32).min))])
    bias = op("Unsqueeze", [bias, const(np.array([1, 2], np.int64))])
    split = const(np.array([0, 0, HEADS, head], np.int64))
    merge = const(np.array([0, 0, DIMENSIONS], np.int64))
    scale = const(np.float32(1.0 / math.sqrt(head)))
    for n in range(LAYERS):
        p = f"encoder.layer.{n}"
        q = op("Transpose", [op("Reshape", [linear(x, f"{p}.attention.self.query"), split])], perm=[0, 2, 1, 3])
        k = op("Transpose", [op("Reshape", [linear(x, f"{p}.attention.self.key"), split])], perm=[0, 2, 3, 1])
        v = op("Transpose", [op("Reshape", [linear(x, f"{p}.attention.self.value"), split])], perm=[0, 2, 1, 3])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), bias])
        probs = op("Softmax", [scores], axis=-1)
        context = op("Reshape", [op("Transpose", [op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge])
        attended = op("Add", [linear(context, f"{p}.attention.output.dense"), x])
        x = layer_norm(attended, f"{p}.attention.output.LayerNorm")
        inner = linear(x, f"{p}.intermediate.dense")
        erf = op("Erf", [op("Mul", [inner, const(np.float32(1.0 / math.sqrt(2.0)))])])
        gelu = op("Mul", [op("Mul", [inner, const(np.float32(0.5))]), op("Add", [erf, one])])
        x = layer_norm(op("Add", [linear(gelu, f"{p}.output.dense"), x]), f"{p}.output.LayerNorm")
    axis1 = const(np.array([1], np.int64))
    summed = op("ReduceSum", [op("Mul", [x, op("Unsqueeze", [mask, const(np.array([2], np.int64))])]), axis1],
                keepdims=0)
    count = op("Max", [op("ReduceSum", [mask, axis1], keepdims=1), const(np.float32(1e-9))])
    pooled = op("Div", [summed, count])
    norm = op("Max", [op("ReduceL2", [pooled], axes=[1], keepdims=1), const(np.float32(1e-12))])
    nodes.append(helper.make_node("Div", [pooled, norm], ["embedding"]))
    graph = helper.make_graph(
        nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "length"]),
         helper.make_tensor_value_info(mask, TensorProto.FLOAT, ["batch", "length"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", DIMENSIONS])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ctxgraph")
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


def build(weights_path: Path, target: Path, *, quantize: bool = True) -> Path:
    """Write the model at ``target`` (int8 weights unless ``quantize`` is
    False), its weights in :func:`data_file` beside it (ONNX external data:
    onnxruntime maps that file instead of copying 90 MB out of the model's
    protobuf, which took a session 50 ms of CPU instead of 140-170 on the
    development machine). Atomically: the weights are renamed into place
    first, then the model file that names them, so a model file seen is
    complete; a concurrent builder's identical files replace them whole."""
    import onnx
    from safetensors.numpy import load_file

    model = build_graph(load_file(str(weights_path)))
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
