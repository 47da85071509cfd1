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
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ctxgraph.core.vectors import MAX_PIECES
from ctxgraph.files import cache_root
from ctxgraph.memory.model import (
    BATCH,
    BATCH_PIECES,
    EmbeddingUnavailableError,
    encode,
    index_threads,
    model_dir,
    run_batches,
    run_encoded,
    threads,
    threads_named,
)

log = logging.getLogger(__name__)

#: Bumped when the built graph or its files change, so older cached files are
#: not used (2: the weights in a ``.data`` file beside the model file).
BUILD_VERSION = 2
VARIANTS = ("onnx", "onnx-int8")
#: The bulk path measures its other thread count again every this many calls.
RETRY_CALLS = 8


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

        log.info("building the %s model of all-MiniLM-L6-v2 once, into %s (a few seconds)", variant, target)
        try:
            build(weights, target, quantize=variant == "onnx-int8")
        except ImportError as exc:
            raise EmbeddingUnavailableError(f"building the ONNX model needs the onnx package: {exc}") from exc
    return target


class OnnxEmbedder:
    """all-MiniLM-L6-v2 sentence vectors (384 floats, unit length) by onnxruntime:
    a context's on :func:`~ctxgraph.memory.model.threads` threads, an index
    run's (:meth:`embed_bulk`) as :func:`~ctxgraph.memory.model.index_threads`
    batches at a time on a one-thread session."""

    def __init__(self, variant: str = "onnx", path: Path | None = None, model: Path | None = None) -> None:
        if variant not in VARIANTS:
            raise EmbeddingUnavailableError(f"unknown ONNX variant {variant!r}; one of {', '.join(VARIANTS)}")
        try:
            import onnxruntime  # noqa: F401  (present: the sessions import it as they are made)
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingUnavailableError(f"embedding runtime missing: {exc}") from exc
        where = path or model_dir()
        self.runtime = variant
        self.tokenizer = Tokenizer.from_file(str(where / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_PIECES)
        self.tokenizer.no_padding()
        # ``model``: a built file of ``variant`` to run instead of the cached one (benchmarks/first_index.py)
        self._model = str(model or model_file(variant, where))
        self._sessions: dict[int, Any] = {}
        self._lock = threading.Lock()
        #: Seconds per word piece of the bulk path, by thread count (a moving average).
        self._cost: dict[int, float] = {}
        self._bulk_calls = 0
        self.session = self._session(threads())

    def _session(self, count: int) -> Any:
        """The session running on ``count`` intra-op threads, made on first use
        (an index run's, besides the contexts' one-thread session)."""
        with self._lock:
            if count not in self._sessions:
                import onnxruntime as ort

                options = ort.SessionOptions()
                options.intra_op_num_threads = count
                options.inter_op_num_threads = 1
                options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL  # (the default)
                options.log_severity_level = 3  # errors only: its notes on the quantized graph are for developers
                # Threads that wait for work sleep instead of spinning: on a busy machine a
                # spinning thread takes the core another process (or a context) needs. The
                # bulk session too: spinning cost it 26% more CPU per chunk and gained no
                # speed (benchmarks/first_index.py, docs/embedding.md).
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._sessions[count] = ort.InferenceSession(self._model, options, providers=["CPUExecutionProvider"])
            return self._sessions[count]

    def _forward_on(self, session: Any) -> Callable[[npt.NDArray[np.int64], npt.NDArray[np.float32]],
                                                  npt.NDArray[np.float32]]:
        def forward(ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
            out = session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})[0]
            return np.asarray(out, dtype=np.float32)

        return forward

    def _forward(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return self._forward_on(self.session)(ids, mask)

    def _run(self, session: Any, texts: Sequence[str], max_pieces: int) -> npt.NDArray[np.float32]:
        # int8: one text a run, since its activations are quantized with one
        # scale per run, and a batch's other texts (and padding) would move it.
        # float32: batches of at most BATCH_PIECES word pieces (faster than a
        # fixed count at every length; the vectors differ by float rounding).
        forward = self._forward_on(session)
        if self.runtime == "onnx-int8":
            return run_batches(self.tokenizer, texts, max_pieces, forward, batch=1)
        return run_batches(self.tokenizer, texts, max_pieces, forward, batch=BATCH, pieces=BATCH_PIECES)

    def embed(self, texts: Sequence[str], max_pieces: int = MAX_PIECES) -> npt.NDArray[np.float32]:
        """One unit vector per text, shape ``(len(texts), 384)``; each text cut
        to ``max_pieces`` word pieces."""
        return self._run(self.session, texts, max_pieces)

    def embed_bulk(self, texts: Sequence[str], max_pieces: int = MAX_PIECES) -> npt.NDArray[np.float32]:
        """:meth:`embed` for an index run's many chunks: the same vectors, to
        float rounding, :func:`~ctxgraph.memory.model.index_threads` batches
        at a time (each on one thread) or one at a time, whichever has been
        faster per word piece lately
        (each is tried again every :data:`RETRY_CALLS` calls: the machine's
        load changes); on the count ``CTXGRAPH_EMBEDDING_THREADS`` names when set."""
        if self.runtime == "onnx-int8" or not texts:
            return self.embed(texts, max_pieces)
        count = self._bulk_threads()
        forward = self._forward_on(self._session(1))  # (made before the clock starts)
        encoded = encode(self.tokenizer, texts, max_pieces)
        began = time.perf_counter()
        # ``count`` batches at a time, each on the one-thread session: 11% faster
        # than one batch at a time on a ``count``-thread session, and the same
        # CPU per chunk as one thread (benchmarks/first_index.py, docs/embedding.md).
        out = run_encoded(encoded, forward, BATCH, BATCH_PIECES, workers=count)
        per_piece = (time.perf_counter() - began) / max(1, sum(len(e) for e in encoded))
        with self._lock:
            last = self._cost.get(count)
            self._cost[count] = per_piece if last is None else 0.5 * last + 0.5 * per_piece
        return out

    def _bulk_threads(self) -> int:
        most = index_threads()
        if most == 1 or threads_named():
            return most
        with self._lock:
            self._bulk_calls += 1
            for count in (most, 1):
                if count not in self._cost:
                    return count
            best = min(self._cost, key=lambda n: self._cost[n])
            if self._bulk_calls % RETRY_CALLS == 0:  # the other, measured again
                return most if best == 1 else 1
            return best


def load(variant: str) -> Any:
    """An :class:`OnnxEmbedder` of ``variant``; raises
    :class:`~ctxgraph.memory.embed.EmbeddingUnavailableError` when it cannot run."""
    try:
        return OnnxEmbedder(variant)
    except EmbeddingUnavailableError:
        raise
    except Exception as exc:  # a failed build or session: the caller may fall back to numpy
        raise EmbeddingUnavailableError(f"the {variant} runtime cannot run: {exc}") from exc
