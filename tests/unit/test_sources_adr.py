"""ADRs (ctxgraph.sources.adr, .items): where they are, both formats, their
statuses and the supersedes links between them, and the decisions they make."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgraph.signals import TaskSignals
from ctxgraph.sources.adr import Adr, adr_folders, is_adr_file, parse_adr, resolve, status_of, supersessions
from ctxgraph.sources.items import adr_id, adr_items

NYGARD_OLD = """# 2. Use Postgres for persistence

Date: 2018-03-01

## Status

Accepted

Superseded by [3. Use CockroachDB for persistence](0003-use-cockroachdb-for-persistence.md)

## Context

Orders must survive restarts; we need transactions.

## Decision

Store orders in PostgreSQL 12 with one schema per service.

## Consequences

Backups are per service.
"""

NYGARD_NEW = """# 3. Use CockroachDB for persistence

Date: 2019-05-10

## Status

Accepted

Supersedes [2. Use Postgres for persistence](0002-use-postgres.md)

## Context

We run in three regions.

## Decision

Store orders in CockroachDB.
"""

MADR = """---
status: accepted
date: 2020-01-12
deciders: alice, bob
---
# Use JWT access tokens for sessions

## Context and Problem Statement

Sessions are kept in server memory, so a restart logs every user out.

## Considered Options

* JWT access tokens
* sticky sessions

## Decision Outcome

Chosen option: "JWT access tokens", because replicas verify them without a shared store.

### Consequences

* Good, because replicas stay stateless
"""

MADR2 = """# Use sticky sessions

* Status: superseded by [ADR-0004](0004-use-jwt-for-sessions.md)
* Date: 2019-11-02

## Context and Problem Statement

A restart logs users out.

## Decision Outcome

Chosen option: "sticky sessions", because the load balancer supports them.
"""


def test_nygard() -> None:
    adr = parse_adr("docs/adr/0002-use-postgres.md", NYGARD_OLD)
    assert adr == Adr(path="docs/adr/0002-use-postgres.md", number=2, title="Use Postgres for persistence",
                      status="superseded", date="2018-03-01T00:00:00Z",
                      decision="Store orders in PostgreSQL 12 with one schema per service.",
                      context="Orders must survive restarts; we need transactions.",
                      superseded_by=("0003-use-cockroachdb-for-persistence.md",))
    new = parse_adr("docs/adr/0003-use-cockroachdb-for-persistence.md", NYGARD_NEW)
    assert new is not None
    assert (new.number, new.status, new.supersedes, new.in_force) == (
        3, "accepted", ("0002-use-postgres.md",), True)


def test_madr_with_front_matter_and_madr2() -> None:
    adr = parse_adr("docs/decisions/0004-use-jwt-for-sessions.md", MADR)
    assert adr is not None
    assert (adr.number, adr.title, adr.status, adr.date) == (
        4, "Use JWT access tokens for sessions", "accepted", "2020-01-12T00:00:00Z")
    assert adr.decision == 'Chosen option: "JWT access tokens", because replicas verify them without a shared store.'
    assert adr.context.startswith("Sessions are kept in server memory")
    old = parse_adr("docs/decisions/0003-use-sticky-sessions.md", MADR2)
    assert old is not None
    assert (old.status, old.date, old.superseded_by) == ("superseded", "2019-11-02T00:00:00Z",
                                                        ("0004-use-jwt-for-sessions.md",))
    assert parse_adr("docs/adr/notes.md", "no title here\n") is None


@pytest.mark.parametrize(("text", "status"), [
    ("Accepted", "accepted"), ("Proposed", "proposed"), ("Draft", "proposed"), ("Deprecated", "deprecated"),
    ("Rejected", "rejected"), ("Superseded by ADR-0012", "superseded"), ("superseded", "superseded"),
    ("Accepted\n\nAmended by [5. Draft mode](0005-draft-mode.md)", "accepted"),
    ("Supersedes [2. Draft review process](0002-x.md)\n\nAccepted", "accepted"), ("", "accepted"),
])
def test_status(text: str, status: str) -> None:
    assert status_of(text) == status


def test_references_by_link_number_and_name() -> None:
    adrs = [parse_adr(f"docs/adr/{name}", text) for name, text in [
        ("0002-use-postgres.md", NYGARD_OLD), ("0003-use-cockroachdb-for-persistence.md", NYGARD_NEW)]]
    old, new = (a for a in adrs if a is not None)
    assert resolve("0003-use-cockroachdb-for-persistence.md", [old, new], old) is new
    assert resolve("./0002-use-postgres.md#status", [old, new], new) is old
    assert resolve("2", [old, new], new) is old
    assert resolve("2", [old, new], old) is None
    assert resolve("0009-gone.md", [old, new], old) is None
    # both sides say it, one link
    assert [(n.number, o.number) for n, o in supersessions([old, new])] == [(3, 2)]
    by_number = parse_adr("docs/adr/0004-x.md", "# 4. X\n\n## Status\n\nAccepted; supersedes ADR-0003\n")
    assert by_number is not None and by_number.supersedes == ("3",)


def test_a_superseded_chain_makes_decisions_and_links() -> None:
    texts = {
        "docs/adr/0001-a.md": "# 1. Use A\n\nDate: 2018-01-01\n\n## Status\n\nSuperseded by ADR-0002\n",
        "docs/adr/0002-b.md": "# 2. Use B\n\nDate: 2019-01-01\n\n## Status\n\nSuperseded by ADR-0003\n",
        "docs/adr/0003-c.md": "# 3. Use C\n\nDate: 2020-01-01\n\n## Status\n\nAccepted\n",
        "docs/adr/0004-d.md": "# 4. Use D\n\n## Status\n\nRejected\n",
        "docs/adr/0005-e.md": "# 5. Use E\n\n## Status\n\nProposed\n",
    }
    adrs = [a for path, text in texts.items() if (a := parse_adr(path, text)) is not None]
    signals = {a.path: TaskSignals(keywords=(a.title.split()[-1].lower(),)) for a in adrs}
    items, links = adr_items(adrs, signals, str.lower, "2026-01-01T00:00:00Z")
    by_path = {i.location: i for i in items}
    assert sorted(by_path) == ["docs/adr/0001-a.md", "docs/adr/0002-b.md", "docs/adr/0003-c.md",
                               "docs/adr/0005-e.md"]  # the rejected one is not in force: no decision
    assert [by_path[p].status for p in sorted(by_path)] == ["superseded", "superseded", "active", "proposed"]
    assert by_path["docs/adr/0003-c.md"].replaces == ("ADR 2: Use B",)
    assert by_path["docs/adr/0005-e.md"].summary == "ADR 5 (proposed): Use E"
    assert by_path["docs/adr/0001-a.md"].created_at == "2018-01-01T00:00:00Z"
    assert by_path["docs/adr/0003-c.md"].rationale == "Use C (docs/adr/0003-c.md)"
    assert sorted(links) == sorted([
        (adr_id("docs/adr/0002-b.md"), adr_id("docs/adr/0001-a.md"), "2019-01-01T00:00:00Z"),
        (adr_id("docs/adr/0003-c.md"), adr_id("docs/adr/0002-b.md"), "2020-01-01T00:00:00Z"),
    ])
    assert adr_id("docs/adr/0003-c.md").startswith("decision:") and len(adr_id("x").split(":")[1]) == 16


def test_folders_and_files(tmp_path: Path) -> None:
    for folder in ("docs/adr", "architecture/decisions", "records/arch", "design/records"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / ".adr-dir").write_text("records/arch\n")
    found = adr_folders(tmp_path, ["design/records", "../outside", "missing"])
    assert found == ["docs/adr", "architecture/decisions", "records/arch", "design/records"]
    assert is_adr_file("docs/adr/0001-x.md", found) and is_adr_file("docs/adr/ops/0002-y.md", found)
    assert not is_adr_file("docs/adr/README.md", found)
    assert not is_adr_file("docs/adr/template.md", found)
    assert not is_adr_file("docs/adr/diagram.png", found)
    assert not is_adr_file("docs/adrs.md", found)


def test_settings_name_more_folders_and_switches(tmp_path: Path) -> None:
    from ctxgraph.errors import ConfigurationError
    from ctxgraph.settings import KnowledgeSettings, load_settings

    assert load_settings(start=tmp_path).knowledge == KnowledgeSettings()
    (tmp_path / "pyproject.toml").write_text('[tool.ctxgraph.knowledge]\nadr_dirs = ["design/records"]\nnotes = false\n')
    assert load_settings(start=tmp_path).knowledge == KnowledgeSettings(adr_dirs=("design/records",), notes=False)
    for bad in ('adr_dirs = "design"', "adrs = 1", "folders = []"):
        (tmp_path / "ctxgraph.toml").write_text(f"[knowledge]\n{bad}\n")
        with pytest.raises(ConfigurationError, match=r"ctxgraph\.toml: (\[knowledge\]|knowledge\.)"):
            load_settings(start=tmp_path)
