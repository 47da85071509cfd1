"""The pure floor: what graph/, compute/ and memory/ all need and nothing above
it — the pydantic models (``core.models``), the token estimator, text-ranking
arithmetic (BM25 evidence, tag rarity), path moves, vector dimensions and the
Neo4j URI schemes. Imports nothing of ctxgraph but itself, ``errors`` and ``signals``
(``tests/unit/test_layers.py`` checks it)."""
