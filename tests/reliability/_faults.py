"""Helpers for the fault, concurrency and durability tests (imported as ``_faults``).

A generated project of many tasks whose handoffs overlap (shared files,
shared patterns and decisions, shared tags) so that writers contend for the
same nodes; a base export holding only the tasks, to start every run from
the same graph; and the export an uninterrupted sequential ingest gives, to
compare every interrupted or concurrent run with.

Every handoff has the same ``completed_at`` and every shared item the same
text, tags and notes wherever it appears, so the final graph does not depend
on the order the handoffs were written in (the only order-dependent values,
first writer's ``created_at`` and first non-empty file notes, are equal).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ctxgraph.graph.backup import ExportReader
from ctxgraph.graph.store import KnowledgeStore

REPO = Path(__file__).resolve().parents[2]

#: kind of fault -> how many were injected; printed at the end of the run.
FAULTS: Counter[str] = Counter()

COMPLETED_AT = "2026-03-01T10:00:00Z"
AREAS = ["auth", "billing", "search", "catalog", "orders", "users", "reports", "storage"]
SHARED_PATTERNS = [f"Validate {a} input with pydantic models at the boundary" for a in AREAS]
SHARED_DECISIONS = [f"Keep the {a} service stateless behind the gateway" for a in AREAS]
SHARED_FILES = [f"src/{a}/service.py" for a in AREAS] + ["src/app.py", "src/db/session.py"]


def task_id(i: int) -> str:
    return f"f-{i:03d}"


def tasks(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        area = AREAS[i % len(AREAS)]
        out.append(
            {
                "id": task_id(i),
                "name": f"Improve the {area} module, step {i}",
                "objective": f"Add endpoint {i} to the {area} API with tests and a database migration",
                "depends_on": [task_id(i - 1)] if i % 5 else [],
            }
        )
    return out


def handoff(i: int) -> dict[str, Any]:
    area, other = AREAS[i % len(AREAS)], AREAS[(i * 3 + 1) % len(AREAS)]
    return {
        "task_id": task_id(i),
        "summary": f"Added endpoint {i} to the {area} API",
        "success": i % 7 != 3,
        "completed_at": COMPLETED_AT,
        "files_created": [
            {"path": f"src/{area}/endpoint_{i}.py", "purpose": f"handler of endpoint {i}"},
            {"path": f"tests/{area}/test_endpoint_{i}.py", "purpose": f"tests of endpoint {i}"},
        ],
        "files_modified": [
            {"path": f"src/{area}/service.py", "purpose": f"the {area} service"},
            {"path": "src/app.py", "purpose": "application wiring"},
        ],
        "dependencies_for_next": [{"file": f"src/{area}/endpoint_{i}.py", "reason": f"extend endpoint {i}"}],
        "patterns_discovered": [
            {"pattern": SHARED_PATTERNS[i % len(AREAS)], "applies_to": [area, "api"]},
            {"pattern": f"Endpoint {i} paginates with opaque cursors", "applies_to": [area]},
        ],
        "gotchas": [
            {"issue": f"Endpoint {i} times out on cold caches", "severity": "high", "applies_to": [area]},
            {
                "issue": f"The {other} fixture leaks connections in test {i}",
                "severity": "medium",
                "applies_to": [other, "testing"],
            },
        ],
        "decisions": [{"decision": SHARED_DECISIONS[(i * 5) % len(AREAS)], "rationale": "scales out"}],
        "open_questions": [{"question": f"Should endpoint {i} be versioned", "blocking": i % 4 == 0}],
        "notes": {"step": i, "reviewer": f"agent-{i % 3}"},
    }


@dataclass(frozen=True)
class Corpus:
    """A generated project on disk: one folder of handoffs, the base export
    (tasks only) and the export of a sequential ingest of every handoff."""

    n: int
    handoffs: Path
    base: Path
    reference: bytes

    def handoff_files(self) -> list[Path]:
        return sorted(self.handoffs.glob("*.yaml"))


def build_corpus(root: Path, n: int, extractor: Any) -> Corpus:
    """Write ``n`` handoffs, the base export and the reference export (the
    reference comes from the embedded store; both stores export the same bytes)."""
    from ctxgraph.graph.backup import export_to_path
    from ctxgraph.graph.local import LocalStore
    from ctxgraph.service import ContextService

    root.mkdir(parents=True, exist_ok=True)
    folder = root / "handoffs"
    folder.mkdir()
    for i in range(n):
        (folder / f"{task_id(i)}.yaml").write_text(yaml.safe_dump(handoff(i), sort_keys=False))
    store = LocalStore.open(root / "base.db")
    try:
        svc = ContextService(store, extractor)
        svc.add_tasks(tasks(n))
        export_to_path(store, str(root / "base.jsonl"))
        files = sorted(folder.glob("*.yaml"))
        svc.ingest_handoffs([(f.name, f.read_bytes()) for f in files])
        export_to_path(store, str(root / "reference.jsonl"))
    finally:
        store.close()
    return Corpus(n=n, handoffs=folder, base=root / "base.jsonl", reference=(root / "reference.jsonl").read_bytes())


def load_base(store: KnowledgeStore, corpus: Corpus) -> None:
    """Empty ``store`` and load the tasks-only graph into it."""
    store.clear()
    store.import_rows(ExportReader.from_path(corpus.base).rows())


def export_bytes(store: KnowledgeStore, tmp: Path) -> bytes:
    from ctxgraph.graph.backup import export_to_path

    target = tmp / f"export-{time.monotonic_ns()}.jsonl"
    export_to_path(store, str(target))
    return target.read_bytes()


def rows(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode().splitlines()[1:] if line.strip()]


def check_all_or_nothing(snapshot: bytes, corpus: Corpus, order: list[str]) -> int:
    """Assert every handoff in ``snapshot`` is whole and every other absent;
    return how many are present. ``order`` is the order they were written in:
    those present must be a prefix of it (one writer, one transaction each)."""
    ref, base, got = rows(corpus.reference), rows(corpus.base.read_bytes()), rows(snapshot)

    def index(rs: list[dict[str, Any]]) -> tuple[dict[tuple[str, str], Any], dict[tuple[str, str], set[str]]]:
        nodes = {(r["label"], r["id"]): r["props"] for r in rs if r["kind"] == "node"}
        out: dict[tuple[str, str], set[str]] = {}
        for r in rs:
            if r["kind"] == "rel":
                out.setdefault(tuple(r["src"]), set()).add(json.dumps([r["type"], r["dst"], r["props"]]))
        return nodes, out

    (ref_nodes, ref_out), (base_nodes, _), (got_nodes, got_out) = index(ref), index(base), index(got)
    present = []
    for tid in order:
        key = ("Handoff", f"handoff:{tid}")
        if key in got_nodes:
            present.append(tid)
            assert got_nodes[key] == ref_nodes[key], tid
            assert got_out.get(key) == ref_out[key], f"{tid}: the handoff's links are not whole"
            assert got_nodes[("Task", tid)] == ref_nodes[("Task", tid)], f"{tid}: task not marked finished"
            assert json.dumps(["HANDED_OFF", list(key), {}]) in got_out[("Task", tid)], tid
            for link in ref_out[key]:
                _, dst, _ = json.loads(link)
                assert tuple(dst) in got_nodes, f"{tid}: {dst} missing"
        else:
            assert got_nodes[("Task", tid)] == base_nodes[("Task", tid)], f"{tid}: task changed without its handoff"
            assert not any("HANDED_OFF" in e for e in got_out.get(("Task", tid), ())), tid
    assert present == order[: len(present)], "the committed handoffs are not a prefix of the ingest order"
    return len(present)


def free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a CLI subprocess: this checkout importable, no
    NEO4J_/CTXGRAPH_ variables leaking in from the test run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env.update(extra or {})
    return env


def ctxgraph(*args: str) -> list[str]:
    return [sys.executable, "-m", "ctxgraph", *args]


def assert_one_error_line(proc: subprocess.CompletedProcess[str], code: int) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1, proc.stderr[-3000:]
    assert lines[0].startswith("ctxgraph: error: "), lines[0]
    return lines[0]


def kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def popen(args: list[str], **kwargs: Any) -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(args, text=True, **kwargs) as proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)
