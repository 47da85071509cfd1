"""A shortlist of the vectors nearest a query, from one bit per dimension.

An exact cosine scan reads every stored float: at 165,810 task vectors (the
1M-node benchmark graph) that is 255 MB a query, ~25 ms on one core. Kept as
signs of their difference from the mean (48 bytes a vector, 8 MB in all),
the vectors are compared with the query's signs by Hamming distance (XOR and a
population count, numpy's ``bitwise_count``), and the few thousand nearest by
that measure are then scored exactly. The answer is the exact scan's whenever
its best vectors are on the shortlist; on the benchmark graph's vectors (the
20 query tasks and 200 perturbed task vectors) 99.6 % of the exact ten
nearest were, at ~4 ms a query instead of ~25.

Below :data:`EXACT_UP_TO` vectors the exact scan is as fast and is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Stores of up to this many vectors are scanned exactly (~3 ms at this size).
EXACT_UP_TO = 20_000
#: Vectors scored exactly a query: this many, or the share below of them if larger.
SHORTLIST = 4_000
SHORTLIST_SHARE = 0.025


class SignBits:
    """The signs of unit vectors' differences from their mean, packed: one
    contiguous row of 64-bit words per word position (column-major, so that
    each XOR and count runs over one long array)."""

    def __init__(self, matrix: npt.NDArray[np.float32]) -> None:
        import numpy as np

        self.mean = matrix.mean(axis=0, dtype=np.float64).astype(np.float32)
        packed = np.packbits(matrix > self.mean, axis=1)  # (n, dims / 8) bytes
        width = -packed.shape[1] % 8  # pad each row to whole 64-bit words
        if width:
            packed = np.pad(packed, ((0, 0), (0, width)))
        self.words = np.ascontiguousarray(packed.view(np.uint64).T)  # (words, n)

    def __len__(self) -> int:
        return int(self.words.shape[1])

    def shortlist(self, query: npt.NDArray[np.float32], size: int) -> npt.NDArray[np.intp]:
        """The rows, ascending, of the ``size`` vectors (or all, if no more) whose
        signs differ least from the query's, with every row as near as the
        farthest of them: a distance cut, so no tie is broken arbitrarily."""
        import numpy as np

        if size >= len(self):
            return np.arange(len(self))
        packed = np.packbits(query > self.mean)
        width = -len(packed) % 8
        mine = np.pad(packed, (0, width)).view(np.uint64) if width else packed.view(np.uint64)
        distance = np.bitwise_count(self.words[0] ^ mine[0]).astype(np.uint16)  # at most 64 a word
        for row, word in zip(self.words[1:], mine[1:], strict=True):
            distance += np.bitwise_count(row ^ word)
        # the smallest distance with `size` rows within it (a count per distance: faster than a partition)
        within = np.cumsum(np.bincount(distance, minlength=64 * len(self.words) + 1))
        cut = int(np.searchsorted(within, size))
        return np.flatnonzero(distance <= cut)


def shortlist_size(count: int) -> int:
    """How many of ``count`` vectors a query scores exactly."""
    return max(SHORTLIST, int(count * SHORTLIST_SHARE))


__all__ = ["EXACT_UP_TO", "SHORTLIST", "SignBits", "shortlist_size"]
