"""Odd file names in the associative memory, on both stores (issue 40): a name
that is not UTF-8, one with a backslash, one starting with a space. Each is kept
under one key that no store changes (a stored path's normal form turns a
backslash into a slash and strips the ends), so a second run finds every file
unchanged, and a context's file check finds the file from its key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxgraph.core.models.files import clean_path
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.index import index_project
from ctxgraph.memory.recall import check

ODD = {b"caf\xe9.py": "caf%E9.py", b"back\\slash.py": "back%5Cslash.py", b" leading.md": "%20leading.md"}


def tree(root: Path) -> Path:
    root.mkdir()
    (root / "plain.py").write_text("def plain():\n    return 0\n", encoding="utf-8")
    for name in ODD:
        try:
            with open(os.path.join(os.fsencode(root), name), "w", encoding="utf-8") as handle:
                handle.write(f"def odd_{len(name)}():\n    return {len(name)}\n")
        except OSError as exc:
            pytest.skip(f"no such name here: {exc}")
    then = 1_700_000_000
    for entry in os.scandir(os.fsencode(root)):
        os.utime(entry.path, (then, then))  # out of the racy window: the second run trusts the stat
    return root


def test_odd_names_are_indexed_once_under_keys_no_store_changes(store: KnowledgeStore, tmp_path: Path) -> None:
    root = tree(tmp_path / "odd")
    first = index_project(store, root, embeddings=False)
    assert first.complete and not first.skipped and sorted(first.paths["added"]) == sorted([*ODD.values(),
                                                                                          "plain.py"])
    assert all(clean_path(key) == key for key in ODD.values())
    state = store.memory_state("odd")
    assert sorted(state.file_hashes) == sorted([*ODD.values(), "plain.py"])
    second = index_project(store, root, embeddings=False)
    assert second.indexed == 0 and second.read == 0 and second.unchanged == 4

    _, by_text = store.search_memory("odd", None, ["odd"], 5)
    hits = [h for h in by_text if h.chunk.path in ODD.values()]
    assert hits and all(check(root, h) is h for h in hits)


def test_a_chunk_stored_under_older_rules_is_shown_redacted(store: KnowledgeStore, tmp_path: Path) -> None:
    """An index made before the secret filter (or an old export imported): its
    chunks are redacted at context time, and a hit on a secret file is dropped."""
    from ctxgraph.core.models import MemoryChunk, MemoryProject
    from ctxgraph.memory.recall import recall
    from ctxgraph.memory.text import search_text

    value = "sk-live-imported-5e6f7a8b9c"
    old = [MemoryChunk(path=path, start_line=1, end_line=2, text=text, text_hash=path, token_estimate=9,
                       file_sha256="0" * 64, search_text=search_text(path, text))
           for path, text in (("config/app.yaml", f"billing:\n  api_key: {value}"),
                              (".env", f"BILLING_API_KEY={value}"))]
    project = MemoryProject(id="old", root=str(tmp_path / "elsewhere"), indexed_at="2099-01-01T00:00:00+00:00",
                            embeddings=False, files=2, files_indexed=2)
    store.write_memory(project, old, [])
    found, _ = recall(store, store.memory_projects(), "billing api key", ["billing", "api", "key"],
                      project="old", stale_hours=1e9)
    assert found is not None and found.by_text
    assert [h.chunk.text for h in found.by_text] == ["billing:\n  api_key: [redacted]"]  # .env: not shown
    root = tmp_path / "here"
    root.mkdir()
    (root / ".env").write_text(f"BILLING_API_KEY={value}\n", encoding="utf-8")
    _, by_text = store.search_memory("old", None, ["billing"], 5)
    assert check(root, next(h for h in by_text if h.chunk.path == ".env")) == "secret file (by name): .env"
