"""Run the speed-and-scale suite and print a table (or one JSON object).

    python -m benchmarks --quick --json        # 1k and 100k nodes, both stores when NEO4J_URI is set
    python -m benchmarks --quick --full-text   # graphs without vectors: the full-text rows alone
    python -m benchmarks --sizes 1000,10000,100000,1000000 --stores local --out results.json
    python -m benchmarks --sizes 1000000 --keep graphs --warmup 300   # again later: measured, not reloaded
    python -m benchmarks --cli                 # the command line's start-up alone (benchmarks/cli.py)
    python -m benchmarks --embedding          # the embedding runtimes and ingestion with embeddings (embedding.py)

Each (store, size) runs in its own process (so ``peak_rss_mb`` is its own):
one graph with task vectors (the model installed, as ``ingest handoff`` leaves
it; vectors cached by text in the cache folder) measured in two interleaved
configurations, a row each — with vectors (the default path) and full text —
and the ratio of their context p95s. Progress goes to stderr, the table (or, with ``--json``, exactly one
JSON object ``{"rows": [...], "machine": {...}}``) to stdout. See
``benchmarks/README.md`` for what each column means.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.suite import log, machine, run_row
from benchmarks.tables import table

QUICK_SIZES = (1_000, 100_000)
DEFAULT_SIZES = (1_000, 10_000, 100_000)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"sizes {', '.join(f'{s:,}' for s in QUICK_SIZES)} and fewer calls (under 5 minutes)",
    )
    parser.add_argument(
        "--sizes", help="node counts, comma-separated (default 1000,10000,100000; 1000000 is supported)"
    )
    parser.add_argument("--stores", help="local,neo4j (default: local, plus neo4j when NEO4J_URI is set)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--out", type=Path, help="also write the JSON object to this file")
    parser.add_argument("--seed", type=int, default=42, help="generator seed (default 42)")
    parser.add_argument("--calls", type=int, help="timed compute calls per row (default 300; --quick 200)")
    parser.add_argument("--signal-calls", type=int, help="timed calls with fresh signals (default 60; --quick 40)")
    parser.add_argument(
        "--tail",
        type=int,
        help="handoffs ingested through the API and timed; the rest of the graph is "
        "bulk-loaded (default: every handoff up to 10,000 nodes, else 1,000)",
    )
    parser.add_argument("--seconds", type=float, help="time cap of the timed loops per row (default 90; --quick 15)")
    parser.add_argument(
        "--warmup",
        type=float,
        default=0.0,
        help="untimed contexts for this many seconds before each row's timed loops (default 0): "
        "a Neo4j server's steady state, once its JIT compiler settled",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep each row's graph (embedded: in DIR; Neo4j: on the server, not emptied) and, on a later "
        "run with the same DIR, measure it again instead of loading it (benchmarks/kept.py)",
    )
    parser.add_argument(
        "--cli",
        action="store_true",
        help="only the command line's start-up: median wall time of 10 `ctxgraph` processes per command "
        "(--help, task add, ...; benchmarks/cli.py)",
    )
    parser.add_argument(
        "--embedding",
        action="store_true",
        help="instead of the store rows: the embedding runtimes side by side and ingestion with embeddings "
        "(benchmarks/embedding.py; with --quick, --json)",
    )
    parser.add_argument(
        "--full-text",
        action="store_true",
        help="load no vectors (nothing embedded) and measure the full-text configuration alone",
    )
    parser.add_argument("--row", help=argparse.SUPPRESS)  # STORE:NODES, one row in this process (internal)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.cli:
        from benchmarks import cli

        return cli.main(["--json"] if args.json else [])
    if args.embedding:
        from benchmarks.embedding import main as embedding

        return embedding([*(["--quick"] if args.quick else []), *(["--json"] if args.json else [])])
    calls = args.calls or (200 if args.quick else 300)
    signal_calls = args.signal_calls or (40 if args.quick else 60)
    seconds = args.seconds or (15.0 if args.quick else 90.0)
    if args.row:
        store, _, nodes = args.row.partition(":")
        result = run_row(
            store,
            int(nodes),
            seed=args.seed,
            calls=calls,
            signal_calls=signal_calls,
            tail=args.tail,
            seconds=seconds,
            quick=args.quick,
            warmup=args.warmup,
            keep=args.keep,
            vectors=not args.full_text,
        )
        print(json.dumps(result))
        return 0

    sizes = (
        [int(s.replace("_", "")) for s in args.sizes.split(",")]
        if args.sizes
        else list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    )
    if args.stores:
        stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    else:
        stores = ["local", "neo4j"] if os.environ.get("NEO4J_URI") else ["local"]
    if "neo4j" in stores and not os.environ.get("NEO4J_URI"):
        log("store neo4j needs NEO4J_URI (and NEO4J_PASSWORD or NEO4J_PASSWORD_FILE)")
        return 2

    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for nodes in sizes:
        for store in stores:
            cmd = [
                sys.executable,
                "-m",
                "benchmarks",
                "--row",
                f"{store}:{nodes}",
                "--seed",
                str(args.seed),
                "--calls",
                str(calls),
                "--signal-calls",
                str(signal_calls),
            ]
            cmd += ["--seconds", str(seconds)]
            if args.tail is not None:
                cmd += ["--tail", str(args.tail)]
            if args.quick:
                cmd.append("--quick")
            if args.warmup:
                cmd += ["--warmup", str(args.warmup)]
            if args.keep is not None:
                cmd += ["--keep", str(args.keep.resolve())]
            if args.full_text:
                cmd.append("--full-text")
            done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
            if done.returncode != 0:
                log(f"row {store}:{nodes} failed (exit {done.returncode})")
                return 1
            rows += json.loads(done.stdout.strip().splitlines()[-1])
    log(f"suite done in {time.perf_counter() - started:.0f}s")

    result = {"rows": rows, "machine": machine()}
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result))
    else:
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
