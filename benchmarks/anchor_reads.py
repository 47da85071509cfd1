"""What anchoring and checking big files costs (issue 40; docs/freshness.md,
"What is read").

1. ``anchor``: one file of ``--mb`` MB of code lines (default 50) under a
   root, cited by ``--cited`` patterns (default 100, each naming 20 lines of
   it): the anchors made as an ingestion makes them (``make_anchors``), the
   files read counted, and, for comparison, the way the first version made
   them (the file read, hashed and split into lines once per anchor).
2. ``touched``: the same anchors checked after a ``touch`` of the file (every
   anchor's stat differs, its content does not), as a context or a sync
   checks them: the files read and the time.
3. ``sparse``: a sparse file of ``--huge-gb`` GB (``truncate``: no disk used)
   named by a handoff: the anchor's time and the peak of Python's memory
   (``tracemalloc``) while it is made; it is over the read limit, so not read.
4. With ``--mcp``: ``ctxgraph mcp`` serving two project folders over stdio,
   ``a`` holding the big file and ``b`` a small project. ``compute_context``
   on ``b`` in a loop, alone, then while ``a`` ingests a handoff with the
   ``--cited`` patterns on its big file (``ingest_handoff``, embed=false): the
   contexts' times in both, and the ingestion's (a context on ``a`` itself
   waits for it: the project's lock). ``--server-path DIR`` runs the server
   on another checkout's ctxgraph, to compare.

    python -m benchmarks.anchor_reads [--mb 50] [--cited 100] [--huge-gb 2] [--mcp [--server-path DIR]] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import ctxgraph
from benchmarks.suite import log, percentile
from ctxgraph.core.anchors import blob_id, parse_lines
from ctxgraph.service.anchor_files import FileReads
from ctxgraph.service.anchors import Wanted, check, make_anchors

LINE = b"result = compute_value(argument_one, argument_two)  # %08d\n"


def big_file(path: Path, mb: int) -> int:
    """A file of about ``mb`` MB of numbered code lines; its number of lines."""
    count = mb * 1_000_000 // len(LINE % 0)
    with open(path, "wb") as f:
        for start in range(0, count, 100_000):
            f.write(b"".join(LINE % i for i in range(start, min(count, start + 100_000))))
    return count


def cited(path: str, lines: int, n: int) -> list[Wanted]:
    step = max(1, lines // n)
    return [(f"pattern:{i}", "t-big", path, f"{i * step + 1}-{i * step + 20}", None, "2026-01-01T00:00:00Z")
            for i in range(n)]


def first_version(root: Path, wanted: list[Wanted]) -> float:
    """Seconds to anchor ``wanted`` as the first version did: per anchor, the
    file read whole, its blob id, and its cited lines from a list of lines."""
    started = time.perf_counter()
    for _, _, path, spec, _, _ in wanted:
        data = (root / path).read_bytes()
        blob_id(data)
        lines = data.splitlines(keepends=True)
        h = hashlib.sha1(usedforsecurity=False)
        for start, end in parse_lines(spec):
            for line in lines[start - 1:end]:
                h.update(line)
    return time.perf_counter() - started


def in_process(root: Path, mb: int, n: int, huge_gb: int) -> dict[str, Any]:
    lines = big_file(root / "big.py", mb)
    wanted = cited("big.py", lines, n)
    row: dict[str, Any] = {"file_mb": round((root / "big.py").stat().st_size / 1e6, 1), "anchors": n}
    reads = FileReads(root)
    started = time.perf_counter()
    anchors = make_anchors(root, wanted, reads)
    row["anchor"] = {"seconds": round(time.perf_counter() - started, 3), "files_read": reads.reads,
                     "first_version_seconds": round(first_version(root, wanted[:10]) * n / 10, 2)}
    os.utime(root / "big.py")
    started = time.perf_counter()
    result = check(root, anchors, renames=False)
    row["touched"] = {"seconds": round(time.perf_counter() - started, 3), "files_read": result.hashed,
                      "unchanged": result.unchanged}
    with open(root / "huge.sql", "wb") as f:
        f.truncate(huge_gb * 1024**3)
    tracemalloc.start()
    started = time.perf_counter()
    (huge,) = make_anchors(root, cited("huge.sql", 1, 1))
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    row["sparse"] = {"gb": huge_gb, "seconds": round(seconds, 4), "peak_kb": round(peak / 1024, 1),
                     "blob": huge.blob or "(not read)"}
    return row


def over_mcp(folder: Path, mb: int, n: int, calls: int, server_path: str | None = None) -> dict[str, Any]:
    """Contexts of project ``b`` alone and while project ``a`` ingests (see the
    module's text); the server runs the ctxgraph found in ``server_path``
    (default: this one's)."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from ctxgraph.service import ContextService

    a, b = folder / "a", folder / "b"
    for project in (a, b):
        (project / "src").mkdir(parents=True)
        (project / "src" / "app.py").write_text("def handler(request):\n    return respond(request)\n")
        svc = ContextService.open(project / ".ctxgraph" / "graph.db", root=str(project))
        try:
            svc.add_tasks([{"id": "t-big", "name": "Big data", "objective": "Load the big data table"},
                           {"id": "t-next", "name": "Use the data", "objective": "Use the big data table",
                            "depends_on": ["t-big"]}])
        finally:
            svc.close()
    lines = big_file(a / "big.py", mb)
    handoff = json.dumps({"task_id": "t-big", "summary": "Loaded the table", "completed_at": "2026-03-02T10:00:00Z",
                          "patterns_discovered": [
                              {"pattern": f"Row helper {i}", "applies_to": ["data"], "location": f"big.py:{loc}"}
                              for i, (_, _, _, loc, _, _) in enumerate(cited("big.py", lines, n))]})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTXGRAPH_", "NEO4J_"))}
    env["PYTHONPATH"] = server_path or str(Path(ctxgraph.__file__).resolve().parents[1])
    params = StdioServerParameters(command=sys.executable, env=env, cwd=folder, args=[
        "-m", "ctxgraph", "mcp", "--no-index", "--project", f"a={a}", "--project", f"b={b}"])

    async def session() -> dict[str, Any]:
        with open(os.devnull, "w", encoding="utf-8") as quiet:
            return await contexts(quiet)

    async def contexts(quiet: Any) -> dict[str, Any]:
        async with Client(stdio_client(params, errlog=quiet)) as client:
            async def context() -> float:
                started = time.perf_counter()
                result = await client.call_tool("compute_context", {"task_id": "t-next", "project": "b"})
                if result.is_error:
                    raise SystemExit(f"compute_context failed: {result.content}")
                return (time.perf_counter() - started) * 1000

            for _ in range(5):
                await context()
            alone = [await context() for _ in range(calls)]
            during: list[float] = []
            ingest: list[float] = []

            async def ingest_a() -> None:
                started = time.perf_counter()
                result = await client.call_tool("ingest_handoff", {"handoff": handoff, "embed": False,
                                                                   "project": "a"})
                if result.is_error:
                    raise SystemExit(f"ingest_handoff failed: {result.content}")
                ingest.append(time.perf_counter() - started)

            async with anyio.create_task_group() as tg:
                tg.start_soon(ingest_a)
                await anyio.sleep(0.05)
                while not ingest:
                    during.append(await context())
            return {"ingest_seconds": round(ingest[0], 3),
                    "contexts_alone_ms": {"p50": round(percentile(alone, 50), 1), "max": round(max(alone), 1)},
                    "contexts_during_ingest_ms": {"n": len(during), "p50": round(percentile(during, 50), 1),
                                                  "max": round(max(during), 1) if during else None}}

    row: dict[str, Any] = anyio.run(session)
    svc = ContextService.open(a / ".ctxgraph" / "graph.db", read_only=True)
    try:
        row["anchors_made"] = len(svc.store.read_anchors())
    finally:
        svc.close()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.anchor_reads", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--cited", type=int, default=100)
    parser.add_argument("--huge-gb", type=int, default=2)
    parser.add_argument("--mcp", action="store_true", help="Also time two projects under one `ctxgraph mcp`.")
    parser.add_argument("--calls", type=int, default=30, help="Contexts timed alone (--mcp).")
    parser.add_argument("--server-path", metavar="DIR",
                        help="The folder holding the ctxgraph package the server runs (--mcp; to compare "
                             "versions) [default: this one's].")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ctxgraph-bench-anchors-") as tmp:
        (Path(tmp) / "root").mkdir()
        log("anchors in process")
        row = in_process(Path(tmp) / "root", args.mb, args.cited, args.huge_gb)
        if args.mcp:
            log("two projects under one ctxgraph mcp")
            row["mcp"] = over_mcp(Path(tmp) / "mcp", args.mb, args.cited, args.calls, args.server_path)
    if args.json:
        print(json.dumps(row, indent=2))
        return 0
    anchor, touched, sparse = row["anchor"], row["touched"], row["sparse"]
    print(f"{row['anchors']} anchors on one {row['file_mb']} MB file: {anchor['seconds']} s, "
          f"{anchor['files_read']} file read (the first version: ~{anchor['first_version_seconds']} s)")
    print(f"checked after a touch: {touched['seconds']} s, {touched['files_read']} file read, "
          f"{touched['unchanged']} unchanged")
    print(f"a {sparse['gb']} GB sparse file anchored: {sparse['seconds']} s, Python's peak memory "
          f"{sparse['peak_kb']} KB, blob {sparse['blob']}")
    if "mcp" in row:
        m = row["mcp"]
        print(f"mcp: ingest on project a {m['ingest_seconds']} s ({m['anchors_made']} anchors); contexts on b "
              f"alone p50 {m['contexts_alone_ms']['p50']} ms (max {m['contexts_alone_ms']['max']}), during the ingest "
              f"p50 {m['contexts_during_ingest_ms']['p50']} ms (max {m['contexts_during_ingest_ms']['max']}, "
              f"n={m['contexts_during_ingest_ms']['n']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
