"""The project's past at ``init`` and kept current (issue 44): ``init`` in a
git work tree imports its commits as finished tasks and its code's notes as
gotchas; ``sync`` imports the commits that landed since, retires one amended
away and reads a changed note again; ``init --no-history`` leaves the graph
without a history that ``sync`` would bring in; ``ctxgraph mcp`` imports a new
commit in the background. Real CLI processes, real git."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from _mcp_client import clean_env, stdio

from tests._sessions import session_env


def git(root: Path, *args: str, date: str = "2026-03-01T09:00:00Z") -> str:
    env = {**session_env(), "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def repo(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "billing.py").write_text(
        "def total(lines):\n    # WARNING: amounts are rounded per line, never on the total\n"
        "    return sum(round(x, 2) for x in lines)\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Compute invoice totals from their lines")
    (root / "src" / "tax.py").write_text("def tax(total, rate):\n    return total * rate\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Add the tax of an invoice", date="2026-03-02T09:00:00Z")
    return root


def commit_id(root: Path, rev: str = "HEAD") -> str:
    return "c-" + git(root, "rev-parse", rev)[:10]


def run(root: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(["python", "-m", "ctxgraph", *args], cwd=root, env=clean_env(env), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])
    return proc.stdout


def tasks(root: Path, env: dict[str, str]) -> dict[str, str]:
    listed = json.loads(run(root, env, "task", "list", "--format", "json"))
    return {t["id"]: t["status"] for t in listed}


def test_init_imports_the_past_and_sync_keeps_it_current(tmp_path: Path, store_env: dict[str, str]) -> None:
    root = repo(tmp_path / "shop")
    where = ["--root", str(root)] if store_env else []
    out = run(root, store_env, "init", "--no-index", *where)
    assert "history: 2 commits imported as finished tasks" in out
    assert "knowledge: 0 decisions from ADRs, 1 gotcha from code notes" in out
    assert "tasks: 2 embedded for the neighbours by meaning (" in out and out.rstrip().endswith("; complete")
    first, second = commit_id(root, "HEAD~1"), commit_id(root)
    assert tasks(root, store_env) == {first: "completed", second: "completed"}
    run(root, store_env, "task", "add", "t-vat", "--name", "Round the VAT of invoice totals",
        "--objective", "The tax of an invoice total is rounded per line")
    context = run(root, store_env, "context", "t-vat", *where)
    assert "amounts are rounded per line" in context and second in context, context

    # a new commit, then the last one amended: sync imports the one, retires the other
    (root / "src" / "tax.py").write_text("def tax(total, rate):\n    return round(total * rate, 2)\n",
                                         encoding="utf-8")
    git(root, "commit", "-qam", "Round the tax", date="2026-03-03T09:00:00Z")
    third = commit_id(root)
    synced = run(root, store_env, "sync", *where)
    assert "history: 1 commit imported as finished tasks" in synced, synced
    assert "tasks: 1 embedded for the neighbours by meaning (" in synced, synced
    git(root, "commit", "-q", "--amend", "-m", "Round the tax to cents", date="2026-03-03T10:00:00Z")
    amended = commit_id(root)
    (root / "src" / "billing.py").write_text("def total(lines):\n    return sum(lines)\n", encoding="utf-8")
    report = json.loads(run(root, store_env, "sync", "--format", "json", *where))
    assert report["past"]["history"]["imported"] == 1 and report["past"]["history"]["retired"] == 1, report
    assert report["past"]["knowledge"]["removed"] == 1, report  # the note's line is gone
    assert tasks(root, store_env) == {first: "completed", second: "completed", third: "retired",
                                      amended: "completed", "t-vat": "pending"}
    context = run(root, store_env, "context", "t-vat", *where)
    assert "amounts are rounded per line" not in context and third not in context, context


def test_init_no_history_stays_without_one(tmp_path: Path) -> None:
    root = repo(tmp_path / "shop")
    out = run(root, {}, "init", "--no-index", "--no-history", "--no-knowledge")
    assert "history:" not in out and "knowledge:" not in out
    git(root, "commit", "-q", "--allow-empty", "-m", "Nothing")
    synced = run(root, {}, "sync")
    assert "history:" not in synced and "knowledge:" not in synced
    assert tasks(root, {}) == {}
    imported = run(root, {}, "history", "import")  # asked for: from then on kept current
    assert "3 commits read" in imported or "imported" in imported, imported
    assert len(tasks(root, {})) == 2  # the empty commit names no file: skipped (no-files)


def test_mcp_imports_a_new_commit_in_the_background(tmp_path: Path) -> None:
    root = repo(tmp_path / "shop")
    out = run(root, {}, "init", "--no-index", "--no-embeddings")  # the tasks left to embed: the server does
    assert "tasks:" not in out
    with (tmp_path / "server.log").open("w", encoding="utf-8") as errlog:
        c = stdio(["--root", str(root)], cwd=root, env=clean_env(), errlog=errlog)
        try:
            (root / "src" / "tax.py").write_text("def tax(total, rate):\n    return total * rate / 100\n",
                                                 encoding="utf-8")
            git(root, "commit", "-qam", "Rates are percentages", date="2026-03-04T09:00:00Z")
            new = commit_id(root)
            found: dict[str, Any] = {}
            deadline = time.monotonic() + 90  # the server looks every 10 s; this only bounds a hang
            while time.monotonic() < deadline:
                result = c.call("get_task", {"task_id": new})
                if not result.is_error:
                    found = result.structured_content or {}
                    break
                time.sleep(0.5)
            assert found, (tmp_path / "server.log").read_text(encoding="utf-8")
            retired = c.call("list_tasks", {"status": "retired"})  # the imported commits rewritten away
            assert not retired.is_error and (retired.structured_content or {})["total"] == 0
        finally:
            c.close()
    log = (tmp_path / "server.log").read_text(encoding="utf-8")
    assert "history: 1 commit imported" in log
    assert "tasks: 2 embedded for the neighbours by meaning (" in log, log  # init's, in the background


def listed(root: Path, env: dict[str, str], *store: str) -> dict[str, str]:
    found = json.loads(run(root, env, "task", "list", "--format", "json", *store))
    return {t["id"]: t["status"] for t in found if t["status"] != "retired"}


def test_rewrites_between_syncs_leave_what_a_clean_import_makes(tmp_path: Path) -> None:
    """Amend, rebase and reset between syncs, then two syncs at once: the tasks
    shown and a context are those of a clean import of the final history."""
    root = repo(tmp_path / "shop")
    run(root, {}, "init", "--no-index", "--no-knowledge")
    for n, name in enumerate(("Bill in euros", "Bill in dollars", "Bill in yen"), start=3):
        (root / "src" / f"currency{n}.py").write_text(f"RATE = {n}\n", encoding="utf-8")
        git(root, "add", "-A")
        git(root, "commit", "-qm", name, date=f"2026-03-0{n}T09:00:00Z")
    run(root, {}, "sync")
    git(root, "commit", "-q", "--amend", "-m", "Bill in yen, rounded", date="2026-03-06T09:00:00Z")
    run(root, {}, "sync")
    # rebase: the last two commits moved onto a new one on main
    git(root, "checkout", "-q", "-b", "side", "HEAD~2")
    (root / "src" / "vat.py").write_text("VAT = 0.2\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Add the VAT rate", date="2026-03-07T09:00:00Z")
    git(root, "checkout", "-q", "main")
    git(root, "rebase", "-q", "side")
    run(root, {}, "sync")
    git(root, "reset", "-q", "--hard", "HEAD~1")
    (root / "src" / "late.py").write_text("LATE = 1\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Charge late fees", date="2026-03-08T09:00:00Z")
    procs = [subprocess.Popen(["python", "-m", "ctxgraph", "sync", "-q"], cwd=root, env=clean_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    clean = ["--store", str(tmp_path / "clean.db")]
    run(root, {}, "init", "--no-index", "--no-knowledge", "--root", str(root), *clean)
    assert listed(root, {}) == listed(root, {}, *clean)
    assert len(listed(root, {})) == int(git(root, "rev-list", "--count", "HEAD"))
    for store in ([], clean):
        run(root, {}, "task", "add", "t-fees", "--name", "Bill late fees in euros", "--objective",
            "Late fees are charged in euros with the VAT rate", *store)
    assert run(root, {}, "context", "t-fees") == run(root, {}, "context", "t-fees", "--root", str(root), *clean)
