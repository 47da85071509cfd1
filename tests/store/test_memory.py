"""The associative memory on both stores: indexing, incremental runs, search
parity, the file gates, stale and failing indexes."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from ctxgraph.compute.code_memory import fuse, passing
from ctxgraph.compute.config import ContextConfig
from ctxgraph.core.models import MemoryChunk, MemoryHit, MemoryRecall, Task
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.embed import shared_embedder
from ctxgraph.memory.index import index_project
from ctxgraph.memory.recall import check, recall
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor, terms

LOGIN = '''"""Password login for the web app."""


def login(username: str, password: str) -> str:
    """Check the password against its bcrypt hash and return a session token."""
    user = find_user(username)
    if not verify_password(password, user.password_hash):
        raise PermissionError("wrong password")
    return new_session_token(user)


def logout(token: str) -> None:
    """End the session."""
    drop_session(token)
'''

INVOICE = '''"""Invoices for the billing service."""


class Invoice:
    """A customer invoice with line items and a total in cents."""

    def total(self) -> int:
        return sum(item.cents for item in self.items)


def render_invoice_pdf(invoice: Invoice) -> bytes:
    """Render the invoice as a PDF document for the customer."""
    return pdf_from_html(invoice_html(invoice))
'''

README = """# Shop

The shop sells things.

## Deploying

Run the container behind the reverse proxy; set DATABASE_URL first.

## Caching

Product pages are cached for five minutes in Redis.
"""


def make_project(root: Path) -> Path:
    (root / "src" / "auth").mkdir(parents=True)
    (root / "src" / "billing").mkdir(parents=True)
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "src" / "auth" / "login.py").write_text(LOGIN, encoding="utf-8")
    (root / "src" / "billing" / "invoice.py").write_text(INVOICE, encoding="utf-8")
    (root / "README.md").write_text(README, encoding="utf-8")
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n", encoding="utf-8")
    (root / "src" / "logo.py").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    (root / "src" / "huge.txt").write_text("x" * (501 * 1024), encoding="utf-8")
    return root


class CountingEmbedder:
    """The real embedder, counting the texts it is given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        self.texts.extend(texts)
        return shared_embedder().embed(texts, max_pieces)


class BrokenEmbedder:
    def embed(self, texts: Sequence[str], max_pieces: int = 256) -> npt.NDArray[np.float32]:
        raise RuntimeError("model file damaged")


def query(store: KnowledgeStore, project: str, text: str) -> tuple[list[MemoryHit], list[MemoryHit]]:
    vector = [float(x) for x in shared_embedder().embed([text])[0]]
    return store.search_memory(project, vector, terms(text), 5)


def test_index_skips_what_it_must_and_finds_by_meaning_and_by_words(store: KnowledgeStore, tmp_path: Path) -> None:
    root = make_project(tmp_path / "shop")
    report = index_project(store, root, embedder=CountingEmbedder())
    assert report.complete and report.project == "shop"
    assert report.files == 3  # node_modules never walked; logo.py binary, huge.txt too big
    assert {(s.path, s.reason.split(" ")[0]) for s in report.skipped} == {("src/logo.py", "binary"),
                                                                          ("src/huge.txt", "over")}
    state = store.memory_state("shop")
    assert state.project is not None and state.project.indexed_at == report.indexed_at
    assert sorted(state.file_hashes) == ["README.md", "src/auth/login.py", "src/billing/invoice.py"]

    by_vector, by_text = query(store, "shop", "users cannot sign in with their password")
    assert by_vector[0].chunk.path == "src/auth/login.py" and by_vector[0].rank == 1
    assert by_text[0].chunk.path == "src/auth/login.py"
    by_vector, _ = query(store, "shop", "customer receives a PDF bill")
    assert by_vector[0].chunk.path == "src/billing/invoice.py"
    _, by_text = query(store, "shop", "redis cache for product pages")
    assert by_text[0].chunk.path == "README.md" and "Caching" in by_text[0].chunk.text
    assert store.search_memory("another", None, ["password"], 5) == ([], [])


def test_reindex_embeds_only_changed_files_and_forgets_deleted_ones(store: KnowledgeStore, tmp_path: Path) -> None:
    root = make_project(tmp_path / "shop")
    first = CountingEmbedder()
    index_project(store, root, embedder=first)
    assert first.texts

    again = CountingEmbedder()
    report = index_project(store, root, embedder=again)
    assert again.texts == [] and report.indexed == 0 and report.unchanged == 3 and report.chunks == 0

    (root / "src" / "auth" / "login.py").write_text(LOGIN.replace("bcrypt", "argon2"), encoding="utf-8")
    (root / "README.md").unlink()
    (root / "src" / "billing" / "refund.py").write_text("def refund(invoice):\n    return None\n",
                                                        encoding="utf-8")
    changed = CountingEmbedder()
    report = index_project(store, root, embedder=changed)
    assert report.indexed == 2 and report.unchanged == 1 and report.removed == 1
    assert {t.split("\n", 1)[0] for t in changed.texts} == {"src/auth/login.py", "src/billing/refund.py"}
    state = store.memory_state("shop")
    assert sorted(state.file_hashes) == ["src/auth/login.py", "src/billing/invoice.py", "src/billing/refund.py"]
    _, by_text = query(store, "shop", "argon2 caching redis")
    assert by_text[0].chunk.path == "src/auth/login.py" and "argon2" in by_text[0].chunk.text
    assert all(h.chunk.path != "README.md" for h in by_text)


def test_the_lightweight_index_needs_no_model(store: KnowledgeStore, tmp_path: Path) -> None:
    root = make_project(tmp_path / "shop")
    report = index_project(store, root, embeddings=False, embedder=BrokenEmbedder())
    assert report.complete and report.chunks == 3  # one chunk per file: its first lines
    by_vector, by_text = store.search_memory("shop", None, terms("invoice pdf"), 5)
    assert by_vector == [] and by_text[0].chunk.path == "src/billing/invoice.py"
    assert by_text[0].chunk.start_line == 1


def test_both_stores_give_the_same_hits_and_scores(neo4j_store: KnowledgeStore, tmp_path: Path) -> None:
    neo4j_store.clear()
    local = LocalStore.open(tmp_path / "graph.db")
    try:
        root = make_project(tmp_path / "shop")
        # longer files too, so that Lucene's rounded document lengths matter
        for n in range(12):
            body = "\n".join(f"def handler_{n}_{i}(request):\n    return cache_lookup(request, {i})\n"
                             for i in range(n * 3 + 1))
            (root / "src" / f"handlers_{n}.py").write_text(body, encoding="utf-8")
        embedder = CountingEmbedder()
        index_project(local, root, embedder=embedder)
        index_project(neo4j_store, root, embedder=embedder)
        for text in ("users cannot sign in with their password", "cache lookup handler for requests",
                     "customer receives a PDF bill", "deploy behind the reverse proxy"):
            a, b = query(local, "shop", text), query(neo4j_store, "shop", text)
            for mine, theirs in zip(a, b, strict=True):
                assert [(h.chunk.path, h.chunk.start_line) for h in mine] == \
                    [(h.chunk.path, h.chunk.start_line) for h in theirs], text
                assert [h.score for h in mine] == pytest.approx([h.score for h in theirs], abs=2e-4), text
    finally:
        local.close()


def hit(path: str, score: float, rank: int, text: str = "def f():\n    pass\n") -> MemoryHit:
    chunk = MemoryChunk(path=path, start_line=1, end_line=2, text=text, text_hash="h", token_estimate=3,
                        file_sha256="s")
    return MemoryHit(chunk=chunk, score=score, rank=rank)


def test_gates_refuse_missing_escaping_and_binary_files(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    outside = tmp_path / "secret.py"
    outside.write_text("TOKEN = 'x'\n", encoding="utf-8")
    (root / "src" / "ok.py").write_text("def ok():\n    return 1\n", encoding="utf-8")
    (root / "src" / "blob.py").write_bytes(b"\0\1\2binary")
    os.symlink(outside, root / "src" / "link.py")
    ok = check(root, hit("src/ok.py", 0.9, 1))  # another content than indexed: the lines there now
    assert not isinstance(ok, str) and ok.chunk.text == "def ok():\n    return 1" and ok.changed
    assert check(root, hit("src/gone.py", 0.9, 1)) == "missing"
    assert check(root, hit("../secret.py", 0.9, 1)) == "outside the indexed root"
    assert check(root, hit("src/../../secret.py", 0.9, 1)) == "outside the indexed root"
    assert check(root, hit("src/link.py", 0.9, 1)) == "outside the indexed root"
    assert check(root, hit(str(outside), 0.9, 1)) in ("missing", "outside the indexed root")
    assert check(root, hit("src/blob.py", 0.9, 1)) == "binary"


def test_recall_applies_the_gates_to_what_the_store_returns(store: KnowledgeStore, tmp_path: Path) -> None:
    root = make_project(tmp_path / "shop")
    index_project(store, root)
    (root / "src" / "auth" / "login.py").unlink()  # deleted after indexing
    projects = tuple(store.memory_projects())
    found, notes = recall(store, projects, "users cannot sign in with their password",
                          terms("users cannot sign in with their password"), project=None, stale_hours=24)
    assert found is not None
    assert all(h.chunk.path != "src/auth/login.py" for h in (*found.by_vector, *found.by_text))
    assert any("refused by the gates" in n and "missing" in n for n in notes)


def test_threshold_keeps_weak_matches_out_of_the_fusion() -> None:
    memory = MemoryRecall(project="p", by_vector=(hit("a.py", 0.62, 1), hit("b.py", 0.21, 2)),
                          by_text=(hit("c.py", 7.5, 1), hit("d.py", 0.4, 2)))
    config = ContextConfig()
    vec, txt = passing(memory, config)
    assert [h.chunk.path for h in vec] == ["a.py"] and [h.chunk.path for h in txt] == ["c.py"]
    fusion = fuse(["c.py", "x.py"], memory, config)
    assert [f[0] for f in fusion.files] == ["c.py", "a.py", "x.py"]
    assert fusion.files[0][2] == {"graph": 1, "text": 1}
    # a.py is the best file with a confident chunk only after c.py, whose best
    # chunk is a full-text match under the snippet threshold: no snippet
    assert fusion.snippets == []
    strong = fuse([], MemoryRecall(project="p", by_vector=(hit("a.py", 0.8, 1),)), config)
    assert [s.path for s in strong.snippets] == ["a.py"] and strong.snippets[0].similarity == 0.8
    assert strong.snippets[0].text == "def f():"


def test_a_stale_index_is_skipped_and_an_incomplete_one_used_as_partial(store: KnowledgeStore,
                                                                         tmp_path: Path) -> None:
    root = make_project(tmp_path / "shop")
    index_project(store, root)
    projects = tuple(store.memory_projects())
    later = datetime.now(UTC) + timedelta(hours=30)
    found, notes = recall(store, projects, "password", ["password"], project=None, stale_hours=24, now=later)
    assert found is None and "stale" in notes[0]
    incomplete = tuple(p.model_copy(update={"indexed_at": "", "files_indexed": 2}) for p in projects)
    found, notes = recall(store, incomplete, "password", ["password"], project=None, stale_hours=24)
    assert found is not None and found.by_text and notes[0].startswith("associative memory: partial (2/3 files")
    found, notes = recall(store, projects, "password", ["password"], project="nope", stale_hours=24)
    assert found is None and "'nope' is not indexed" in notes[0]


def test_the_context_shows_snippets_and_survives_memory_failures(
    store: KnowledgeStore, extractor: SignalExtractor, tmp_path: Path,
) -> None:
    root = make_project(tmp_path / "shop")
    index_project(store, root)
    svc = ContextService(store, extractor)
    task = Task(id="t-1", name="Fix the login password check", objective="login() rejects a valid password")
    ctx = svc.compute(task, debug=True)
    assert ctx.codebase_context and ctx.codebase_context[0].path == "src/auth/login.py"
    assert "### Relevant Codebase Context\n1. `src/auth/login.py` lines " in ctx.markdown
    assert "`def login(username: str, password: str) -> str:`" in ctx.markdown
    assert "Associative memory: project shop:" in ctx.markdown
    assert ctx.markdown.index("Relevant Codebase Context") < ctx.markdown.index("### Code References")

    svc.embedder = BrokenEmbedder()
    ctx = svc.compute(task, debug=True)
    assert "embedding failed (model file damaged); full-text matches only" in ctx.markdown
    assert "## Context (Computed)" in ctx.markdown

    svc.memory = False
    ctx = svc.compute(task, debug=True)
    assert not ctx.codebase_context and "Associative memory" not in ctx.markdown


def test_another_projects_chunks_do_not_crowd_a_project_out(store: KnowledgeStore, tmp_path: Path) -> None:
    root = make_project(tmp_path / "shop")
    crowd = tmp_path / "crowd"
    crowd.mkdir()
    for n in range(30):  # many chunks about passwords in another project
        (crowd / f"pw{n}.md").write_text(f"# Passwords {n}\n\nSign in with a password; login password check.\n",
                                         encoding="utf-8")
    index_project(store, root, project="shop")
    index_project(store, crowd, project="crowd", embeddings=True)
    if hasattr(store, "MEMORY_FETCH"):  # make Neo4j widen its searches
        store.MEMORY_FETCH = store.MEMORY_VECTOR_FETCH = 1  # type: ignore[attr-defined]
    by_vector, by_text = query(store, "shop", "users cannot sign in with their password login")
    assert by_vector and by_text
    assert by_vector[0].chunk.path == "src/auth/login.py" and by_text[0].chunk.path == "src/auth/login.py"
    assert not any(h.chunk.path.startswith("pw") for h in (*by_vector, *by_text))
    assert len(by_vector) == 3  # every chunk of shop (one per file), found past the crowd


def test_the_embedded_index_is_rebuilt_only_when_chunks_change(tmp_path: Path) -> None:
    local = LocalStore.open(tmp_path / "graph.db")
    try:
        root = make_project(tmp_path / "shop")
        index_project(local, root)
        query(local, "shop", "password")
        built = local._memory._index
        local.upsert_tasks([Task(id="t-9", name="Unrelated task")])  # any other write
        query(local, "shop", "password")
        assert local._memory._index is built
        (root / "README.md").write_text("# Shop\n\nNow with passwords.\n", encoding="utf-8")
        index_project(local, root)
        _, by_text = query(local, "shop", "now with passwords")
        assert local._memory._index is not built
        assert by_text[0].chunk.path == "README.md"
        local.clear()
        assert query(local, "shop", "password") == ([], [])
    finally:
        local.close()


def test_a_run_reads_only_the_files_whose_stat_moved(store: KnowledgeStore, tmp_path: Path) -> None:
    root = make_project(tmp_path / "shop")
    then = datetime.now(UTC).timestamp() - 60
    for path in root.rglob("*"):
        os.utime(path, (then, then))  # out of the scan's racy window
    first = index_project(store, root, embeddings=False)
    assert first.read == 4 and first.indexed == 3  # the text files and the binary one (sniffed every run)
    again = index_project(store, root, embeddings=False)
    assert again.read == 1 and again.unchanged == 3 and again.indexed == 0
    os.utime(root / "README.md", (then + 10, then + 10))  # a new mtime, the same content: read once, stat recorded
    touched = index_project(store, root, embeddings=False)
    assert touched.read == 2 and touched.indexed == 0
    assert store.memory_state("shop").file_stats["README.md"].mtime_ns == (root / "README.md").stat().st_mtime_ns
    login = root / "src" / "auth" / "login.py"
    login.write_text(LOGIN.replace("bcrypt", "argon2"), encoding="utf-8")
    os.utime(login, (then + 30, then + 30))
    changed = index_project(store, root, embeddings=False)
    assert changed.read == 2 and changed.indexed == 1
    assert index_project(store, root, embeddings=False).read == 1


def big_function(name: str, words: str) -> str:
    body = "".join(f"    {name}_{i} = '{words} {i}'\n" for i in range(60))
    return f"def {name}():\n    \"\"\"{words}.\"\"\"\n{body}    return None\n\n\n"


def test_a_changed_file_embeds_only_its_changed_chunks(store: KnowledgeStore, tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    parts = [big_function("parse", "parse the order lines"), big_function("price", "price the order"),
             big_function("ship", "ship the parcel")]
    (root / "orders.py").write_text("".join(parts), encoding="utf-8")
    first = CountingEmbedder()
    index_project(store, root, embedder=first)
    assert len(first.texts) >= 3
    (root / "orders.py").write_text("".join(parts[:2]) + big_function("ship", "ship the parcel by air"),
                                    encoding="utf-8")
    again = CountingEmbedder()
    report = index_project(store, root, embedder=again)
    assert report.vectors_reused == len(first.texts) - len(again.texts) > 0
    assert again.texts and all("def ship" in t or "by air" in t for t in again.texts)
    # the vectors kept are those a fresh index makes
    kept = store.memory_vectors("big", ["orders.py"])["orders.py"]
    index_project(store, root, project="fresh")
    fresh = store.memory_vectors("fresh", ["orders.py"])["orders.py"]
    assert kept.keys() == fresh.keys()
    assert all(np.allclose(kept[h], fresh[h], atol=1e-6) for h in kept)


def test_a_first_index_writes_full_text_first_and_vectors_after(store: KnowledgeStore, tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(30):  # more new files than one batch: full text first
        (root / f"mod{i:02d}.py").write_text(f"def handler_{i}(order):\n    return order.total_{i}\n", encoding="utf-8")
    first = CountingEmbedder()
    cut = index_project(store, root, embedder=first, time_limit=1e-6)  # cut after one embedder call
    assert not cut.complete and 0 < cut.indexed < 30
    # every file is found by its words already; the vectors are there for the files embedded
    assert [h.chunk.path for h in store.search_memory("many", None, ["mod29"], 5)[1]] == ["mod29.py"]
    embedded = store.memory_vectors("many", [f"mod{i:02d}.py" for i in range(30)])
    assert len(embedded) == cut.indexed
    rest = CountingEmbedder()
    done = index_project(store, root, embedder=rest)
    assert done.complete and len(first.texts) + len(rest.texts) == 30  # each chunk embedded once
    assert len(store.memory_vectors("many", [f"mod{i:02d}.py" for i in range(30)])) == 30
    assert all(sha for sha in store.memory_state("many").file_hashes.values())


def test_a_file_the_index_made_takes_the_component_a_handoff_gives(store: KnowledgeStore, tmp_path: Path) -> None:
    index_project(store, make_project(tmp_path / "shop"), embeddings=False, embedder=BrokenEmbedder())
    svc = ContextService(store, SignalExtractor())
    svc.add_task(Task(id="t-1", name="Bill in cents", objective="Invoices total in cents"))
    svc.ingest_handoff({"task_id": "t-1", "summary": "Totals in cents",
                        "files_modified": [{"path": "src/billing/invoice.py", "purpose": "total()"}]}, source="h.yaml")
    files = {r["id"]: r["props"] for r in store.export_rows() if r.get("label") == "File"}
    assert files["src/billing/invoice.py"]["component"] == "billing"
    assert files["src/billing/invoice.py"]["notes"] == "total()"
    assert files["src/auth/login.py"]["component"] == "auth"  # made by the index alone
