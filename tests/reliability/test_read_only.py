"""Read-only access: `context`, `task show`, `task list`, `knowledge show`,
`stats` and `export` open the store so that it cannot be written.

* Embedded: SQLite's ``mode=ro``, no schema statements, nothing created — a
  store whose file and folder are read-only (chmod 0444/0555) still answers
  every read command, while `ingest` fails in one clear line; a missing store
  is a clear error and stays missing.
* Neo4j: no schema statements on open and only READ transactions (counted);
  a write is refused by the store, and — bypassing it — by the server itself,
  since every session is opened with READ access.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
from _faults import assert_one_error_line, cli_env, ctxgraph
from click.testing import CliRunner

from ctxgraph.cli import main
from ctxgraph.errors import StoreUnavailableError
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.neo4j_store import Neo4jSettings, Neo4jStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}

HANDOFF = """\
task_id: t-auth
summary: Added JWT validation middleware
success: true
completed_at: "2026-03-01T10:00:00Z"
files_created: [{path: src/auth/jwt.ts, purpose: JWT verify helper}]
patterns_discovered: [{pattern: Wrap handlers with requireAuth(), applies_to: [auth, api]}]
gotchas: [{issue: Clock skew breaks exp checks, severity: high, applies_to: [jwt]}]
"""


def fill(store: KnowledgeStore, extractor: SignalExtractor) -> str:
    """Two tasks, a handoff and a decision; returns the decision's id."""
    svc = ContextService(store, extractor)
    svc.add_task({"id": "t-auth", "name": "Add JWT validation middleware", "objective": "Verify JWT tokens"})
    svc.add_task(
        {"id": "t-refresh", "name": "Refresh tokens", "objective": "Rotate the JWT on login", "depends_on": ["t-auth"]}
    )
    svc.ingest_handoff(HANDOFF.encode(), source="h.yaml")
    return svc.add_knowledge("decision", "Sign JWT with HS256", tags=["jwt"]).id


def read_commands(knowledge_id: str) -> dict[str, list[str]]:
    return {
        "context": ["context", "t-refresh", "--debug"],
        "context-json": ["context", "t-refresh", "--format", "json"],
        "task show": ["task", "show", "t-auth", "--format", "json"],
        "task list": ["task", "list"],
        "knowledge show": ["knowledge", "show", knowledge_id],
        "stats": ["stats", "--format", "json"],
        "export": ["export", "-"],
    }


def without_file_permission_override() -> Callable[[], None] | None:
    """A preexec_fn that makes a root child obey file modes (drops
    CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER from its bounding set);
    None when not root. Skips (fails in CI) if the capabilities cannot be dropped."""
    if os.geteuid() != 0:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    probe = subprocess.run(["true"], preexec_fn=lambda: _drop(libc), check=False)
    if probe.returncode != 0:
        message = "running as root and cannot drop CAP_DAC_OVERRIDE: file modes would not apply"
        if IN_CI:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return lambda: _drop(libc)


def _drop(libc: Any) -> None:
    pr_capbset_drop = 24
    for cap in (1, 2, 3):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
        if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_together(
    commands: dict[str, list[str]], cwd: Path, env: dict[str, str], preexec: Callable[[], None] | None = None
) -> dict[str, subprocess.CompletedProcess[str]]:
    procs = {
        name: subprocess.Popen(
            ctxgraph(*args),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=preexec,
        )
        for name, args in commands.items()
    }
    done = {}
    try:
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=180)
            done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return done


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def read_only_folder(tmp_path: Path, extractor: SignalExtractor) -> Iterator[tuple[Path, str]]:
    """A filled store in a folder, both made read-only; modes restored after."""
    folder = tmp_path / "store"
    folder.mkdir()
    store = LocalStore.open(folder / "graph.db")
    try:
        knowledge_id = fill(store, extractor)
    finally:
        store.close()
    assert sorted(p.name for p in folder.iterdir()) == ["graph.db"]  # the WAL is merged on close
    (folder / "graph.db").chmod(0o444)
    folder.chmod(0o555)
    try:
        yield folder, knowledge_id
    finally:
        folder.chmod(0o755)
        (folder / "graph.db").chmod(0o644)


@pytest.mark.slow
def test_a_read_only_embedded_store_answers_reads_and_refuses_writes_in_one_line(
    read_only_folder: tuple[Path, str], tmp_path: Path
) -> None:
    folder, knowledge_id = read_only_folder
    preexec = without_file_permission_override()
    before = digest(folder)
    (tmp_path / "h2.yaml").write_text(HANDOFF.replace("t-auth", "t-refresh"))
    env = cli_env({"CTXGRAPH_STORE": str(folder / "graph.db")})
    runs = run_together(
        read_commands(knowledge_id)
        | {
            "ingest": ["ingest", "handoff", "h2.yaml"],
            "task add": ["task", "add", "t-new", "--name", "New"],
        },
        tmp_path,
        env,
        preexec,
    )
    for name in read_commands(knowledge_id):
        proc = runs[name]
        stderr = proc.stderr if name != "export" else proc.stderr.split("exported ", 1)[0]  # its summary line
        assert proc.returncode == 0 and stderr == "", (name, proc.stderr[-2000:])
    assert "Wrap handlers with requireAuth()" in runs["context"].stdout
    assert json.loads(runs["context-json"].stdout)["prior_work"][0]["task_id"] == "t-auth"
    assert json.loads(runs["task show"].stdout)["status"] == "completed"
    assert runs["export"].stdout.startswith('{"format": "ctxgraph-export"')
    for name in ("ingest", "task add"):
        line = assert_one_error_line(runs[name], 5)
        assert "cannot write to the embedded store" in line and "read-only" in line, line
    assert digest(folder) == before, "a read-only store was changed (or got a -wal/-shm file)"


@pytest.mark.slow
def test_a_read_only_file_in_a_writable_folder(tmp_path: Path, extractor: SignalExtractor) -> None:
    db = tmp_path / "graph.db"
    store = LocalStore.open(db)
    try:
        fill(store, extractor)
    finally:
        store.close()
    db.chmod(0o444)
    try:
        (tmp_path / "h2.yaml").write_text(HANDOFF.replace("t-auth", "t-refresh"))
        runs = run_together(
            {"context": ["context", "t-refresh"], "ingest": ["ingest", "handoff", "h2.yaml"]},
            tmp_path,
            cli_env({"CTXGRAPH_STORE": str(db)}),
            without_file_permission_override(),
        )
        assert runs["context"].returncode == 0, runs["context"].stderr
        assert "Wrap handlers with requireAuth()" in runs["context"].stdout
        assert "read-only" in assert_one_error_line(runs["ingest"], 5)
    finally:
        db.chmod(0o644)


def test_sqlite_itself_refuses_a_write_through_a_read_only_open(tmp_path: Path, extractor: SignalExtractor) -> None:
    db = tmp_path / "graph.db"
    store = LocalStore.open(db)
    try:
        fill(store, extractor)
    finally:
        store.close()
    before = db.read_bytes()
    reader = LocalStore.open(db, read_only=True)
    try:
        assert reader.get_task("t-auth") is not None and reader.stats().labels["Task"] == 2
        with pytest.raises(StoreUnavailableError, match="opened read-only"):
            reader.set_status("t-auth", reader.get_task("t-auth").status, reason=None, at="now")  # type: ignore[union-attr]
        with pytest.raises(StoreUnavailableError, match="opened read-only"):
            reader.init_schema()
        with pytest.raises(sqlite3.OperationalError, match="readonly"):  # below the store's own guard
            reader.db.conn.execute("DELETE FROM nodes")
    finally:
        reader.close()
    assert db.read_bytes() == before


def test_read_commands_on_a_missing_store_fail_clearly_and_create_nothing(tmp_path: Path) -> None:
    (tmp_path / "task.yaml").write_text("id: adhoc\nname: Add JWT login\n")
    (tmp_path / "garbage.db").write_bytes(b"not a database at all" * 100)
    sqlite3.connect(tmp_path / "other.db").execute("CREATE TABLE x (y)").connection.close()
    commands = {name: args for name, args in read_commands("decision:x").items() if name != "context-json"}
    commands |= {
        "explicit": ["stats", "--store", "missing/graph.db"],
        "garbage": ["stats", "--store", "garbage.db"],
        "not ctxgraph": ["task", "list", "--store", "other.db"],
        "task file": ["context", "--task-file", "task.yaml"],
    }
    runs = run_together(commands, tmp_path, cli_env())
    for name, proc in runs.items():
        if name == "task file":  # computed from nothing stored, with one warning
            assert proc.returncode == 0 and proc.stdout.startswith("## Context (Computed)"), proc.stderr
            assert proc.stderr.count("\n") == 1 and "no embedded store at .ctxgraph/graph.db" in proc.stderr
            continue
        line = assert_one_error_line(proc, 5)
        if name == "garbage":
            assert "garbage.db" in line and "not a database" in line, line
        elif name == "not ctxgraph":
            assert "other.db is not a ctxgraph store" in line, line
        else:
            where = "missing/graph.db" if name == "explicit" else ".ctxgraph/graph.db"
            assert f"no embedded store at {where}" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["garbage.db", "other.db", "task.yaml"]


# ------------------------------------------------------------------ Neo4j


@pytest.fixture
def filled_neo4j(
    neo4j_settings: object, neo4j_store: KnowledgeStore, extractor: SignalExtractor
) -> Iterator[tuple[Neo4jSettings, str]]:
    assert isinstance(neo4j_settings, Neo4jSettings)
    neo4j_store.clear()
    knowledge_id = fill(neo4j_store, extractor)
    yield neo4j_settings, knowledge_id
    neo4j_store.clear()


@pytest.mark.neo4j
def test_the_neo4j_read_path_runs_read_transactions_only(filled_neo4j: tuple[Neo4jSettings, str]) -> None:
    settings, knowledge_id = filled_neo4j
    svc = ContextService.open(
        neo4j_uri=settings.uri, neo4j_user=settings.user, neo4j_password=settings.password, read_only=True
    )
    try:
        store = svc.store
        assert isinstance(store, Neo4jStore) and store.read_only
        assert not store.transactions, "opening read-only must not run the schema statements"
        assert "requireAuth" in svc.compute("t-refresh", debug=True).markdown
        svc.get_task("t-auth")
        svc.list_tasks()
        svc.get_knowledge(knowledge_id)
        svc.stats()
        assert len(list(store.export_rows())) > 10
        reads = store.transactions["read"]
        assert reads >= 6 and set(store.transactions) == {"read"}, store.transactions
        with pytest.raises(StoreUnavailableError, match="opened read-only"):
            svc.add_task({"id": "t-new", "name": "New"})
        with pytest.raises(StoreUnavailableError, match="opened read-only"):
            svc.ingest_handoff(HANDOFF.encode())
        with pytest.raises(StoreUnavailableError, match="opened read-only"):
            store.init_schema()
        assert "write" not in store.transactions and "schema" not in store.transactions
        # Below the store's guard: its sessions default to READ access and its reads
        # are read transactions; the server refuses a write in either.
        with store._session() as session:
            with pytest.raises(neo4j.exceptions.ClientError) as refused:
                session.run("CREATE (:ReadOnlyProbe)").consume()
            assert "AccessMode" in (refused.value.code or ""), refused.value.code
        with pytest.raises(neo4j.exceptions.ClientError) as refused:
            store._read(lambda tx: tx.run("CREATE (:ReadOnlyProbe)").consume())
        assert "AccessMode" in (refused.value.code or ""), refused.value.code
    finally:
        svc.close()
    writer = Neo4jStore.connect(settings)
    try:
        assert writer.stats().labels.get("ReadOnlyProbe") is None
    finally:
        writer.close()


@pytest.mark.neo4j
def test_cli_read_commands_open_neo4j_read_only(
    filled_neo4j: tuple[Neo4jSettings, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings, knowledge_id = filled_neo4j
    opened: list[Neo4jStore] = []
    connect = Neo4jStore.connect.__func__  # type: ignore[attr-defined]

    def spy(cls: type[Neo4jStore], s: Neo4jSettings, *, read_only: bool = False) -> Neo4jStore:
        store: Neo4jStore = connect(cls, s, read_only=read_only)
        opened.append(store)
        return store

    monkeypatch.setattr(Neo4jStore, "connect", classmethod(spy))
    monkeypatch.chdir(tmp_path)
    env = {
        "NEO4J_URI": settings.uri,
        "NEO4J_USER": settings.user,
        "NEO4J_PASSWORD": settings.password,
        "NEO4J_PASSWORD_FILE": None,
        "CTXGRAPH_STORE": None,
    }
    runner = CliRunner()
    for name, args in read_commands(knowledge_id).items():
        result = runner.invoke(main, args, env=env, catch_exceptions=False)
        assert result.exit_code == 0, (name, result.output)
        store = opened[-1]
        assert store.read_only and set(store.transactions) == {"read"}, (name, store.transactions)
    result = runner.invoke(main, ["task", "add", "t-new", "--name", "New"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert not opened[-1].read_only and opened[-1].transactions["write"] >= 1
    assert len(opened) == len(read_commands(knowledge_id)) + 1
    assert not (tmp_path / ".ctxgraph").exists()
