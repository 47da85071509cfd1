"""Context assembly time for 50, 200, 1,000 and 10,000 candidates.

Times the pure pipeline (ranking, tiers, budget, compression, rendering) on
synthetic candidates, with the task's signals excluded and included. Seeded,
so runs are comparable. ADR-006's target: under 10 ms for 200 candidates,
signals excluded.

    python -m benchmarks.assembly [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from datetime import UTC, datetime, timedelta

from ctxgraph.compute.config import ContextConfig
from ctxgraph.compute.context import compute_context
from ctxgraph.compute.limits import limits_for
from ctxgraph.core.models import (
    Candidates,
    DependencyHandoff,
    FileEntry,
    KnowledgeHit,
    KnowledgeItem,
    ReadNext,
    RecentTask,
    Severity,
    Task,
    TaskStatus,
)
from ctxgraph.signals import SignalExtractor

NOW = datetime(2026, 3, 1, tzinfo=UTC)
WORDS = [
    "jwt", "token", "login", "session", "auth", "api", "route", "schema", "migration", "cache",
    "queue", "retry", "timeout", "config", "logging", "metrics", "parser", "render", "template",
    "index", "query", "user", "order", "payment",
]
TASK_TEXT = (
    "Add refresh-token rotation to the login endpoint. Store hashed refresh tokens in the sessions "
    "table with a migration, rotate them on every use in src/api/auth.routes.ts, revoke the whole "
    "family on reuse, keep the access token short-lived, and cover the flow with integration tests "
    "against the real database. The admin UI client must retry once after a 401 with the new token, "
    "and the logs must never contain a token. Document the cookie settings and the clock-skew "
    "tolerance used by verifyAccessToken so the next task can reuse them."
)


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def candidates(n: int, seed: int = 7) -> Candidates:
    """About ``n`` candidates: 60 % knowledge, 30 % files, 10 % dependencies."""
    rng = random.Random(seed)
    kinds = ("pattern", "gotcha", "decision")
    hits = []
    for i in range(int(n * 0.6)):
        tags = tuple(rng.sample(WORDS, 3))
        item = KnowledgeItem(
            id=f"k{i}", kind=kinds[i % 3], summary=sentence(rng, rng.randint(8, 30)), tags=tags,
            severity=rng.choice(list(Severity)), importance=rng.random(),
            updated_at=(NOW - timedelta(hours=rng.randint(0, 2000))).isoformat(),
            chain_id=f"c{i % 50}" if i % 7 == 0 else None, version=1 + i % 3,
        )
        hits.append(KnowledgeHit(item=item, matched_tags=tags[: rng.randint(1, 3)]))
    files = tuple(
        FileEntry(path=f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{i}.py", component=rng.choice(WORDS),
                  notes=sentence(rng, 10))
        for i in range(int(n * 0.3))
    )
    deps = tuple(
        DependencyHandoff(
            task=Task(id=f"d{i}", name=sentence(rng, 6), status=TaskStatus.COMPLETED,
                      completed_at=NOW.isoformat()),
            summary=sentence(rng, 20),
            files_to_read=(ReadNext(file=f"src/x/{i}.py", reason=sentence(rng, 5)),),
            knowledge=tuple(h.item for h in hits[i * 3: i * 3 + 3]),
        )
        for i in range(max(1, int(n * 0.1)))
    )
    recent = tuple(RecentTask(id=f"r{i}", intent=sentence(rng, 6), success=True, completed_at=NOW.isoformat())
                   for i in range(5))
    half = len(hits) // 2
    return Candidates(keyword_hits=tuple(hits[:half]), domain_hits=tuple(hits[half:]), dependencies=deps,
                      context_map=files, recent_tasks=recent)


def run(sizes: list[int], repeat: int) -> list[dict[str, float | int]]:
    extractor = SignalExtractor()
    task = Task(id="t", name="Refresh-token rotation", objective=TASK_TEXT, complexity="complex")
    signals = extractor.extract(task.text, task.type)
    config = ContextConfig()
    rows = []
    for n in sizes:
        cands = candidates(n)
        compute_context(task, signals, cands, limits_for("complex"), complexity="complex", config=config, now=NOW)
        excluded, included = [], []
        tokens = 0
        for i in range(repeat):
            t0 = time.perf_counter()
            ctx = compute_context(task, signals, cands, limits_for("complex"), complexity="complex",
                                  config=config, now=NOW)
            excluded.append((time.perf_counter() - t0) * 1000)
            tokens = ctx.tokens
            t0 = time.perf_counter()
            text = f"{task.text} {i}"  # a new text each time: no cached signals
            sig = extractor.extract(text, task.type)
            compute_context(task, sig, cands, limits_for("complex"), complexity="complex", config=config, now=NOW)
            included.append((time.perf_counter() - t0) * 1000)
        rows.append({
            "candidates": n,
            "p50_ms": round(statistics.median(excluded), 2),
            "p95_ms": round(sorted(excluded)[int(0.95 * (len(excluded) - 1))], 2),
            "p50_ms_with_signals": round(statistics.median(included), 2),
            "tokens": tokens,
        })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=30, help="timed runs per size (default 30)")
    parser.add_argument("--sizes", default="50,200,1000,10000", help="candidate counts, comma-separated")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    rows = run([int(x) for x in args.sizes.split(",")], args.repeat)
    if args.json:
        print(json.dumps({"rows": rows}))
        return
    print(f"{'candidates':>10} {'p50 ms':>8} {'p95 ms':>8} {'p50 ms +signals':>16} {'tokens':>7}")
    for r in rows:
        print(f"{r['candidates']:>10} {r['p50_ms']:>8} {r['p95_ms']:>8} {r['p50_ms_with_signals']:>16} "
              f"{r['tokens']:>7}")


if __name__ == "__main__":
    main()
