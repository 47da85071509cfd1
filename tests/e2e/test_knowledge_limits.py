"""`ctxgraph knowledge add` and `knowledge revise` hold knowledge to a handoff's
limits, run for real: each refusal is one line with exit code 2, and nothing is
written (the store is what it was, or, when there was none, not created)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgraph.core.limits import MAX_ITEMS, MAX_KNOWLEDGE_CHARS, MAX_PATH_BYTES, MAX_TEXT_CHARS, MAX_WORD_CHARS
from ctxgraph.service import ContextService

#: Over the knowledge text limit, under the 128 KiB the kernel allows one argument.
LONG_SUMMARY = "jwt " * 30_000


def run(*args: str | bytes, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=120)


def refused(*args: str | bytes, cwd: Path) -> str:
    proc = run(*args, cwd=cwd)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr[-2_000:])
    assert lines[0].startswith("ctxgraph: error: invalid knowledge") and len(lines[0]) < 400, lines[0][:400]
    assert proc.stdout == ""
    return lines[0]


def export(store: Path, to: Path) -> str:
    svc = ContextService.open(store, read_only=True)
    try:
        svc.export_to(to)
    finally:
        svc.close()
    return to.read_text(encoding="utf-8")


@pytest.fixture
def added(tmp_path: Path) -> tuple[Path, str]:
    """A store holding one decision, added by the CLI, and the decision's id."""
    path = tmp_path / "graph.db"
    proc = run("knowledge", "add", "decision", "Sign JWT with HS256", "--tag", "jwt", "--store", str(path),
               "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return path, str(json.loads(proc.stdout)["id"])


def test_add_refuses_what_a_handoff_refuses(added: tuple[Path, str], tmp_path: Path) -> None:
    store = added[0]
    before = export(store, tmp_path / "before.jsonl")
    tags = [arg for n in range(MAX_ITEMS + 1) for arg in ("--tag", f"t{n}")]
    cases: list[tuple[list[str | bytes], str]] = [
        (["pattern", LONG_SUMMARY], f"summary: text is 120,000 characters; at most {MAX_KNOWLEDGE_CHARS:,}"),
        (["pattern", "Wrap handlers with requireAuth", *tags], f"tags: {MAX_ITEMS + 1} given; at most {MAX_ITEMS}"),
        (["pattern", "Wrap handlers", "--tag", "t" * (MAX_WORD_CHARS + 1)],
         f"tags: tag 1 is 1,001 characters; at most {MAX_WORD_CHARS:,}"),
        (["pattern", "see " + "x" * (MAX_WORD_CHARS + 1)], "summary: a word longer than 1,000 characters"),
        (["decision", "Sign JWT with RS256", "--rationale", "r " * (MAX_TEXT_CHARS // 2 + 1)],
         f"rationale: text is {MAX_TEXT_CHARS + 2:,} characters; at most {MAX_TEXT_CHARS:,}"),
        (["pattern", "Wrap handlers", "--location", "src/" + "a" * MAX_PATH_BYTES],
         f"location: path is {MAX_PATH_BYTES + 4:,} bytes in UTF-8; at most {MAX_PATH_BYTES:,}"),
        (["pattern", "   "], "summary: empty"),
        (["pattern", b"caf\xe9 handlers"], "summary: not valid Unicode"),  # a Latin-1 terminal's bytes
    ]
    for args, reason in cases:
        line = refused("knowledge", "add", *args, "--store", str(store), cwd=tmp_path)
        assert line.startswith(f"ctxgraph: error: invalid knowledge: {reason}"), line
    assert export(store, tmp_path / "after.jsonl") == before


def test_revise_refuses_what_add_refuses(added: tuple[Path, str], tmp_path: Path) -> None:
    store, item_id = added
    before = export(store, tmp_path / "before.jsonl")
    for args, reason in (([LONG_SUMMARY], "summary: text is 120,000 characters"),
                         (["RS256", "--rationale", "r " * (MAX_TEXT_CHARS // 2 + 1)], "rationale: text is")):
        line = refused("knowledge", "revise", item_id, *args, "--store", str(store), cwd=tmp_path)
        assert line.startswith(f"ctxgraph: error: invalid knowledge: {reason}"), line
    proc = run("knowledge", "revise", "decision:" + "0" * 300, "RS256", "--store", str(store), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "ctxgraph: error: invalid knowledge id: 309 characters; at most 200"
    assert export(store, tmp_path / "after.jsonl") == before


def test_a_refusal_creates_no_store(tmp_path: Path) -> None:
    refused("knowledge", "add", "pattern", LONG_SUMMARY, "--store", str(tmp_path / "new" / "graph.db"), cwd=tmp_path)
    assert not (tmp_path / "new").exists()
