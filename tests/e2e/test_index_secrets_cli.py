"""Issue 40, as a careless user's work tree meets the CLI: secrets in config
files (named so or not), a hidden one, a dotenv JSON, a file git ignores only
through ``.git/info/exclude``, and a file name that is not UTF-8. ``init``,
``index --format json --explain``, ``context`` of a task about rotating the
API key (Markdown and JSON), ``export`` and ``index --watch`` with edits: no
command fails, no secret's value is in any output nor in the store's files.
Both stores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxgraph.graph.store import KnowledgeStore
from tests._git_repo import git

#: The values planted: none may come out.
VALUES = ("sk-live-4f9a8b7c6d5e4f3a2b1c0d9e", "Tr0ub4dor-and-3", "sk-live-hidden-77aa88bb99",
          "s3cr3t-db-pass-xyz", "sk_live_51HxYzAbCdEfGhIjKlMnOp", "sk-live-app-1234abcd5678", "hunter2-billing",
          "excluded-note-value-31337", "sk-live-watch-0ff1ce0ff1ce")
TREE = {
    "config/secrets.yaml": f"billing:\n  api_key: {VALUES[0]}\n  password: {VALUES[1]}\n",
    ".secrets.yaml": f"api_key: {VALUES[2]}\n",
    "settings.ini": f"[database]\nhost = db.internal\npassword = {VALUES[3]}\n",
    ".env.json": f'{{"STRIPE_SECRET": "{VALUES[4]}"}}\n',
    "config/app.yaml": f"billing:\n  url: https://billing.internal\n  api_key: {VALUES[5]}\n  password: {VALUES[6]}\n",
    "notes.md": f"# Notes\nThe key rotation runbook: {VALUES[7]}\n",
    "billing/rotate.py": ('"""Rotating the billing API key."""\n\n\ndef rotate_api_key(client):\n'
                          '    """Rotate the billing API key and revoke the old one."""\n'
                          '    new = client.create_key()\n    client.revoke_old()\n    return new\n'),
}
TASK = ("id: t-rotate\nname: Rotate the billing API key\nobjective: Rotate the api_key and password of the "
        "billing service (config secrets, settings.ini, the env json, app.yaml) and revoke the old key\n")
ODD = b"caf\xe9.py"


def work_tree(root: Path) -> Path:
    for name, text in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    try:
        with open(os.path.join(os.fsencode(root), ODD), "w", encoding="utf-8") as handle:
            handle.write("def cafe_api_key():\n    return 'rotate the key'\n")
    except OSError as exc:
        pytest.skip(f"no name that is not UTF-8 here: {exc}")
    git(root, "init", "-q")
    (root / ".git" / "info" / "exclude").write_text("notes.md\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a careless tree")
    return root


def run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    proc = subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, capture_output=True, text=True,
                          env={**inherited, **env}, timeout=600, check=False)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    assert not leaked(proc.stdout + proc.stderr), (args, leaked(proc.stdout + proc.stderr))
    return proc


def leaked(text: str | bytes) -> list[str]:
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    return [v for v in VALUES if v.encode() in data]


@pytest.fixture(params=["local", "neo4j"])
def target(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The environment naming the store: the work tree's own embedded store, or Neo4j."""
    if request.param == "local":
        yield {}
        return
    from ctxgraph.graph.neo4j_store import Neo4jSettings

    settings = request.getfixturevalue("neo4j_settings")
    shared: KnowledgeStore = request.getfixturevalue("neo4j_store")
    assert isinstance(settings, Neo4jSettings)
    shared.clear()  # type: ignore[attr-defined]
    yield {"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user, "NEO4J_PASSWORD": settings.password or ""}
    shared.clear()  # type: ignore[attr-defined]


def test_no_secret_reaches_an_output_or_the_store(tmp_path: Path, target: dict[str, str]) -> None:
    tree = work_tree(tmp_path / "billing-repo")
    init = run("init", "-q", cwd=tree, env=target)
    assert "ready: " in init.stdout and "skipped: 3 secret file (by name)" in init.stdout, init.stdout

    report = json.loads(run("index", ".", "-q", "--explain", "--format", "json", cwd=tree, env=target).stdout)
    left = {s["path"]: s["reason"] for s in report["skipped"]}
    assert left == {"config/secrets.yaml": "secret file (by name): *secret*",
                    ".secrets.yaml": "secret file (by name): *secret*",
                    ".env.json": "secret file (by name): .env.*"}
    assert report["redacted"] == {"config/app.yaml": 2, "settings.ini": 1} and report["explained"]
    assert report["files"] == 4 and report["indexed"] == 0  # read again, nothing changed: nothing rewritten
    text = run("index", ".", "-q", "--explain", cwd=tree, env=target).stdout
    assert "  config/app.yaml: 2" in text and "  .env.json: secret file (by name): .env.*" in text

    task = tmp_path / "task.yaml"
    task.write_text(TASK, encoding="utf-8")
    context = json.loads(run("context", "--task-file", str(task), "--format", "json", cwd=tree, env=target).stdout)
    shown = {r["file"] for r in context["code_references"]} | {s["path"] for s in context["codebase_context"]}
    assert "billing/rotate.py" in shown and not shown & {*left, "notes.md"}
    markdown = run("context", "--task-file", str(task), "--debug", cwd=tree, env=target).stdout
    assert "## Context Debug" in markdown
    exported = run("export", "-", cwd=tree, env=target).stdout
    assert "[redacted]" in exported and "caf%E9.py" in exported  # JSON of the escaped key
    if not target:
        store_files = list((tree / ".ctxgraph").iterdir())
        assert store_files and not [(p.name, leaked(p.read_bytes())) for p in store_files if leaked(p.read_bytes())]


def test_watch_indexes_edits_and_odd_names_without_a_secret(tmp_path: Path) -> None:
    tree = work_tree(tmp_path / "watched")
    store = ["--store", str(tmp_path / "graph.db")]
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    proc = subprocess.Popen([sys.executable, "-m", "ctxgraph", "index", str(tree), *store, "--watch",
                             "--no-embeddings", "--format", "json", "-q"], cwd=tmp_path, env=inherited,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert "caf%E9.py" in first["added"] and first["redacted"] == {"config/app.yaml": 2, "settings.ini": 1}
        with open(os.path.join(os.fsencode(tree), b"na\xefve.yaml"), "w", encoding="utf-8") as handle:
            handle.write(f"api_key: {VALUES[8]}\n")
        (tree / ".env").write_text(f"API_KEY={VALUES[8]}\n", encoding="utf-8")
        deadline = time.monotonic() + 60
        runs = []
        while time.monotonic() < deadline and not any("na%EFve.yaml" in r["added"] for r in runs):
            runs.append(json.loads(proc.stdout.readline()))
        added = [r for r in runs if "na%EFve.yaml" in r["added"]]
        assert added and added[0]["redacted"]["na%EFve.yaml"] == 1
        assert {"path": ".env", "reason": "secret file (by name): .env"} in added[0]["skipped"]
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=60)
    assert not leaked(out + err)
    assert not leaked((tmp_path / "graph.db").read_bytes())


def test_init_stopped_while_indexing_keeps_its_store(tmp_path: Path) -> None:
    """Ctrl-C (or an unexpected error) during init's index: the store, made and
    initialized, stays; the next command uses it."""
    tree = tmp_path / "big"
    (tree / "pkg").mkdir(parents=True)
    for i in range(20):  # under one batch of full text first: nothing is written before the vectors
        (tree / "pkg" / f"mod{i:02d}.py").write_text("".join(f"def f{i}_{j}(x):\n    return x * {j}\n\n"
                                                             for j in range(60)), encoding="utf-8")
    git(tree, "init", "-q")
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    proc = subprocess.Popen([sys.executable, "-m", "ctxgraph", "init"], cwd=tree, env=inherited,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("ready: ")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert (tree / ".ctxgraph" / "graph.db").is_file(), (out, err)
    run("index", ".", "-q", "--no-embeddings", cwd=tree, env={})
    listed = json.loads(run("index", "--list", "--format", "json", cwd=tree, env={}).stdout)
    assert [(p["id"], p["files"]) for p in listed] == [("big", 20)]
