"""Sentence vectors: their shape (shared by the stores' vector indexes and the embedder) and input limits."""

from __future__ import annotations

#: all-MiniLM-L6-v2 gives 384 floats (unit length).
DIMENSIONS = 384
#: The model's input limit in word pieces (longer texts are cut, as sentence-transformers does).
MAX_PIECES = 256
#: Word pieces of a query's (a task's) text embedded at context time, for the
#: history's neighbours and the associative memory alike (one embedding per
#: context): against 64, memory recall@5 click 0.910 -> 0.911 and werkzeug
#: 0.755 -> 0.759; against 256, the same figures at half the cost on long texts.
QUERY_PIECES = 128
#: Decimals kept of a cosine similarity before ordering (both stores and the
#: replay round alike, so float32 numpy and Neo4j's indexes order the same).
COSINE_DECIMALS = 6
