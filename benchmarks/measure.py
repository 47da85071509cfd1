"""The timed part of a store row (``benchmarks.suite``): contexts of the query
tasks in each configuration, interleaved call by call so that a busy machine's
noise falls on both alike.

The configurations are the default path — finished tasks with vectors, each
query task with its stored query vector (``vectors: true``) — and full text
(``vectors: false``: ``task_vectors`` off, as with ``CTXGRAPH_TASK_VECTORS=0``,
so no vector is read or searched). A row's graph measured with ``--full-text``
has no vectors, and only the second configuration runs.

- ``compute_*``: ``compute(task_id)``, what ``ctxgraph compute ID`` and the MCP
  tool given an id do: the task read with its stored query vector (signals
  stored with it), then the context's reads;
- ``compute_inline_*``: an unsaved task (the query's text with a new suffix
  each call, no stored signals): its signals extracted and, with vectors, its
  text embedded once per call — what an MCP client sending ``task`` gets;
- ``signals_p50_ms``: ``SignalExtractor.extract`` alone on a fresh text.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ctxgraph import ContextService


class Baseline(Protocol):
    """The accumulated-context baseline (``benchmarks.suite.Accumulated``)."""

    where: dict[str, int]

    @property
    def total(self) -> int: ...

    def window(self, budget: int) -> tuple[int, int]: ...

    def tokens_for(self, items: Sequence[str], wanted: int) -> int: ...


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def _found(markdown: str, items: Sequence[str]) -> int:
    return sum(1 for item in items if item in markdown)


def _ms(values: Sequence[float], name: str) -> dict[str, float]:
    return {f"{name}_p50_ms": round(statistics.median(values), 2),
            f"{name}_p95_ms": round(percentile(values, 95), 2),
            f"{name}_p99_ms": round(percentile(values, 99), 2)}


def _quality(svc: ContextService, ids: Sequence[str], planted: dict[str, Any], base: Baseline) -> dict[str, Any]:
    """Each query's first context: tokens, planted recall, the baseline's figures."""
    recalls, tokens, base_tokens, base_recalls, same_recall = [], [], [], [], []
    for tid in ids:
        ctx = svc.compute(tid)
        items = planted[tid].items
        found = _found(ctx.markdown, items)
        recalls.append(found / len(items))
        tokens.append(ctx.tokens)
        first, used = base.window(ctx.budget)
        base_tokens.append(used)
        base_recalls.append(sum(1 for i in items if base.where[i] >= first) / len(items))
        same_recall.append(base.tokens_for(items, found))
    tokens_mean = statistics.mean(tokens)
    same = statistics.mean(same_recall)
    return {
        "tokens": round(tokens_mean),
        "planted_recall": round(statistics.mean(recalls), 3),
        "accumulated_tokens": round(statistics.mean(base_tokens)),
        "accumulated_recall": round(statistics.mean(base_recalls), 3),
        "accumulated_full_tokens": base.total,
        "accumulated_tokens_same_recall": round(same),
        "token_ratio": round(tokens_mean / statistics.mean(base_tokens), 4),
        "token_ratio_same_recall": round(tokens_mean / same, 5) if same else None,
    }


def measure(
    svc: ContextService,
    queries: Sequence[str],
    planted: dict[str, Any],
    base: Baseline,
    *,
    store: str,
    nodes: int,
    vectors: bool,
    calls: int,
    signal_calls: int,
    say: Callable[[str], None],
    seconds: float = 90.0,
    warmup: float = 0.0,
) -> list[dict[str, Any]]:
    """One row per configuration (see the module docstring): quality figures from
    each query's first context, then ``warmup`` seconds of untimed contexts (a
    JVM server's compiler settles), then ``calls`` timed contexts of each
    configuration (and ``signal_calls`` of an unsaved task), alternating which
    goes first, each loop stopping early after ``seconds`` (two thirds and one
    third of it) once every query ran once. The vectors row has
    ``p95_vs_full_text``: its ``compute_p95_ms`` over the full-text one's."""
    configs = (True, False) if vectors else (False,)
    ids = list(queries)
    tasks = [svc.get_task(q) for q in ids]

    def use(config: bool) -> None:
        svc.task_vectors = config

    quality = {}
    for config in configs:
        use(config)
        quality[config] = _quality(svc, ids, planted, base)

    warm, until = 0, time.perf_counter() + warmup
    while time.perf_counter() < until:
        use(configs[warm % len(configs)])
        svc.compute(ids[warm % len(ids)])
        warm += 1
    if warm:
        say(f"warm-up: {warm} untimed contexts in {warmup:.0f}s")
    # each row stands for a server process, which settles its heap after its
    # first context (ctxgraph.service.heap.settle, once per process: here per row)
    gc.collect()
    gc.freeze()

    def order(i: int) -> Sequence[bool]:
        return configs if i % 2 == 0 else configs[::-1]

    by_id: dict[bool, list[float]] = {c: [] for c in configs}
    deadline = time.perf_counter() + seconds * 2 / 3
    for i in range(calls):
        if i >= min(len(ids), 10) and time.perf_counter() > deadline:
            break
        for config in order(i):
            use(config)
            t0 = time.perf_counter()
            svc.compute(ids[i % len(ids)])
            by_id[config].append((time.perf_counter() - t0) * 1000)
    say("compute p50 " + ", ".join(f"{statistics.median(v):.2f} ms ({'vectors' if c else 'full text'})"
                                    for c, v in by_id.items()) + f" over {len(by_id[configs[0]])} calls each")

    inline: dict[bool, list[float]] = {c: [] for c in configs}
    signals: list[float] = []
    deadline = time.perf_counter() + seconds / 3
    for i in range(signal_calls):
        if i >= min(len(ids), 10) and time.perf_counter() > deadline:
            break
        task = tasks[i % len(tasks)]
        for config in order(i):
            use(config)
            fresh = task.model_copy(update={"signals": None, "objective": f"{task.objective} Pass {i}{config:d}."})
            t0 = time.perf_counter()
            svc.compute(fresh)
            inline[config].append((time.perf_counter() - t0) * 1000)
        text = f"{task.text} Again {i}."
        t0 = time.perf_counter()
        svc.extractor.extract(text, task.type)
        signals.append((time.perf_counter() - t0) * 1000)
    use(True)
    words = round(statistics.mean(len(t.text.split()) for t in tasks))

    rows = []
    for config in configs:
        rows.append({
            "store": store,
            "nodes": nodes,
            "vectors": config,
            "queries": len(ids),
            "calls": len(by_id[config]),
            "warmup_calls": warm,
            "signal_calls": len(inline[config]),
            **_ms(by_id[config], "compute"),
            **_ms(inline[config], "compute_inline"),
            "signals_p50_ms": round(statistics.median(signals), 2),
            "signals_words": words,
            **quality[config],
        })
    if vectors:
        rows[0]["p95_vs_full_text"] = round(rows[0]["compute_p95_ms"] / rows[1]["compute_p95_ms"], 2)
        rows[0]["inline_p95_vs_full_text"] = round(
            rows[0]["compute_inline_p95_ms"] / rows[1]["compute_inline_p95_ms"], 2)
        say(f"p95 with vectors / full-text p95: {rows[0]['p95_vs_full_text']}")
    return rows


__all__ = ["measure", "percentile"]
