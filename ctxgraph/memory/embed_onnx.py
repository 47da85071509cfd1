"""all-MiniLM-L6-v2 run by onnxruntime, from an ONNX file built once from the
installed model's weights (:mod:`ctxgraph.memory.onnx_build`) and kept in the
user's cache folder (``CTXGRAPH_MODEL_CACHE``, else ``$XDG_CACHE_HOME/ctxgraph``,
else ``~/.cache/ctxgraph``). Building takes a few seconds, once per model
file and variant; the file's name carries a fingerprint of the weights, so a
new model version builds its own.

Two variants: ``onnx`` (float32: the numpy pass's vectors to float32
rounding) and ``onnx-int8`` (the encoder's projections dynamically quantized
to int8, per output channel; the attention products and the two output
projections stay float32). See ``docs/embedding.md`` for what each costs.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ctxgraph.core.vectors import MAX_PIECES
from ctxgraph.files import cache_root
from ctxgraph.memory.model import BATCH, BATCH_PIECES, EmbeddingUnavailableError, model_dir, run_batches, threads

log = logging.getLogger(__name__)

#: Bumped when the built graph or its files change, so older cached files are
#: not used (2: the weights in a ``.data`` file beside the model file).
BUILD_VERSION = 2
VARIANTS = ("onnx", "onnx-int8")


def fingerprint(weights: Path) -> str:
    """A short id of a weights file: its size and its first and last MiB
    (reading all 90 MB would cost more than loading the built model)."""
    digest = hashlib.sha256(f"{BUILD_VERSION}:{weights.stat().st_size}:".encode())
    with weights.open("rb") as fh:
        digest.update(fh.read(1 << 20))
        fh.seek(max(0, weights.stat().st_size - (1 << 20)))
        digest.update(fh.read(1 << 20))
    return digest.hexdigest()[:12]


def model_file(variant: str, where: Path | None = None) -> Path:
    """The built model of ``variant`` for the installed weights, built first if
    it is not in the cache yet (with a message: it takes a few seconds)."""
    source = where or model_dir()
    weights = source / "model.safetensors"
    target = cache_root() / "models" / f"all-MiniLM-L6-v2.{variant}.{fingerprint(weights)}.onnx"
    if not (target.is_file() and target.with_name(target.name + ".data").is_file()):
        from ctxgraph.memory.onnx_build import build

        log.warning("building the %s model of all-MiniLM-L6-v2 once, into %s (a few seconds)", variant, target)
        try:
            build(weights, target, quantize=variant == "onnx-int8")
        except ImportError as exc:
            raise EmbeddingUnavailableError(f"building the ONNX model needs the onnx package: {exc}") from exc
    return target


class OnnxEmbedder:
    """all-MiniLM-L6-v2 sentence vectors (384 floats, unit length) by onnxruntime,
    on at most :func:`~ctxgraph.memory.embed.threads` threads."""

    def __init__(self, variant: str = "onnx", path: Path | None = None) -> None:
        if variant not in VARIANTS:
            raise EmbeddingUnavailableError(f"unknown ONNX variant {variant!r}; one of {', '.join(VARIANTS)}")
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingUnavailableError(f"embedding runtime missing: {exc}") from exc
        where = path or model_dir()
        self.runtime = variant
        self.tokenizer = Tokenizer.from_file(str(where / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_PIECES)
        self.tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads()
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # errors only: its notes on the quantized graph are for developers
        self.session = ort.InferenceSession(str(model_file(variant, where)), options,
                                            providers=["CPUExecutionProvider"])

    def _forward(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        out = self.session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})[0]
        return np.asarray(out, dtype=np.float32)

    def embed(self, texts: Sequence[str], max_pieces: int = MAX_PIECES) -> npt.NDArray[np.float32]:
        """One unit vector per text, shape ``(len(texts), 384)``; each text cut
        to ``max_pieces`` word pieces."""
        # int8: one text a run, since its activations are quantized with one
        # scale per run, and a batch's other texts (and padding) would move it.
        # float32: batches of at most BATCH_PIECES word pieces (faster than a
        # fixed count at every length; the vectors differ by float rounding).
        if self.runtime == "onnx-int8":
            return run_batches(self.tokenizer, texts, max_pieces, self._forward, batch=1)
        return run_batches(self.tokenizer, texts, max_pieces, self._forward, batch=BATCH, pieces=BATCH_PIECES)


def load(variant: str) -> Any:
    """An :class:`OnnxEmbedder` of ``variant``; raises
    :class:`~ctxgraph.memory.embed.EmbeddingUnavailableError` when it cannot run."""
    try:
        return OnnxEmbedder(variant)
    except EmbeddingUnavailableError:
        raise
    except Exception as exc:  # a failed build or session: the caller may fall back to numpy
        raise EmbeddingUnavailableError(f"the {variant} runtime cannot run: {exc}") from exc
