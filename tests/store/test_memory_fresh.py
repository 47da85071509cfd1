"""The memory's hits checked just in time against their files (docs/freshness.md,
"Memory snippets"), on both stores: a file with its indexed stat is not read,
a chunk moved by an edit elsewhere is shown where it is, a changed chunk shows
the lines in its place (marked, ranked after the others), a deleted file's
hits are gone. The lightweight index: full-text hits."""

from __future__ import annotations

import os
from pathlib import Path

from ctxgraph.compute.code_memory import fuse, passing
from ctxgraph.compute.config import ContextConfig
from ctxgraph.core.models import MemoryHit, MemoryRecall
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.index import index_project
from ctxgraph.memory.recall import recall
from ctxgraph.signals import terms

JWT = '"""JWT helpers."""\n\n\ndef verify_jwt(token):\n    return decode_jwt(token, KEY)\n'
PAST_NS = 1_700_000_000 * 10**9  # out of the index's racy window: the stat is kept


def hits(store: KnowledgeStore) -> tuple[list[MemoryHit], list[str]]:
    query = "verify the jwt token with decode_jwt"
    found, notes = recall(store, tuple(store.memory_projects()), query, terms(query), project=None,
                          stale_hours=24)
    assert found is not None
    return [h for h in found.by_text if h.chunk.path == "src/auth/jwt.py"], notes


def test_hits_follow_their_files_stat_first(store: KnowledgeStore, tmp_path: Path) -> None:
    root = tmp_path / "shop"
    (root / "src" / "auth").mkdir(parents=True)
    jwt = root / "src" / "auth" / "jwt.py"
    jwt.write_text(JWT, encoding="utf-8")
    (root / "src" / "app.py").write_text("def main():\n    return serve()\n", encoding="utf-8")
    for f in (jwt, root / "src" / "app.py"):
        os.utime(f, ns=(PAST_NS, PAST_NS))
    index_project(store, root, embeddings=False)
    [first], _ = hits(store)
    assert (first.chunk.start_line, first.chunk.end_line, first.changed) == (1, 5, False)
    assert first.chunk.file_mtime_ns == PAST_NS  # the stat the search returns (both stores)

    # The same stat, other content (a write that kept size and mtime): not read, shown as indexed.
    jwt.write_text(JWT.replace("KEY", "KYE"), encoding="utf-8")
    os.utime(jwt, ns=(PAST_NS, PAST_NS))
    [same], _ = hits(store)
    assert same == first

    # Lines added above: the chunk's text, where it is now; not marked.
    jwt.write_text("# Tokens.\n# Signed with HS256.\n" + JWT, encoding="utf-8")
    [moved], notes = hits(store)
    assert (moved.chunk.start_line, moved.chunk.end_line, moved.changed) == (3, 7, False)
    assert moved.chunk.text == first.chunk.text and moved.score == first.score
    assert any("1 chunks read again" in n for n in notes)

    # Its own lines edited: the lines in its place now, marked; ranked after a hit still as indexed.
    jwt.write_text("# Tokens.\n" + JWT.replace("(token)", "(token, leeway=30)"), encoding="utf-8")
    [changed], _ = hits(store)
    assert changed.changed and (changed.chunk.start_line, changed.chunk.end_line) == (2, 6)
    assert "def verify_jwt(token, leeway=30):" in changed.chunk.text
    other = changed.model_copy(update={"chunk": changed.chunk.model_copy(update={"path": "b.py"}),
                                       "changed": False, "rank": 2})
    config = ContextConfig(memory_min_bm25=0, memory_snippet_bm25=0)
    _, ranked = passing(MemoryRecall(project="shop", by_text=(changed, other)), config)
    assert [h.chunk.path for h in ranked] == ["b.py", "src/auth/jwt.py"]
    [snippet] = fuse([], MemoryRecall(project="shop", by_text=(changed,)), config).snippets
    assert snippet.text == "def verify_jwt(token, leeway=30):"
    assert snippet.stale == "⚠ file changed since it was indexed"

    # Gone: no hit.
    jwt.unlink()
    gone, notes = hits(store)
    assert gone == [] and any("missing" in n for n in notes)
