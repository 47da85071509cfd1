"""Sentence vectors' shape, shared by the stores' vector indexes and the embedder."""

from __future__ import annotations

#: all-MiniLM-L6-v2 gives 384 floats (unit length).
DIMENSIONS = 384
