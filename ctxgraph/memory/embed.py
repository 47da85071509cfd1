"""Sentence embeddings with all-MiniLM-L6-v2: the runtime a process uses
(:func:`shared_embedder`: onnxruntime, :mod:`.embed_onnx`, or numpy), the
numpy forward pass, and a cache of vectors by text. No torch.

The model's files and what the runtimes share are in :mod:`.model`. The
numpy forward pass is the model's own: BERT with 6 layers, 12 heads, hidden
size 384, exact (erf) GELU, mean pooling over the real tokens, then L2
normalisation — what sentence-transformers computes with this model, to
float32 rounding (``tests/unit/test_embed.py`` holds reference vectors).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ctxgraph.core.vectors import DIMENSIONS, MAX_PIECES, QUERY_PIECES
from ctxgraph.files import atomic_write
from ctxgraph.memory.model import (
    BATCH,
    MODEL_INSTALL,
    MODEL_PACKAGE,
    EmbeddingUnavailableError,
    Vectors,
    encode,
    index_threads,
    model_dir,
    run_batches,
    threads,
)

log = logging.getLogger(__name__)

LAYERS = 6
HEADS = 12
EPS = 1e-12
Vector = npt.NDArray[np.float32]


_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
         0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erf(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """erf with fractional error under 1.2e-7 (the Chebyshev fit of erfc in
    Numerical Recipes, section 6.2), vectorised in float32."""
    z = np.abs(x)
    t = np.float32(1.0) / (np.float32(1.0) + np.float32(0.5) * z)
    poly = np.full_like(t, np.float32(_ERFC[-1]))
    for c in reversed(_ERFC[1:-1]):
        poly *= t
        poly += np.float32(c)
    poly *= t
    poly += np.float32(_ERFC[0])
    poly -= z * z
    erfc = t * np.exp(poly)
    return np.asarray(np.copysign(np.float32(1.0) - erfc, x), dtype=np.float32)


def _gelu(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return np.asarray(0.5 * x * (1.0 + _erf(x / np.float32(math.sqrt(2.0)))), dtype=np.float32)


def _layer_norm(x: npt.NDArray[np.float32], weight: Vector, bias: Vector) -> npt.NDArray[np.float32]:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return np.asarray((x - mean) / np.sqrt(var + EPS) * weight + bias, dtype=np.float32)


class Embedder:
    """all-MiniLM-L6-v2 sentence vectors (384 floats, unit length)."""

    def __init__(self, path: Path | None = None) -> None:
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - both are dependencies
            raise EmbeddingUnavailableError(f"embedding runtime missing: {exc}") from exc
        where = path or model_dir()
        self.tokenizer = Tokenizer.from_file(str(where / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_PIECES)
        self.tokenizer.no_padding()
        self.w: dict[str, Any] = load_file(str(where / "model.safetensors"))
        # Linear layers as (in, out) matrices once, so each call is x @ W + b.
        for key in [k for k in self.w if k.endswith(".weight") and self.w[k].ndim == 2 and "embeddings" not in k]:
            self.w[key] = np.ascontiguousarray(self.w[key].T)

    def _linear(self, x: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
        return np.asarray(x @ self.w[f"{name}.weight"] + self.w[f"{name}.bias"], dtype=np.float32)

    def _forward(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        w = self.w
        batch, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:length][None, :, :]
             + w["embeddings.token_type_embeddings.weight"][0][None, None, :])
        x = _layer_norm(x.astype(np.float32), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        head = DIMENSIONS // HEADS
        bias = ((1.0 - mask) * np.float32(np.finfo(np.float32).min))[:, None, None, :].astype(np.float32)
        scale = np.float32(1.0 / math.sqrt(head))
        for n in range(LAYERS):
            p = f"encoder.layer.{n}"

            def heads(t: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
                return t.reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)

            q = heads(self._linear(x, f"{p}.attention.self.query"))
            k = heads(self._linear(x, f"{p}.attention.self.key"))
            v = heads(self._linear(x, f"{p}.attention.self.value"))
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores -= scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, DIMENSIONS)
            x = _layer_norm(self._linear(context, f"{p}.attention.output.dense") + x,
                            w[f"{p}.attention.output.LayerNorm.weight"], w[f"{p}.attention.output.LayerNorm.bias"])
            inner = _gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = _layer_norm(self._linear(inner, f"{p}.output.dense") + x,
                            w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"])
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)

    #: The runtime's name (``CTXGRAPH_EMBEDDING_RUNTIME``), kept in cached vectors' keys.
    runtime = "numpy"

    def embed(self, texts: Sequence[str], max_pieces: int = MAX_PIECES) -> npt.NDArray[np.float32]:
        """One unit vector per text, shape ``(len(texts), 384)``; each text
        truncated to ``max_pieces`` word pieces (the cost grows with them: a
        query cut to 64 embeds in about a quarter of the time of 256). BLAS
        runs on at most :func:`threads` threads meanwhile."""
        with _blas_threads(threads()):
            return run_batches(self.tokenizer, texts, max_pieces, self._forward)

    def embed_bulk(self, texts: Sequence[str], max_pieces: int = MAX_PIECES) -> npt.NDArray[np.float32]:
        """:meth:`embed` with BLAS on :func:`index_threads` threads (an index run's chunks)."""
        with _blas_threads(index_threads()):
            return run_batches(self.tokenizer, texts, max_pieces, self._forward)


def _blas_threads(count: int) -> Any:
    """A context bounding numpy's BLAS to ``count`` threads (a no-op
    without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency
        return contextlib.nullcontext()
    return threadpool_limits(limits=count, user_api="blas")


#: The runtimes ``CTXGRAPH_EMBEDDING_RUNTIME`` may name; the first is the default.
RUNTIMES = ("onnx", "onnx-int8", "numpy")


@functools.cache
def shared_embedder() -> Vectors:
    """One model per process, of the runtime ``CTXGRAPH_EMBEDDING_RUNTIME``
    names (default: the first of :data:`RUNTIMES`). The default falls back to
    numpy, with a log line, when onnxruntime cannot run; a runtime named
    explicitly that cannot run raises :class:`EmbeddingUnavailableError`."""
    named = os.environ.get("CTXGRAPH_EMBEDDING_RUNTIME", "").strip()
    if named and named not in RUNTIMES:
        raise EmbeddingUnavailableError(f"CTXGRAPH_EMBEDDING_RUNTIME={named!r}: one of {', '.join(RUNTIMES)}")
    runtime = named or RUNTIMES[0]
    if runtime == "numpy":
        return Embedder()
    from ctxgraph.memory.embed_onnx import load

    try:
        embedder: Vectors = load(runtime)
        return embedder
    except EmbeddingUnavailableError as exc:
        if named:
            raise
        model_dir()  # the model itself missing is the error to report, not the runtime
        log.info("embedding with numpy: %s", exc)
        return Embedder()


class CachedEmbedder:
    """An embedder that keeps every vector it made in a file, by the sha256 of
    the text, so that the same text is never embedded twice (the evaluation
    indexes the same release source into a fresh store on every run)."""

    def __init__(self, path: Path, base: Vectors | None = None) -> None:
        self.path = path
        self._base = base
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._dirty = False
        if path.exists():
            try:
                with np.load(path) as data:
                    self._vectors = {k: data[k] for k in data.files}
            except (OSError, ValueError):
                self._vectors = {}  # a damaged cache is rebuilt

    def embed(self, texts: Sequence[str], max_pieces: int = MAX_PIECES) -> npt.NDArray[np.float32]:
        return self._embed(texts, max_pieces, bulk=False)

    def embed_bulk(self, texts: Sequence[str], max_pieces: int = MAX_PIECES) -> npt.NDArray[np.float32]:
        """:meth:`embed`, the missing vectors made by the base's ``embed_bulk`` when it has one."""
        return self._embed(texts, max_pieces, bulk=True)

    def _embed(self, texts: Sequence[str], max_pieces: int, *, bulk: bool) -> npt.NDArray[np.float32]:
        base = self._base or shared_embedder()
        # The numpy runtime's keys are the text's hash alone (as before the
        # other runtimes existed); another runtime's vectors are kept apart.
        runtime = getattr(base, "runtime", "numpy")
        prefix = "" if runtime == "numpy" else f"{runtime}:"
        keys = [hashlib.sha256(f"{prefix}{max_pieces}:{t}".encode()).hexdigest() if max_pieces != MAX_PIECES
                else hashlib.sha256(f"{prefix}{t}".encode()).hexdigest() for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self._vectors]
        if missing:
            run = getattr(base, "embed_bulk", base.embed) if bulk else base.embed
            made = run([texts[i] for i in missing], max_pieces)
            for row, i in enumerate(missing):
                self._vectors[keys[i]] = made[row]
            self._dirty = True
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for i, k in enumerate(keys):
            out[i] = self._vectors[k]
        return out

    def save(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Two processes saving one cache at once each replace it whole.
        with atomic_write(self.path) as out:
            np.savez(out, **self._vectors)  # type: ignore[arg-type]
        self._dirty = False


__all__ = [
    "BATCH", "MAX_PIECES", "MODEL_INSTALL", "MODEL_PACKAGE", "QUERY_PIECES", "RUNTIMES", "CachedEmbedder",
    "Embedder", "EmbeddingUnavailableError", "Vectors", "encode", "index_threads", "model_dir", "run_batches",
    "shared_embedder", "threads",
]
