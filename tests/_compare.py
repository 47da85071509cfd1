"""Comparing what two stores answered when Lucene's statistics may lag.

Neo4j's full-text indexes keep counting a rewritten document's old version
until their segments merge (``ctxgraph/core/bm25.py``), so a file's text score
there may drift slightly from the embedded store's: contexts compare equal
but for their scores, which must agree within a tolerance."""

from __future__ import annotations

import math
from typing import Any


def close(a: Any, b: Any, *, rel: float = 0.1, path: str = "") -> None:
    """Assert ``a`` equals ``b`` exactly, floats within ``rel`` of each other."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), path
        assert math.isclose(a, b, rel_tol=rel, abs_tol=1e-6), f"{path}: {a} != {b}"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), path
        for key in a:
            close(a[key], b[key], rel=rel, path=f"{path}.{key}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            close(x, y, rel=rel, path=f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def same_context(a: Any, b: Any, what: str) -> None:
    """Two computed contexts say the same. Everything but the code references
    is equal; the code references are the same files but for at most one at
    the end of the list (a file whose score is near-equal to the last one's
    may take its place), in any order, their scores within 10 %."""
    rows_a = [line for line in a.markdown.splitlines() if line.startswith("| `")]
    rows_b = [line for line in b.markdown.splitlines() if line.startswith("| `")]
    rest_a = [line for line in a.markdown.splitlines() if not line.startswith("| `")]
    rest_b = [line for line in b.markdown.splitlines() if not line.startswith("| `")]
    assert len(rows_a) == len(rows_b) and len(set(rows_a) ^ set(rows_b)) <= 2, what
    da, db = a.model_dump(by_alias=True), b.model_dump(by_alias=True)
    refs_a = {r["file"]: r for r in da.pop("code_references")}
    refs_b = {r["file"]: r for r in db.pop("code_references")}
    assert len(refs_a) == len(refs_b) and len(refs_a.keys() ^ refs_b.keys()) <= 2, what
    for path in refs_a.keys() & refs_b.keys():
        close(refs_a[path], refs_b[path], path=f"{what}.{path}")
    for d in (da, db):
        d.pop("markdown")
        d.pop("explain", None)  # its rows follow the score order
        d.pop("tokens")  # a swapped file's row may be longer: the tokens used differ
        d.pop("_computed", None)
    close(da, db, path=what)
    different = {line for line in rest_a if line not in rest_b} | {line for line in rest_b if line not in rest_a}
    assert all("token" in line.lower() for line in different), (what, different)
