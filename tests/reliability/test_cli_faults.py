"""The real CLI on hostile files: `ctxgraph ingest handoff` and `ctxgraph
import` exit 2 with exactly one `ctxgraph: error:` line on stderr, no
traceback, and write nothing. Export/import round-trip through the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _reliability import FUZZ_CASES

from ctxgraph.graph.local import LocalStore

#: Runs the CLI with export/import registered (a no-op once ctxgraph.cli registers them).
SHIM = (
    "from ctxgraph.cli import main\n"
    "from ctxgraph.cli._backup import export_command, import_command\n"
    "for c in (export_command, import_command):\n"
    "    main.commands.get(c.name) or main.add_command(c)\n"
    "main()\n"
)

HANDOFFS: dict[str, bytes] = {
    "binary.yaml": bytes(range(256)) * 64,
    "elf.json": b"\x7fELF\x02\x01\x01" + bytes(range(1, 256)) * 16,
    "ten-megabytes.yaml": b"task_id: t1\nsummary: " + b"x" * (10 * 1024 * 1024),
    "latin-1.yaml": "task_id: t1\nsummary: café crème\n".encode("latin-1"),
    "alias-bomb.yaml": (
        "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))
        + "task_id: t1\nsummary: bomb\n"
    ).encode(),
    "merge-bomb.yaml": (
        "m0: &m0 {k: v}\n"
        + "".join(f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}\n" for i in range(1, 40))
        + "task_id: t1\nsummary: bomb\n"
    ).encode(),
    "recursive.yaml": b"task_id: t1\nsummary: s\nx: &x [*x]\n",
    "deep.json": b'{"task_id": "t1", "summary": "s", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "deep-block.yaml": b"task_id: t1\nsummary: s\nx:\n" + b"".join(b"  " * i + b"- \n" for i in range(1, 3000)),
    "surrogate.yaml": b'task_id: t1\nsummary: "\\ud800"\n',
    "big-int.yaml": b"task_id: t1\nsummary: s\nn: " + b"9" * 20_000 + b"\n",
    "bad-date.yaml": b"task_id: t1\nsummary: s\ncompleted_at: 2026-02-30\n",
    "int-date.yaml": b"task_id: t1\nsummary: s\ncompleted_at: 1700000000\n",
    "odd-keys.yaml": b"task_id: t1\nsummary: s\nx: {2026-01-01: a, 1: b}\n",
    "long-word.yaml": b"task_id: t1\nsummary: s\npatterns_discovered: [{pattern: " + b"z" * 5000 + b"}]\n",
    "newline-in-key.json": b'{"task_id": "t1", "summary": "s", "x": {"a\\nb": 1}, "success": "sure\\nthing"}',
    "python-tag.yaml": b"task_id: t1\nsummary: !!python/object/apply:os.system [touch pwned]\n",
}

EXPORTS: dict[str, bytes] = {
    "binary.jsonl": bytes(range(256)) * 64,
    "ten-megabytes.jsonl": b'{"format": "ctxgraph-export", "version": 1}\n' + b"x" * (10 * 1024 * 1024),
    "not-an-export.jsonl": b'{"task_id": "t1", "summary": "s"}\n',
    "version-9.jsonl": b'{"format": "ctxgraph-export", "version": 9}\n',
    "truncated.jsonl": b'{"format": "ctxgraph-export", "version": 1}\n{"kind": "node", "label": "Task", "id": "t1", "pro',
    "deep.jsonl": b'{"format": "ctxgraph-export", "version": 1}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "latin-1.jsonl": ('{"format": "ctxgraph-export", "version": 1}\n'
                      '{"kind": "node", "label": "Task", "id": "café", "props": {"id": "café"}}\n').encode("latin-1"),
}


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}


def run_all(commands: dict[str, list[str]], cwd: Path) -> dict[str, subprocess.CompletedProcess[bytes]]:
    """Run the commands concurrently (each is a fresh interpreter)."""
    procs = {name: subprocess.Popen(args, cwd=cwd, env=env(), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for name, args in commands.items()}
    done = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=180)
        done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return done


def assert_one_line_error(name: str, proc: subprocess.CompletedProcess[bytes], code: int = 2) -> str:
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == code, (name, proc.returncode, stderr[-2000:])
    assert "Traceback" not in stderr, (name, stderr[-2000:])
    lines = stderr.strip("\n").split("\n")
    assert len(lines) == 1, (name, stderr[-2000:])
    assert lines[0].startswith("ctxgraph: error: "), (name, lines[0])
    assert len(lines[0]) < 600, (name, lines[0][:600])
    return lines[0]


def test_ingest_handoff_refuses_hostile_files_in_one_line(tmp_path: Path) -> None:
    for name, data in HANDOFFS.items():
        (tmp_path / name).write_bytes(data)
    runs = run_all(
        {name: [sys.executable, "-m", "ctxgraph", "ingest", "handoff", name, "--store", f"{name}.db"]
         for name in HANDOFFS},
        tmp_path,
    )
    for name, proc in runs.items():
        line = assert_one_line_error(name, proc)
        assert name in line
        FUZZ_CASES["cli: ingest handoff"] += 1
        store = LocalStore.open(tmp_path / f"{name}.db")
        try:
            assert store.stats().labels == {}, name
        finally:
            store.close()
    assert not (tmp_path / "pwned").exists()


def test_one_bad_file_in_a_folder_refuses_the_whole_run(tmp_path: Path) -> None:
    folder = tmp_path / "handoffs"
    folder.mkdir()
    (folder / "a-good.yaml").write_text("task_id: t1\nsummary: fine\n")
    (folder / "b-bomb.yaml").write_bytes(HANDOFFS["alias-bomb.yaml"])
    store = LocalStore.open(tmp_path / "graph.db")
    store.close()
    proc = subprocess.run([sys.executable, "-m", "ctxgraph", "task", "add", "t1", "--name", "One",
                           "--store", "graph.db"], cwd=tmp_path, env=env(), capture_output=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "ctxgraph", "ingest", "handoff", "handoffs", "--store", "graph.db"],
                          cwd=tmp_path, env=env(), capture_output=True, timeout=180)
    assert "b-bomb.yaml" in assert_one_line_error("folder", proc)
    store = LocalStore.open(tmp_path / "graph.db")
    try:
        assert store.stats().labels.get("Handoff") is None
    finally:
        store.close()


def test_import_refuses_hostile_files_in_one_line(tmp_path: Path) -> None:
    for name, data in EXPORTS.items():
        (tmp_path / name).write_bytes(data)
    runs = run_all(
        {name: [sys.executable, "-c", SHIM, "import", name, "--store", f"{name}.db"] for name in EXPORTS}
        | {"missing": [sys.executable, "-c", SHIM, "import", "nope.jsonl", "--store", "x.db"],
           "folder": [sys.executable, "-c", SHIM, "import", ".", "--store", "x.db"]},
        tmp_path,
    )
    for name, proc in runs.items():
        assert_one_line_error(name, proc)
        FUZZ_CASES["cli: import"] += 1
        if name in EXPORTS:
            assert not (tmp_path / f"{name}.db").exists(), "a refused file must not even create the store"


@pytest.mark.slow
def test_export_import_round_trip_through_the_cli(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-c", SHIM, *args], cwd=tmp_path, env=env(), input=b"",
                              capture_output=True, timeout=180)

    demo = subprocess.run([sys.executable, "-m", "ctxgraph", "demo", "--store", "a.db"], cwd=tmp_path,
                          env=env(), capture_output=True, timeout=180)
    assert demo.returncode == 0, demo.stderr
    first = cli("export", "a.json", "--store", "a.db")
    assert first.returncode == 0, first.stderr
    assert b"exported" in first.stdout
    imported = cli("import", "a.json", "--store", "b.db")
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith(b"imported ")
    again = cli("export", "-", "--store", "b.db")
    assert again.returncode == 0, again.stderr
    assert again.stdout == (tmp_path / "a.json").read_bytes()
    assert b"exported" in again.stderr
    checked = cli("import", "--check", "-", "--store", "c.db")
    assert checked.returncode == 2  # empty stdin: not an export
    assert not (tmp_path / "c.db").exists()
    unwritable = cli("export", "no/such/folder/x.json", "--store", "a.db")
    assert_one_line_error("unwritable", unwritable)
