"""core.shortlist: the sign-bit shortlist keeps the exact nearest vectors."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ctxgraph.core.shortlist import SignBits, shortlist_size


def _clustered(n: int, dims: int, clusters: int, seed: int) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dims))
    rows = centres[rng.integers(0, clusters, n)] + rng.normal(scale=0.8, size=(n, dims))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def _top(matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32], rows: npt.NDArray[np.intp],
         k: int = 10) -> list[int]:
    sims = matrix[rows] @ query
    return sorted(int(rows[i]) for i in np.argsort(-sims, kind="stable")[:k])


def test_the_exact_nearest_are_on_the_shortlist() -> None:
    matrix = _clustered(25_000, 384, 300, seed=3)
    signs = SignBits(matrix)
    rng = np.random.default_rng(4)
    same = 0
    for row in rng.choice(len(matrix), 40, replace=False):
        query = matrix[row] + rng.normal(scale=0.02, size=384).astype(np.float32)
        query /= np.linalg.norm(query)
        short = signs.shortlist(query, shortlist_size(len(matrix)))
        assert len(short) >= shortlist_size(len(matrix)) and np.all(np.diff(short) > 0)
        same += _top(matrix, query, short) == _top(matrix, query, np.arange(len(matrix)))
    assert same >= 38, same


def test_the_cut_keeps_every_row_as_near_as_the_farthest() -> None:
    matrix = _clustered(3_000, 100, 20, seed=5)  # 100 dimensions: a partly filled last word
    signs = SignBits(matrix)
    query = matrix[7]
    short = signs.shortlist(query, 50)
    bits = np.packbits(matrix > signs.mean, axis=1)
    distance = np.unpackbits(bits ^ np.packbits(query > signs.mean), axis=1).sum(axis=1)
    assert 7 in short and len(short) >= 50
    assert set(short) == set(np.flatnonzero(distance <= distance[short].max()))
    assert list(signs.shortlist(query, 3_000)) == list(range(3_000))  # no fewer rows than asked: all
