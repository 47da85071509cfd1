"""The CLI, run for real as a subprocess (`python -m ctxgraph`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HANDOFF = """\
task_id: t-auth
summary: Added JWT validation middleware
success: true
completed_at: "2026-03-01T10:00:00Z"
files_created: [{path: src/auth/jwt.ts, purpose: JWT verify helper}]
dependencies_for_next: [{file: src/auth/jwt.ts, reason: reuse verify()}]
patterns_discovered: [{pattern: Wrap handlers with requireAuth(), applies_to: [auth, api], location: src/auth/middleware.ts}]
gotchas: [{issue: Clock skew breaks exp checks, severity: high, applies_to: [jwt]}]
open_questions: [{question: "Rotate keys how?", blocking: true}]
"""


def run(*args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "ctxgraph", *args], cwd=cwd, input=stdin, text=True,
        capture_output=True, env=full_env, timeout=120,
    )


def ok(*args: str, cwd: Path, stdin: str | None = None) -> str:
    proc = run(*args, cwd=cwd, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def fails(code: int, *args: str, cwd: Path, stdin: str | None = None,
          env: dict[str, str] | None = None) -> str:
    proc = run(*args, cwd=cwd, stdin=stdin, env=env)
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("ctxgraph: error: ")
    return lines[0]


@pytest.fixture(scope="module")
def made_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a store holding two tasks and one handoff (default store path), made once by the CLI."""
    folder = tmp_path_factory.mktemp("project")
    ok("task", "add", "t-auth", "--name", "Add JWT validation middleware",
       "--objective", "Verify JWT tokens on api routes", cwd=folder)
    ok("task", "add", "t-refresh", "--name", "Refresh tokens", "--objective",
       "Rotate the JWT on login refresh", "--depends-on", "t-auth", cwd=folder)
    (folder / "h.yaml").write_text(HANDOFF)
    ok("ingest", "handoff", "h.yaml", cwd=folder)
    return folder


@pytest.fixture
def project(made_project: Path, tmp_path: Path) -> Path:
    """A copy of that folder of the test's own (no process has the store open between commands)."""
    shutil.copytree(made_project, tmp_path, dirs_exist_ok=True)
    return tmp_path


def test_help_documents_every_command(tmp_path: Path) -> None:
    out = ok("--help", cwd=tmp_path)
    for name in ("init", "task", "depend", "ingest", "context", "stats", "demo", "knowledge", "eval", "export",
                 "import"):
        assert name in out
    for sub in (["task", "add"], ["task", "show"], ["task", "list"], ["task", "block"],
                ["ingest", "handoff"], ["ingest", "tasks"], ["ingest", "context-map"], ["context"],
                ["stats"], ["demo"], ["init"], ["depend"], ["knowledge", "add"], ["knowledge", "revise"],
                ["knowledge", "show"], ["export"], ["import"]):
        text = ok(*sub, "--help", cwd=tmp_path)
        assert "--help" in text and "Usage:" in text
        if sub[0] not in ("demo",):
            assert "--neo4j" in text and "--store" in text


def test_demo_prints_a_context(tmp_path: Path) -> None:
    proc = run("demo", "--store", str(tmp_path / "demo.db"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## Context (Computed)")
    assert "### Prior Work" in proc.stdout
    assert "Loaded" in proc.stderr


def test_context_markdown_and_json(project: Path) -> None:
    md = ok("context", "t-refresh", cwd=project)
    assert "Wrap handlers with requireAuth()" in md
    assert "Rotate keys how?" in md
    data = json.loads(ok("context", "t-refresh", "--format", "json", "--complexity", "easy", cwd=project))
    assert data["task_id"] == "t-refresh"
    assert data["_computed"]["complexity"] == "easy"
    assert data["_computed"]["dependency_count"] == 1
    assert data["markdown"].startswith("## Context (Computed)")
    debug = ok("context", "t-refresh", "--debug", cwd=project)
    assert "## Context Debug" in debug
    env_debug = run("context", "t-refresh", cwd=project, env={"CTXGRAPH_DEBUG_CONTEXT": "true"})
    assert "## Context Debug" in env_debug.stdout


def test_user_template(project: Path) -> None:
    (project / "t.j2").write_text("{{ ctx.task_id }} has {{ ctx.prior_work | length }} prior tasks\n")
    assert ok("context", "t-refresh", "--template", "t.j2", cwd=project) == "t-refresh has 1 prior tasks\n"
    (project / "bad.j2").write_text("{% if %}")
    assert "template" in fails(2, "context", "t-refresh", "--template", "bad.j2", cwd=project)


def test_read_commands_json(project: Path) -> None:
    shown = json.loads(ok("task", "show", "t-auth", "--format", "json", cwd=project))
    assert shown["status"] == "completed" and shown["success"] is True
    listed = json.loads(ok("task", "list", "--format", "json", cwd=project))
    assert [t["id"] for t in listed] == ["t-auth", "t-refresh"]
    stats = json.loads(ok("stats", "--format", "json", cwd=project))
    assert stats["labels"]["Task"] == 2 and stats["relationships"]["DEPENDS_ON"] == 1
    assert "t-auth\tcompleted" in ok("task", "list", cwd=project)
    assert "depends on: t-auth" in ok("task", "show", "t-refresh", cwd=project)


def test_ingest_is_idempotent_and_reads_stdin_and_folders(project: Path) -> None:
    assert "0 written, 1 unchanged" in ok("ingest", "handoff", "-", cwd=project, stdin=HANDOFF)
    folder = project / "handoffs"
    folder.mkdir()
    (folder / "a.yaml").write_text(HANDOFF.replace("t-auth", "t-refresh"))
    assert "1 written, 0 unchanged" in ok("ingest", "handoff", str(folder), cwd=project)


def test_bad_inputs_give_one_line_and_nonzero_exit(project: Path) -> None:
    before = ok("stats", "--format", "json", cwd=project)
    assert "unknown task: 'nope'" in fails(3, "context", "nope", cwd=project)
    (project / "bad.yaml").write_text("task_id: t-refresh\nsummary: s\ngotchas: [{issue: x, severity: 9}]\n")
    line = fails(2, "ingest", "handoff", "h.yaml", "bad.yaml", cwd=project)
    assert "bad.yaml" in line and "gotchas[0].severity" in line
    (project / "bin.yaml").write_bytes(b"\x00\x01\x02binary")
    assert "binary" in fails(2, "ingest", "handoff", "bin.yaml", cwd=project)
    assert "no such file" in fails(2, "ingest", "handoff", "missing.yaml", cwd=project)
    assert "cycle" in fails(4, "depend", "t-auth", "t-refresh", cwd=project)
    assert "unknown task" in fails(3, "task", "add", "x", "--depends-on", "ghost", cwd=project)
    (project / "orphan.yaml").write_text(HANDOFF.replace("t-auth", "ghost"))
    assert "orphan.yaml: unknown task: 'ghost'" in fails(3, "ingest", "handoff", "orphan.yaml", cwd=project)
    assert ok("stats", "--format", "json", cwd=project) == before


def test_server_down_is_one_clear_line(tmp_path: Path) -> None:
    line = fails(5, "stats", "--neo4j", "bolt://127.0.0.1:9", cwd=tmp_path,
                 env={"NEO4J_PASSWORD": "irrelevant"})
    assert "cannot reach Neo4j at bolt://127.0.0.1:9" in line
    assert "irrelevant" not in line
    assert "unsupported Neo4j URI scheme" in fails(2, "stats", "--neo4j", "http://x", cwd=tmp_path)


def test_block_and_verbose_traceback(project: Path) -> None:
    ok("task", "block", "t-refresh", "--reason", "waiting on keys", cwd=project)
    assert 't-refresh: "waiting on keys"' in ok("context", "t-auth", cwd=project)
    proc = run("--verbose", "context", "nope", cwd=project)
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_cli_on_neo4j(neo4j_settings: object, neo4j_store: object, tmp_path: Path) -> None:
    """The same commands against the real server; a wrong password is one clear line."""
    from ctxgraph.graph.neo4j_store import Neo4jSettings

    assert isinstance(neo4j_settings, Neo4jSettings)
    neo4j_store.clear()  # type: ignore[attr-defined]
    env = {"NEO4J_URI": neo4j_settings.uri, "NEO4J_USER": neo4j_settings.user,
           "NEO4J_PASSWORD": neo4j_settings.password or ""}
    (tmp_path / "h.yaml").write_text(HANDOFF)
    steps = [
        ["task", "add", "t-auth", "--objective", "Verify JWT tokens on api routes"],
        ["task", "add", "t-refresh", "--objective", "Rotate the JWT on login", "--depends-on", "t-auth"],
        ["ingest", "handoff", "h.yaml"],
    ]
    for step in steps:
        proc = run(*step, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
    proc = run("context", "t-refresh", "--format", "json", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["prior_work"][0]["task_id"] == "t-auth"
    assert not (tmp_path / ".ctxgraph").exists(), "--neo4j must not touch the embedded store"
    wrong = dict(env, NEO4J_PASSWORD="definitely-wrong")
    line = fails(5, "stats", cwd=tmp_path, env=wrong)
    assert "refused the credentials" in line and "definitely-wrong" not in line
    neo4j_store.clear()  # type: ignore[attr-defined]


def test_budget_strategy_and_explain(project: Path) -> None:
    data = json.loads(ok("context", "t-refresh", "--format", "json", "--budget", "400", "--strategy", "important",
                         "--explain", cwd=project))
    assert data["budget"] == 400 and 0 < data["tokens"] <= 400
    assert data["_computed"]["strategy"] == "important"
    fates = {e["id"]: (e["fate"], e["reason"]) for e in data["explain"]}
    assert fates["prior:t-auth"][0] in ("kept", "compressed")
    text = ok("context", "t-refresh", "--explain", cwd=project)
    assert "## Explain (" in text and "| fate | reason | section |" in text
    line = fails(6, "context", "t-refresh", "--budget", "20", cwd=project)
    assert "never compressed" in line and "budget is 20" in line


def test_settings_file_sets_the_strategy_and_budget(project: Path) -> None:
    (project / "ctxgraph.toml").write_text('strategy = "recent"\nbudget = 900\n')
    data = json.loads(ok("context", "t-refresh", "--format", "json", cwd=project))
    assert (data["_computed"]["strategy"], data["budget"]) == ("recent", 900)
    (project / "ctxgraph.toml").write_text('strategy = "fastest"\n')
    assert "ctxgraph.toml: invalid settings: strategy" in fails(2, "context", "t-refresh", cwd=project)


def test_knowledge_add_revise_show(project: Path) -> None:
    added = json.loads(ok("knowledge", "add", "decision", "Sign JWT with HS256", "--tag", "jwt",
                          "--rationale", "single service", "--format", "json", cwd=project))
    revised = ok("knowledge", "revise", added["id"], "Sign JWT with RS256", cwd=project)
    assert f"chain {added['id']} v2" in revised
    shown = json.loads(ok("knowledge", "show", added["id"], "--format", "json", cwd=project))
    assert shown["status"] == "superseded"
    md = ok("context", "t-refresh", cwd=project)
    decisions = md.split("### Relevant Decisions")[1].split("###")[0]
    assert decisions.strip() == "- Sign JWT with RS256 — single service (replaces: Sign JWT with HS256)"
    assert "unknown knowledge id" in fails(1, "knowledge", "revise", "nope", "x", cwd=project)


def test_task_file_and_a_store_that_is_down(project: Path) -> None:
    (project / "task.yaml").write_text("id: adhoc\nname: Rotate JWT\nobjective: Rotate the JWT on login\n"
                                       "depends_on: [t-auth]\n")
    md = ok("context", "--task-file", "task.yaml", cwd=project)
    assert "Wrap handlers with requireAuth()" in md  # the stored dependency's knowledge
    proc = run("context", "--task-file", "task.yaml", "--debug", "--neo4j", "bolt://127.0.0.1:9", cwd=project,
               env={"NEO4J_PASSWORD": "x"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## Context (Computed)") and "dependency handoffs" in proc.stdout
    assert proc.stderr.count("ctxgraph: warning:") == 1 and "Traceback" not in proc.stderr
    assert "one of them" in fails(2, "context", cwd=project)


def test_finished_tasks_are_embedded_once(tmp_path: Path) -> None:
    ok("task", "add", "t-auth", "--name", "Add JWT validation middleware", cwd=tmp_path)
    ok("task", "add", "t-refresh", "--name", "Refresh tokens", "--depends-on", "t-auth", cwd=tmp_path)
    (tmp_path / "h.yaml").write_text(HANDOFF)
    assert "embedded" not in ok("ingest", "handoff", "h.yaml", "--no-embed", cwd=tmp_path)
    first = json.loads(ok("embed-tasks", "--format", "json", cwd=tmp_path))
    assert first == {"embedded": 1, "tasks_with_vectors": 1}  # t-auth is finished, t-refresh is not
    again = json.loads(ok("embed-tasks", "--format", "json", cwd=tmp_path))
    assert again == {"embedded": 0, "tasks_with_vectors": 1}
    # A context computed now embeds its own text without a complaint.
    out = ok("context", "t-refresh", "--debug", cwd=tmp_path)
    assert "embedding the task failed" not in out


def test_index_watch_embeds_the_finished_tasks_without_vectors(tmp_path: Path) -> None:
    ok("task", "add", "t-auth", "--name", "Add JWT validation middleware", cwd=tmp_path)
    (tmp_path / "h.yaml").write_text(HANDOFF)
    ok("ingest", "handoff", "h.yaml", "--no-embed", cwd=tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "auth.py").write_text('def require_auth(handler):\n    """Check the JWT."""\n')
    out = ok("index", "src", "--watch", "--max-runs", "2", "--interval", "0.2", "--format", "json", cwd=tmp_path)
    first, second = (json.loads(line) for line in out.splitlines())  # JSON Lines: one report a run
    assert first["complete"] and first["tasks_embedded"] == 1 and second["tasks_embedded"] == 0
    assert json.loads(ok("embed-tasks", "--format", "json", cwd=tmp_path))["embedded"] == 0
    # Without embeddings the watcher leaves task vectors alone (no model needed).
    text = ok("index", "src", "--watch", "--max-runs", "1", "--no-embeddings", cwd=tmp_path)
    assert "embedded" not in text


def test_ingest_embeds_the_tasks_it_finished(tmp_path: Path) -> None:
    ok("task", "add", "t-auth", "--name", "Add JWT validation middleware", cwd=tmp_path)
    (tmp_path / "h.yaml").write_text(HANDOFF)
    assert "1 written, 0 unchanged; 1 task embedded" in ok("ingest", "handoff", "h.yaml", cwd=tmp_path)
    assert json.loads(ok("embed-tasks", "--format", "json", cwd=tmp_path))["embedded"] == 0
