"""``index_project`` under a time limit, with an embedder that takes a fixed
time per chunk (a stand-in for a busy machine's model): the run stops between
calls sized to end in time, keeps the files it finished, drops a file it had
half embedded, and the next run finishes the rest."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ctxgraph.graph.local import LocalStore
from ctxgraph.memory import index as index_module
from ctxgraph.memory.index import IndexProgress, index_project

SECONDS_PER_CHUNK = 0.04


class SlowEmbedder:
    """Unit vectors from each text's hash, after SECONDS_PER_CHUNK a text; records each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, int]] = []  # (start, texts)

    def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        self.calls.append((time.monotonic(), len(texts)))
        time.sleep(SECONDS_PER_CHUNK * len(texts))
        rng = np.random.default_rng([hash(t) % 2**32 for t in texts] or [0])
        out = rng.standard_normal((len(texts), 384)).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_a_time_limited_run_keeps_finished_files_and_the_next_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    for n in range(40):
        (root / f"f{n:02}.md").write_text(f"# File {n}\n\nText {n}.\n", encoding="utf-8")
    seen: list[IndexProgress] = []
    embedder = SlowEmbedder()
    with LocalStore.open(tmp_path / "graph.db") as store:
        began = time.monotonic()
        first = index_project(store, root, embedder=embedder, progress=seen.append, time_limit=1.0)
        assert not first.complete and not first.indexed_at
        assert 0 < first.indexed < 40 and first.as_dict()["files_left"] == 40 - first.indexed
        # Calls after the first are sized to the measured speed (about CALL_SECONDS each), and none
        # after the first (which every run makes) starts past the limit.
        sizes = [n for _, n in embedder.calls]
        assert sizes[0] == index_module.FIRST_EMBED_BATCH
        assert all(1 <= n <= index_module.CALL_SECONDS / SECONDS_PER_CHUNK + 1 for n in sizes)
        assert all(start < began + 1.0 for start, _ in embedder.calls[1:])
        # What was finished is stored: the files, and progress that counted them. (40 new files:
        # every one's chunks were written first for full text, with an empty sha256 until embedded.)
        hashes = store.memory_state("p").file_hashes
        assert len(hashes) == 40 and sum(1 for sha in hashes.values() if sha) == first.indexed
        assert [p.phase for p in seen[:3]] == ["scanning", "full text", "indexing"]
        assert seen[-1].files_written == first.indexed and seen[-1].files_total == 40
        done = [p.files_done for p in seen if p.phase == "indexing"]
        assert done == sorted(done)

        second = index_project(store, root, embedder=embedder)
        assert second.complete and second.unchanged == first.indexed and second.indexed == 40 - first.indexed
        assert len(store.memory_state("p").file_hashes) == 40


def test_a_file_half_embedded_at_the_limit_is_left_whole_for_the_next_run(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nShort.\n", encoding="utf-8")
    # Many sections, each its own chunk: more than one call's worth.
    (root / "b.md").write_text("".join(f"# Part {n}\n\n{'word ' * 400}\n\n" for n in range(60)), encoding="utf-8")
    embedder = SlowEmbedder()
    with LocalStore.open(tmp_path / "graph.db") as store:
        first = index_project(store, root, embedder=embedder, time_limit=1.0)
        assert not first.complete and first.indexed == 1  # a.md; b.md's embedded chunks were dropped
        assert set(store.memory_state("p").file_hashes) == {"a.md"}
        second = index_project(store, root, embedder=embedder)
        assert second.complete and second.indexed == 1 and second.chunks > 30
