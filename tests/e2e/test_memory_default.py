"""Issue 31's first acceptance line: in a git work tree, `ctxgraph init` and then
a context of a task naming a function shows that function's file, with no
`ctxgraph index` typed. Both stores; the installed `ctxgraph` console script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgraph.graph.store import KnowledgeStore

BILLING = '''"""Invoices."""


def compute_invoice_total(lines, tax_rate):
    """Sum the invoice lines and add the tax."""
    subtotal = sum(line.amount for line in lines)
    return subtotal * (1 + tax_rate)
'''

USERS = '''"""Accounts."""


def normalize_email(address):
    """Lower-case an e-mail address and strip its spaces."""
    return address.strip().lower()
'''

OTHER = '''def render_sidebar(widgets):
    """Draw the sidebar's widgets."""
    return [w.draw() for w in widgets]
'''


def ctxgraph(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("ctxgraph")  # the installed console script
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    proc = subprocess.run([str(script), *args], cwd=cwd, capture_output=True, text=True,
                          env={**full_env, **(env or {})}, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def work_tree(folder: Path) -> Path:
    (folder / "shop").mkdir(parents=True)
    (folder / "shop" / "billing.py").write_text(BILLING, encoding="utf-8")
    (folder / "shop" / "users.py").write_text(USERS, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def files_shown(context: dict[str, object]) -> set[str]:
    """The files a context names: its code references and its code snippets
    (a file shown as a snippet takes the place of its code reference)."""
    refs = context["code_references"]
    snippets = context["codebase_context"]
    assert isinstance(refs, list) and isinstance(snippets, list)
    return {r["file"] for r in refs} | {s["path"] for s in snippets}


TASK = "id: t-tax\nname: Fix the tax rounding\nobjective: compute_invoice_total rounds the tax wrong for fractional cents\n"


def first_context(tree: Path, env: dict[str, str]) -> dict[str, object]:
    init = ctxgraph("init", cwd=tree, env=env)
    assert "ready: " in init.stdout and f"project {tree.name} ({tree.resolve()})" in init.stdout, init.stdout
    assert "indexing " in init.stderr  # the progress line of `ctxgraph index`
    task = tree.parent / "task.yaml"  # outside the work tree: not indexed itself
    task.write_text(TASK, encoding="utf-8")
    out = ctxgraph("context", "--task-file", str(task), "--format", "json", cwd=tree, env=env)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def elsewhere(tmp_path: Path) -> Path:
    """Another project, indexed before: the context must pick the root's, not give up."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "ui.py").write_text(OTHER, encoding="utf-8")
    return other


def test_init_in_a_git_work_tree_indexes_it_for_the_contexts(tmp_path: Path) -> None:
    tree = work_tree(tmp_path / "shop-repo")
    ctxgraph("index", str(elsewhere(tmp_path)), "--no-embeddings", "-q", cwd=tree)
    context = first_context(tree, {})
    assert "shop/billing.py" in files_shown(context)
    memory = context["_computed"]["memory"]  # type: ignore[index]
    assert f"project shop-repo, the root's: {tree.resolve()} (git work tree)" in memory
    assert (tree / ".ctxgraph" / "graph.db").is_file()

    # `memory = false` in the settings turns it off (and says so); --memory turns it back on.
    (tree / "ctxgraph.toml").write_text("memory = false\n", encoding="utf-8")
    task = ["--task-file", str(tmp_path / "task.yaml"), "--format", "json"]
    off = json.loads(ctxgraph("context", *task, cwd=tree).stdout)
    assert off["_computed"]["memory"] == "associative memory off: memory = false in the settings"
    assert "shop/billing.py" not in files_shown(off)
    on = json.loads(ctxgraph("context", *task, "--memory", cwd=tree).stdout)
    assert "shop/billing.py" in files_shown(on)


def test_init_with_neo4j_indexes_the_work_tree_around_the_current_folder(
        tmp_path: Path, neo4j_settings: object, neo4j_store: KnowledgeStore) -> None:
    from ctxgraph.graph.neo4j_store import Neo4jSettings
    from ctxgraph.memory.index import index_project

    assert isinstance(neo4j_settings, Neo4jSettings)
    neo4j_store.clear()  # type: ignore[attr-defined]
    env = {"NEO4J_URI": neo4j_settings.uri, "NEO4J_USER": neo4j_settings.user,
           "NEO4J_PASSWORD": neo4j_settings.password or ""}
    tree = work_tree(tmp_path / "shop-neo")
    try:
        index_project(neo4j_store, elsewhere(tmp_path), embeddings=False)
        context = first_context(tree, env)
        assert "shop/billing.py" in files_shown(context)
        assert "the root's: " in context["_computed"]["memory"]  # type: ignore[index]
        assert not (tree / ".ctxgraph").exists(), "--neo4j must not touch the embedded store"
    finally:
        neo4j_store.clear()  # type: ignore[attr-defined]


def test_init_without_a_root_says_so_and_no_index_skips(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    proc = ctxgraph("init", "--store", str(bare / "g.db"), cwd=bare)
    assert proc.stdout == f"ready: {bare / 'g.db'}\n"
    assert "no project root known" in proc.stderr
    tree = work_tree(tmp_path / "t")
    skipped = ctxgraph("init", "--no-index", "--no-history", "--no-knowledge", cwd=tree)
    assert skipped.stdout == "ready: .ctxgraph/graph.db\n"
    assert skipped.stderr == "ctxgraph: note: wrote .ctxgraph/.gitignore: git ignores the store's folder\n"
    # the index alone skipped: the history (none yet, wanted) and the code's notes still read
    again = ctxgraph("init", "--no-index", cwd=tree)
    assert re.sub(r"\(\d+\.\d s\)", "(S)", again.stdout).splitlines()[1:] == [
        "history: no commits yet (sync and the post-commit hook import them as they land)",
        "knowledge: 0 decisions from ADRs, 0 gotchas from code notes; 0 written, 0 removed (S)"], again.stdout


@pytest.mark.parametrize("flag", ["--root"])
def test_init_root_option_indexes_that_folder(tmp_path: Path, flag: str) -> None:
    tree = tmp_path / "plain"
    (tree / "shop").mkdir(parents=True)
    (tree / "shop" / "billing.py").write_text(BILLING, encoding="utf-8")
    proc = ctxgraph("init", "--store", str(tmp_path / "g.db"), flag, str(tree), "--no-embeddings", "-q",
                    cwd=tmp_path)
    assert f"project plain ({tree.resolve()}), lightweight (no embeddings): 1 files" in proc.stdout
    assert proc.stderr == ""


def test_init_without_the_model_makes_the_lightweight_index_and_says_so(tmp_path: Path) -> None:
    from test_model_missing import HIDE_MODEL

    from ctxgraph.memory.embed import MODEL_INSTALL

    tree = work_tree(tmp_path / "light")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}

    def hidden(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-c", HIDE_MODEL, *args], cwd=tree, text=True, capture_output=True,
                              env=env, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        return proc

    init = hidden("init", "-q")
    assert f"project light ({tree.resolve()}), lightweight (no embeddings): 2 files" in init.stdout
    (warning,) = [line for line in init.stderr.splitlines() if line.startswith("ctxgraph: warning:")]
    assert MODEL_INSTALL in warning and "lightweight index" in warning and f"ctxgraph index {tree.resolve()}" in warning
    (tmp_path / "task.yaml").write_text(TASK, encoding="utf-8")
    context = json.loads(hidden("context", "--task-file", str(tmp_path / "task.yaml"), "--format", "json").stdout)
    # Searched by full text (on two files the match's BM25 is under memory_min_bm25: no file added).
    assert context["_computed"]["memory"].startswith("project light: 0 vector and 1 full-text matches")
