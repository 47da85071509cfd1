"""The project's ADRs and code notes imported as decisions and gotchas
(docs/knowledge-import.md), on both stores: what a context shows of them, an
import that reads only what changed, and what a file no longer says gone."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ctxgraph.core.models import Task
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor
from ctxgraph.sources.items import adr_id
from tests._git_repo import git

ADR = "# {n}. {title}\n\nDate: {date}\n\n## Status\n\n{status}\n\n## Context\n\n{context}\n\n## Decision\n\n{decision}\n"
INVOICE = '''\
"""Invoices."""


def total(lines):
    """The invoice's total.

    .. note::

        Totals are kept in cents as integers.
    """
    # WARNING: invoice amounts are rounded per line, never on the total;
    # rounding the total loses cents on multi-currency invoices.
    return sum(round(x) for x in lines)
'''
PERSIST = Task(id="t-db", name="Move order persistence to a new database",
               objective="Change how orders are stored: the persistence database for orders")
ROUNDING = Task(id="t-round", name="Fix invoice rounding", objective="Invoice totals lose cents when rounding")


def _write(repo: Path, path: str, text: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)


def _adr(repo: Path, n: int, title: str, status: str, date: str, decision: str,
         context: str = "Orders need durable storage.") -> str:
    path = f"docs/adr/{n:04d}-{title.lower().replace(' ', '-')}.md"
    _write(repo, path, ADR.format(n=n, title=title, status=status, date=date, context=context, decision=decision))
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "shop"
    _adr(repo, 1, "Record architecture decisions", "Accepted", "2018-01-01", "We keep ADRs in docs/adr.",
         "We want to remember why.")
    _adr(repo, 2, "Use Postgres for order persistence",
         "Accepted\n\nSuperseded by [3. Use CockroachDB](0003-use-cockroachdb-for-order-persistence.md)",
         "2018-03-01", "Store orders in PostgreSQL.")
    _adr(repo, 3, "Use CockroachDB for order persistence", "Accepted", "2019-05-10",
         "Store orders in CockroachDB across regions.")
    _adr(repo, 4, "Use a message queue for order events", "Rejected", "2019-06-01", "Publish order events.")
    _write(repo, "src/billing/invoice.py", INVOICE)
    _write(repo, "docs/guide.md", "# Guide\n\n> [!WARNING]\n> Invoices cannot be edited once they are sent.\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    past = time.time() - 60  # written a minute ago: their stat is trusted (a fresh one is read again)
    for file in repo.rglob("*"):
        if file.is_file() and ".git" not in file.parts:
            os.utime(file, (past, past))
    return repo


def _import(svc: ContextService, repo: Path) -> dict[str, object]:
    return svc.import_project_knowledge(repo, adrs=True, notes=True, adr_dirs=()).as_dict()


def test_adrs_become_decisions_and_notes_warnings(svc: ContextService, repo: Path) -> None:
    svc.use_root(repo)
    report = _import(svc, repo)
    assert {k: report[k] for k in ("files", "read", "decisions", "superseded", "not_in_force", "gotchas",
                                   "written", "removed")} == {
        "files": 6, "read": 6, "decisions": 3, "superseded": 1, "not_in_force": 1, "gotchas": 3, "written": 6,
        "removed": 0}
    ctx = svc.compute(PERSIST, record=False, memory=False, explain=True)
    assert [d.decision for d in ctx.relevant_decisions] == ["ADR 3: Use CockroachDB for order persistence"]
    assert ctx.relevant_decisions[0].replaces == ("ADR 2: Use Postgres for order persistence",)
    assert ("(replaces: ADR 2: Use Postgres for order persistence)" in ctx.markdown
            and "Store orders in PostgreSQL" not in ctx.markdown)
    old = adr_id("docs/adr/0002-use-postgres-for-order-persistence.md")
    assert {e.id: e.reason for e in ctx.explain or ()}[old] == "superseded"
    (stored,) = svc.store.get_knowledge([old])
    assert (stored.status, stored.valid_from, stored.valid_until) == (
        "superseded", "2018-03-01T00:00:00Z", "2019-05-10T00:00:00Z")
    assert svc.store.get_knowledge([adr_id("docs/adr/0004-use-a-message-queue-for-order-events.md")]) == []

    warned = svc.compute(ROUNDING, record=False, memory=False)
    issues = {w.issue: w.severity.value for w in warned.warnings}
    assert issues[("WARNING (src/billing/invoice.py:11-12, total): invoice amounts are rounded per line, never on "
                   "the total; rounding the total loses cents on multi-currency invoices.")] == "high"
    assert "⚠️ **high**: WARNING (src/billing/invoice.py:11-12, total)" in warned.markdown
    assert warned.tokens <= warned.budget


def test_a_second_import_reads_and_writes_nothing(svc: ContextService, repo: Path) -> None:
    _import(svc, repo)
    graph = sorted(repr(sorted(r.items())) for r in svc.store.export_rows())
    writes = getattr(svc.store, "transactions", {}).get("write", 0)  # Neo4j counts its transactions
    again = _import(svc, repo)
    assert getattr(svc.store, "transactions", {}).get("write", 0) == writes
    assert (again["read"], again["written"], again["removed"], again["gotchas"], again["decisions"]) == (0, 0, 0, 3, 3)
    assert sorted(repr(sorted(r.items())) for r in svc.store.export_rows()) == graph
    (repo / "src" / "billing" / "invoice.py").touch()  # a new stat, the same bytes: read, nothing written
    touched = _import(svc, repo)
    assert (touched["read"], touched["written"]) == (0, 0)
    assert sorted(repr(sorted(r.items())) for r in svc.store.export_rows()) == graph
    assert all(r["label"] != "ImportedFile" for r in svc.store.export_rows() if r["kind"] == "node")
    assert "ImportedFile" not in svc.store.stats().labels


def test_a_deleted_note_is_never_shown_again(svc: ContextService, repo: Path) -> None:
    svc.use_root(repo)
    _import(svc, repo)
    assert any("rounded per line" in w.issue for w in svc.compute(ROUNDING, record=False, memory=False).warnings)
    kept = INVOICE.replace("    # WARNING: invoice amounts are rounded per line, never on the total;\n"
                           "    # rounding the total loses cents on multi-currency invoices.\n", "")
    (repo / "src" / "billing" / "invoice.py").write_text("\n\n" + kept)  # the other note moves down
    report = _import(svc, repo)
    assert (report["read"], report["removed"], report["gotchas"]) == (1, 1, 2)
    ctx = svc.compute(ROUNDING, record=False, memory=False, explain=True)
    assert "rounded per line" not in ctx.markdown and all(e.kind != "gotcha" or e.id in ids_now(svc)
                                                           for e in ctx.explain or ())
    owners = {a.owner for a in svc.store.read_anchors()}
    ids = [i for f in svc.store.imported_files("knowledge") for i in f.items]
    assert owners == set(ids) and len(svc.store.get_knowledge(ids)) == 5
    moved = [k for k in svc.store.get_knowledge(ids) if k.kind == "gotcha" and "cents as integers" in k.summary]
    assert [k.location for k in moved] == ["src/billing/invoice.py:9-11"]


def ids_now(svc: ContextService) -> set[str]:
    return {i for f in svc.store.imported_files("knowledge") for i in f.items}


def test_a_file_deleted_retires_its_notes_before_and_after_an_import(svc: ContextService, repo: Path) -> None:
    svc.use_root(repo)
    _import(svc, repo)
    git(repo, "rm", "-q", "src/billing/invoice.py")
    ctx = svc.compute(ROUNDING, record=False, memory=False, explain=True)  # no import yet: its anchor retires it
    assert "rounded per line" not in ctx.markdown
    assert any(e.reason.startswith("retired: file deleted: src/billing/invoice.py") for e in ctx.explain or ())
    report = _import(svc, repo)
    assert (report["removed"], report["gotchas"]) == (2, 1)
    assert [f.path for f in svc.store.imported_files("knowledge") if f.path.startswith("src/")] == []


def test_editing_adrs_is_seen(svc: ContextService, repo: Path) -> None:
    _import(svc, repo)
    new = _adr(repo, 5, "Use Spanner for order persistence", "Accepted\n\nSupersedes ADR-0003", "2021-02-01",
               "Store orders in Spanner.")
    assert new.endswith("0005-use-spanner-for-order-persistence.md")
    report = _import(svc, repo)
    assert (report["read"], report["decisions"], report["superseded"]) == (1, 4, 2)
    ctx = svc.compute(PERSIST, record=False, memory=False)
    assert [(d.decision, d.replaces) for d in ctx.relevant_decisions] == [
        ("ADR 5: Use Spanner for order persistence", ("ADR 3: Use CockroachDB for order persistence",))]
    # the newer ADR withdrawn: the older is in force again, and no link is left
    (repo / new).unlink()
    report = _import(svc, repo)
    assert (report["decisions"], report["superseded"], report["removed"]) == (3, 1, 1)
    ctx = svc.compute(PERSIST, record=False, memory=False)
    assert [d.decision for d in ctx.relevant_decisions] == ["ADR 3: Use CockroachDB for order persistence"]
    assert svc.store.stats().relationships["SUPERSEDES"] == 1


def test_a_handoff_superseding_an_adr_outlives_a_reimport(svc: ContextService, repo: Path) -> None:
    _import(svc, repo)
    adr3 = adr_id("docs/adr/0003-use-cockroachdb-for-order-persistence.md")
    svc.add_tasks([{"id": "t-move", "name": "Move orders", "objective": "Move order persistence"}])
    svc.ingest_handoff({"task_id": "t-move", "summary": "moved", "completed_at": "2026-02-01T00:00:00Z",
                        "decisions": [{"decision": "Store orders in FoundationDB", "rationale": "cost",
                                       "supersedes": [adr3]}]})
    path = repo / "docs/adr/0003-use-cockroachdb-for-order-persistence.md"
    path.write_text(path.read_text() + "\nEdited.\n")
    assert _import(svc, repo)["read"] == 1
    (stored,) = svc.store.get_knowledge([adr3])
    assert (stored.status, stored.valid_until) == ("superseded", "2026-02-01T00:00:00Z")
    ctx = svc.compute(PERSIST, record=False, memory=False)
    assert "ADR 3" not in " ".join(d.decision for d in ctx.relevant_decisions)


def test_clear_forgets_the_import(svc: ContextService, repo: Path) -> None:
    _import(svc, repo)
    assert svc.store.imported_files("knowledge")
    svc.store.clear()
    assert svc.store.imported_files("knowledge") == []
    assert _import(svc, repo)["read"] == 6


def test_both_stores_give_the_same_contexts_after_imports(
    neo4j_store: KnowledgeStore, tmp_path: Path, repo: Path, extractor: SignalExtractor
) -> None:
    neo4j_store.clear()
    local = LocalStore.open(tmp_path / "graph.db")
    try:
        services = [ContextService(local, extractor), ContextService(neo4j_store, extractor)]
        now = datetime.now(UTC)
        for step in range(2):
            if step:  # an ADR superseding another, a note deleted
                _adr(repo, 5, "Use Spanner for order persistence", "Supersedes ADR-0003", "2021-02-01", "Spanner.")
                path = repo / "src" / "billing" / "invoice.py"
                path.write_text(path.read_text().replace("# WARNING: invoice", "# invoice"))
            for svc in services:
                svc.use_root(repo)
                svc.import_project_knowledge(repo, adrs=True, notes=True, adr_dirs=(), at=now.isoformat())
            a, b = services
            assert a.stats() == b.stats()
            assert a.store.imported_files("knowledge") == b.store.imported_files("knowledge")
            for task in (PERSIST, ROUNDING):
                ca = a.compute(task, record=False, memory=False, debug=True, explain=True, now=now)
                cb = b.compute(task, record=False, memory=False, debug=True, explain=True, now=now)
                assert ca.model_dump(mode="json") == cb.model_dump(mode="json"), (step, task.id)
    finally:
        local.close()
        neo4j_store.clear()
