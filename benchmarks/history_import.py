"""What the git history import costs (issue 44; docs/history.md), one run,
both figures: ``git log --name-status --no-merges`` over the branch by itself,
then ``ctxgraph history import`` of the same commits into an empty store —
the full text first (``full_text_s``: the commits read, the rules applied, the
tasks and handoffs written: what a context ranks by), then the tasks'
signals (``signals_s``: spaCy, in batches) — and the process's peak resident
memory. Each store runs in a process of its own (its ``peak_rss_mb`` is its
own; Neo4j's server is not in it). ``load`` is the machine's load average
(1 min) when the row started: on a shared machine both figures move with it.
Their CPU seconds move less: ``cpu_ratio`` is the full text's CPU (this
process's threads and its git commands; not Neo4j's server) over git log's.

    python -m benchmarks.history_import                       # ipython's mirror, both stores when NEO4J_URI is set
    python -m benchmarks.history_import --repo PATH --stores local --json

The repository is any git repository (a bare mirror is fine): by default
``/work/.mirror/ipython+ipython/repo`` (22,150 non-merge commits). Without
one of 20,000 commits, ``--synthetic N`` builds a repository of N commits
with ``git fast-import`` in a temporary folder (files edited, added, renamed
and deleted; messages with references) and measures that.

The Neo4j server named by ``NEO4J_URI`` is EMPTIED before and after its row:
point it at a scratch server (``scripts/neo4j_local.py --instance NAME``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ctxgraph.service.history_types import HISTORY_BATCH

DEFAULT_REPO = Path("/work/.mirror/ipython+ipython/repo")


def git_log_seconds(repo: Path, runs: int = 3) -> tuple[float, float]:
    """The best of ``runs`` timings of ``git log --name-status --no-merges HEAD``
    to /dev/null: (wall, CPU) seconds."""
    best = (float("inf"), float("inf"))
    for _ in range(runs):
        started, cpu = time.perf_counter(), _cpu(resource.RUSAGE_CHILDREN)
        subprocess.run(["git", "-C", str(repo), "log", "--name-status", "--no-merges", "HEAD"],
                       stdout=subprocess.DEVNULL, check=True)
        best = min(best, (time.perf_counter() - started, _cpu(resource.RUSAGE_CHILDREN) - cpu))
    return best


def _cpu(who: int) -> float:
    """User and system CPU seconds of this process (``RUSAGE_SELF``: every
    thread) or of its finished children (``RUSAGE_CHILDREN``: the git commands)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def row(store: str, repo: Path, batch: int) -> dict[str, Any]:
    """One store's row (run in its own process)."""
    from ctxgraph.service import ContextService
    from ctxgraph.service.history import HistoryOptions

    load = os.getloadavg()[0]

    with tempfile.TemporaryDirectory() as folder:
        if store == "local":
            svc = ContextService.open(Path(folder) / "graph.db")
        else:
            svc = ContextService.open(neo4j_uri=os.environ["NEO4J_URI"])
            svc.store.clear()
            svc.store.init_schema()
        try:
            git_s, git_cpu = git_log_seconds(repo)
            started, cpu = time.perf_counter(), _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN)
            report = svc.import_history(repo, HistoryOptions(batch_size=batch, signals=False))
            full_text = time.perf_counter() - started
            full_text_cpu = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN) - cpu
            started = time.perf_counter()
            signals = svc.import_history(repo, HistoryOptions(batch_size=batch))
            signals_s = time.perf_counter() - started
            git_after, _ = git_log_seconds(repo)
            stats = svc.store.stats()
            if store == "neo4j":
                svc.store.clear()
        finally:
            svc.close()
    return {
        "store": store, "repository": str(repo), "load": round(load, 2), "commits_read": report.read,
        "imported": report.imported,
        "skipped": report.skipped, "git_log_s": round(git_s, 3), "git_log_after_s": round(git_after, 3),
        "full_text_s": round(full_text, 3), "ratio": round(full_text / git_s, 1),
        "git_log_cpu_s": round(git_cpu, 3), "full_text_cpu_s": round(full_text_cpu, 3),
        "cpu_ratio": round(full_text_cpu / git_cpu, 1),
        "commits_per_s": round(report.read / full_text), "signals_s": round(signals_s, 3),
        "signals": signals.signals, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "nodes": sum(stats.labels.values()), "relationships": sum(stats.relationships.values()),
    }


def synthetic(folder: Path, commits: int, seed: int = 7) -> Path:
    """A repository of ``commits`` commits made with ``git fast-import``: each
    edits 1-4 of a growing set of files, now and then adds, renames or deletes
    one; messages of a few words with an issue reference now and then."""
    rng = random.Random(seed)
    words = ["parser", "token", "cache", "session", "router", "config", "loader", "render", "widget", "query",
             "index", "schema"]
    repo = folder / "synthetic.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    files = [f"src/pkg{i % 20}/mod_{i}.py" for i in range(200)]
    lines: list[bytes] = []
    stamp = 1_600_000_000
    for n in range(commits):
        stamp += rng.randint(60, 20_000)
        message = f"{rng.choice(words).capitalize()} {' '.join(rng.sample(words, 4))}"
        if rng.random() < 0.2:
            message += f" (#{rng.randint(1, 5000)})"
        ops = []
        for path in rng.sample(files, rng.randint(1, 4)):
            body = f"# {path} {n}\n" + "x = 1\n" * rng.randint(5, 40)
            ops.append(f"M 100644 inline {path}\ndata {len(body.encode())}\n{body}")
        roll = rng.random()
        if roll < 0.03:
            new = f"src/pkg{rng.randint(0, 19)}/mod_{len(files) + n}.py"
            body = f"# new {n}\n"
            ops.append(f"M 100644 inline {new}\ndata {len(body.encode())}\n{body}")
            files.append(new)
        elif roll < 0.04 and n > 0:
            old = rng.choice(files)
            new = old.replace(".py", f"_v{n}.py")
            ops.append(f"R {old} {new}")
            files[files.index(old)] = new
        text = (f"commit refs/heads/main\nmark :{n + 1}\nauthor A <a@a> {stamp} +0000\n"
                f"committer A <a@a> {stamp} +0000\ndata {len(message.encode())}\n{message}\n"
                + (f"from :{n}\n" if n else "") + "\n".join(ops) + "\n\n")
        lines.append(text.encode())
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(lines), check=True)
    subprocess.run(["git", "-C", str(repo), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    return repo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.history_import", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO)
    parser.add_argument("--synthetic", type=int, metavar="N", help="measure a repository of N commits made here")
    parser.add_argument("--stores", help="local,neo4j (default: local, plus neo4j when NEO4J_URI is set)")
    parser.add_argument("--batch", type=int, default=HISTORY_BATCH,
                        help=f"commits per transaction (default {HISTORY_BATCH:,}, the import's)")
    parser.add_argument("--row", help=argparse.SUPPRESS)  # internal: one store's row in this process
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.row:
        print(json.dumps(row(args.row, args.repo, args.batch)))
        return 0
    stores = args.stores.split(",") if args.stores else ["local"] + (["neo4j"] if os.environ.get("NEO4J_URI") else [])
    with tempfile.TemporaryDirectory() as folder:
        repo = synthetic(Path(folder), args.synthetic) if args.synthetic else args.repo
        rows = []
        for store in stores:
            print(f"history import: {store} ...", file=sys.stderr)
            done = subprocess.run([sys.executable, "-m", "benchmarks.history_import", "--row", store, "--repo",
                                   str(repo), "--batch", str(args.batch)], capture_output=True, text=True)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return done.returncode
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    if args.json:
        print(json.dumps({"rows": rows}, indent=2))
        return 0
    print("| store | commits | imported | git log s | full text s | ratio | CPU ratio | commits/s | signals s "
          "| peak RSS MB | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['store']} | {r['commits_read']:,} | {r['imported']:,} | {r['git_log_s']} | {r['full_text_s']} | "
              f"{r['ratio']}x | {r['cpu_ratio']}x | {r['commits_per_s']:,} | {r['signals_s']} | {r['peak_rss_mb']} "
              f"| {r['load']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
