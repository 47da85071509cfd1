"""The speed-and-scale suite: one (store, size) per process, through the public API.

For each (store, size) a synthetic project (``benchmarks.generator``) is
loaded into an empty store with ``ContextService`` — context map, then tasks,
then handoffs, all batched — then given the vectors ``ingest handoff`` leaves
with the model installed (``benchmarks.vectors``: every finished task's vector
and the measured tasks' stored query vectors), and the query tasks' contexts
are computed many times in two configurations, interleaved
(``benchmarks.measure``): with vectors (the default path) and full text. Each
configuration is a row (``vectors: true/false``); ``--full-text`` loads no
vectors and measures the full-text row alone. Per row:

- ingest throughput (the same load for both rows; embedding excluded, it is
  ``embed_s``, mostly cached — ingestion with embeddings is
  ``python -m benchmarks --embedding``): handoffs/s (``ingest_handoffs``
  alone), tasks/s (``add_tasks``, signals included) and nodes/s (content nodes
  over the whole load);
- ``compute`` latency p50/p95/p99 of a stored task by id, and of an unsaved
  (inline) task: ``compute_inline_*`` (see ``benchmarks.measure``); the vectors
  row's ``p95_vs_full_text`` is its p95 over the full-text row's;
- signals alone: ``SignalExtractor.extract`` of a fresh ~100-word query text;
- rendered tokens and ``planted_recall`` (the share of the planted items —
  knowledge markers and file paths — the Markdown names), mean over queries;
- the "accumulated context" baseline for the same queries: every document
  the orchestrator received (the context map, then each handoff in the order
  it arrived), truncated to the same budget keeping the most recent part, as
  a transcript window does. ``accumulated_tokens`` is what it renders,
  ``accumulated_recall`` what it finds, ``accumulated_full_tokens`` everything,
  and ``accumulated_tokens_same_recall`` the smallest recent window that
  reaches ctxgraph's recall on each query (mean);
- ``peak_rss_mb``: the peak resident set of the process that ran the rows
  (a Neo4j server's memory is not in it).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import kept
from benchmarks.generator import GENERATOR_VERSION, Dataset, generate
from benchmarks.measure import measure, percentile
from benchmarks.vectors import embed_graph
from ctxgraph import ContextService
from ctxgraph.core.models import FileEntry
from ctxgraph.core.tokens import estimate_tokens

FILE_BATCH = 5_000
TASK_BATCH = 5_000
HANDOFF_BATCH = 500

#: Keys every JSON row has (the issue's contract), then the extras.
REQUIRED_KEYS = (
    "store",
    "nodes",
    "vectors",
    "compute_p50_ms",
    "compute_p95_ms",
    "signals_p50_ms",
    "ingest_handoffs_per_s",
    "tokens",
    "accumulated_tokens",
    "planted_recall",
    "peak_rss_mb",
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def timing_parser(prog: str, doc: str | None, sizes: str = "1000", block: bool = False) -> argparse.ArgumentParser:
    """The options the off/on timing benchmarks share (``outcomes``, ``mcp``,
    ``decisions``): --sizes, --stores, --calls, --warmup, --seed, --json (and
    ``block``: --block, the calls per block of one mode)."""
    parser = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=sizes, help=f"node counts, comma-separated (default {sizes})")
    parser.add_argument("--stores", default="local", help="local and/or neo4j, comma-separated (default local)")
    parser.add_argument("--calls", type=int, default=200, help="timed calls per mode (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls first (default 20)")
    if block:
        parser.add_argument("--block", type=int, default=10, help="calls per block of one mode (default 10)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def timing_rows(args: argparse.Namespace, stores: Sequence[str], run: Callable[[str, int], dict[str, Any]]) -> (
        list[dict[str, Any]] | None):
    """``run(store, size)`` per size and store; printed as one JSON object
    with ``--json`` (then None: nothing left to print)."""
    rows = [run(store, int(size)) for size in args.sizes.split(",") if size.strip() for store in stores]
    if args.json:
        json.dump({"rows": rows}, sys.stdout, indent=2)
        print()
        return None
    return rows


def stores_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """``--stores`` as a list; Neo4j without ``NEO4J_URI`` is a usage error."""
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    if "neo4j" in stores and not os.environ.get("NEO4J_URI"):
        parser.error("--stores neo4j needs NEO4J_URI (and NEO4J_PASSWORD or NEO4J_PASSWORD_FILE)")
    return stores


def peak_rss_mb() -> float:
    """Peak resident set of this process so far, in MiB (Linux: ru_maxrss is KiB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / (1024 * 1024)


def machine() -> dict[str, Any]:
    mem_gib = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            kib = int(fh.readline().split()[1])
            mem_gib = round(kib / 1024 / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "memory_gib": mem_gib,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


# ------------------------------------------------------------------ the baseline


@dataclass(frozen=True)
class Accumulated:
    """The accumulated-context baseline of one dataset: chunk sizes in arrival
    order and, per planted item, the index of the chunk naming it."""

    chunk_tokens: list[int]
    where: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.chunk_tokens)

    def window(self, budget: int) -> tuple[int, int]:
        """(first chunk index kept, tokens) of the most recent chunks that fit ``budget``."""
        used = 0
        first = len(self.chunk_tokens)
        while first > 0 and used + self.chunk_tokens[first - 1] <= budget:
            first -= 1
            used += self.chunk_tokens[first]
        return first, used

    def tokens_for(self, items: Sequence[str], wanted: int) -> int:
        """Tokens of the smallest recent window naming ``wanted`` of ``items``."""
        if wanted <= 0:
            return 0
        starts = sorted((self.where[i] for i in items), reverse=True)
        first = starts[min(wanted, len(starts)) - 1]
        return sum(self.chunk_tokens[first:])


def accumulated(ds: Dataset) -> Accumulated:
    """Every document rendered as Markdown, one chunk per context-map line and
    per handoff (see the module docstring); planted items located."""
    wanted = {item for p in ds.planted.values() for item in p.items}
    chunk_tokens: list[int] = []
    where: dict[str, int] = {}

    def add(text: str) -> None:
        for item in wanted:
            if item in text:
                where.setdefault(item, len(chunk_tokens))
        chunk_tokens.append(estimate_tokens(text))

    add("## Context (Everything)\n\n### Context Map\n")
    for f in ds.files:
        add(f"- `{f['path']}` ({f['component']}): {f['notes']}\n")
    names = {t["id"]: t["name"] for t in ds.tasks}
    for h in ds.handoffs:
        lines = [f"\n### {h['task_id']}: {names[h['task_id']]} ({h['completed_at']})\n", f"{h['summary']}\n"]
        lines += [f"- created `{x['path']}`: {x['purpose']}\n" for x in h["files_created"]]
        lines += [f"- modified `{x['path']}`: {x['purpose']}\n" for x in h["files_modified"]]
        lines += [f"- read next `{x['file']}`: {x['reason']}\n" for x in h["dependencies_for_next"]]
        lines += [f"- pattern: {x['pattern']}\n" for x in h["patterns_discovered"]]
        lines += [f"- gotcha ({x['severity']}): {x['issue']}\n" for x in h["gotchas"]]
        lines += [f"- decision: {x['decision']} — {x['rationale']}\n" for x in h["decisions"]]
        lines += [f"- question: {x['question']}\n" for x in h["open_questions"]]
        add("".join(lines))
    missing = wanted - set(where)
    if missing:
        raise AssertionError(f"planted items absent from the documents: {sorted(missing)[:3]}")
    return Accumulated(chunk_tokens=chunk_tokens, where=where)


# ----------------------------------------------------------------------- one row


def open_service(store: str, folder: Path) -> ContextService:
    """The service on the row's store, with no project root: the synthetic
    graph's files exist in no tree, and a root found around the current
    folder (a Neo4j store's; this checkout, say) would have every context
    check its candidates against an unrelated work tree. The just-in-time
    check's own cost is measured by ``python -m benchmarks.sync``."""
    if store == "local":
        svc = ContextService.open(folder / "bench.db")
    elif store == "neo4j":
        uri = os.environ.get("NEO4J_URI")
        if not uri:
            raise SystemExit("store neo4j: set NEO4J_URI (and NEO4J_PASSWORD or NEO4J_PASSWORD_FILE)")
        svc = ContextService.open(neo4j_uri=uri)
    else:
        raise SystemExit(f"unknown store {store!r}: use local or neo4j")
    svc.root = None
    return svc


def reset(svc: ContextService, store: str, say: Callable[[str], None]) -> None:
    """Empty the store. On Neo4j in batches of auto-commit transactions
    (``benchmarks/cypher``): ``KnowledgeStore.clear`` deletes everything in one
    transaction, which runs out of transaction memory on a 100k-node graph."""
    if store != "neo4j":
        svc.store.clear()
        return
    from neo4j import GraphDatabase

    from ctxgraph.graph.neo4j_store import Neo4jSettings

    settings = Neo4jSettings.from_env()
    auth = (settings.user, settings.password) if settings.password is not None else None
    folder = Path(__file__).resolve().parent / "cypher"
    with GraphDatabase.driver(settings.uri, auth=auth) as driver, driver.session(database=settings.database) as session:
        for name in ("delete_relationships_batch", "delete_nodes_batch"):
            statement = (folder / f"{name}.cypher").read_text(encoding="utf-8")
            total = 0
            while True:
                deleted = session.run(statement, batch=50_000).single(strict=True)["deleted"]
                total += deleted
                if not deleted:
                    break
            if total:
                say(f"reset: {name.split('_')[1]} deleted: {total:,}")


def _batches(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def ingest(
    svc: ContextService,
    ds: Dataset,
    say: Callable[[str], None],
    *,
    files: bool = True,
    tasks: Sequence[dict[str, Any]] | None = None,
    handoffs: Sequence[dict[str, Any]] | None = None,
) -> dict[str, float]:
    """Load (part of) the dataset through the API; seconds per phase. No query
    vector is embedded meanwhile (``benchmarks.vectors`` adds them after)."""
    before, svc.task_vectors = svc.task_vectors, False
    tasks = ds.tasks if tasks is None else tasks
    handoffs = ds.handoffs if handoffs is None else handoffs
    t0 = time.perf_counter()
    if files:
        for batch in _batches(ds.files, FILE_BATCH):
            svc.add_files([FileEntry(**f) for f in batch])
    t1 = time.perf_counter()
    done = 0
    for batch in _batches(tasks, TASK_BATCH):
        svc.add_tasks(batch)
        done += len(batch)
        say(f"tasks {done:,}/{len(tasks):,}")
    t2 = time.perf_counter()
    done = 0
    for batch in _batches(handoffs, HANDOFF_BATCH):
        svc.ingest_handoffs([(h["task_id"], h) for h in batch])
        done += len(batch)
        if done % (HANDOFF_BATCH * 10) == 0 or done == len(handoffs):
            say(f"handoffs {done:,}/{len(handoffs):,}")
    t3 = time.perf_counter()
    svc.task_vectors = before
    return {"files_s": t1 - t0, "tasks_s": t2 - t1, "handoffs_s": t3 - t2}


def cache_dir() -> Path:
    return Path(os.environ.get("CTXGRAPH_BENCH_CACHE") or Path(".ctxgraph") / "bench-cache")


def prefix_rows(ds: Dataset, split: int, say: Callable[[str], None]) -> Path:
    """The graph of the first ``split`` finished tasks (context map, those tasks
    and their handoffs) as an export file, built once through the API into an
    embedded store and cached (keyed by generator version, size, seed and split)."""
    path = cache_dir() / f"prefix-v{GENERATOR_VERSION}-{ds.nodes}-{ds.seed}-{split}.jsonl"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    say(f"building the bulk part once through the API ({split:,} handoffs; cached in {path.parent})")
    with (
        tempfile.TemporaryDirectory(prefix="ctxgraph-bench-") as tmp,
        ContextService.open(Path(tmp) / "prefix.db") as svc,
    ):
        ingest(svc, ds, say, tasks=ds.tasks[:split], handoffs=ds.handoffs[:split])
        part = path.with_suffix(".part")
        with part.open("w", encoding="utf-8") as fh:
            for row in svc.store.export_rows():
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        part.replace(path)
    return path


def bulk_load(svc: ContextService, path: Path) -> None:
    """Write an export file into the store (``KnowledgeStore.import_rows``, batched)."""
    with path.open(encoding="utf-8") as fh:
        svc.store.import_rows(json.loads(line) for line in fh)


def load(svc: ContextService, ds: Dataset, tail: int, say: Callable[[str], None]) -> dict[str, float]:
    """Load the dataset; the last ``tail`` finished tasks (and every pending task)
    with their handoffs go through the API and are timed, the rest is bulk-loaded."""
    split = len(ds.handoffs) - tail
    if split <= 0:
        return ingest(svc, ds, say) | {"bulk_s": 0.0}
    path = prefix_rows(ds, split, say)
    t0 = time.perf_counter()
    bulk_load(svc, path)
    bulk_s = time.perf_counter() - t0
    say(f"bulk-loaded the first {split:,} handoffs in {bulk_s:.1f}s")
    return ingest(svc, ds, say, files=False, tasks=ds.tasks[split:], handoffs=ds.handoffs[split:]) | {"bulk_s": bulk_s}


def default_tail(ds: Dataset, quick: bool = False) -> int:
    """Handoffs timed through the API: all of them up to 10,000 nodes, else
    1,000 (200 with ``quick``)."""
    return len(ds.handoffs) if ds.nodes <= 10_000 else min(200 if quick else 1_000, len(ds.handoffs))


def _embedded(svc: ContextService, queries: Sequence[str], say: Callable[[str], None]) -> dict[str, Any]:
    """``benchmarks.vectors.embed_graph``; a model that cannot load ends the row
    with one line saying so."""
    from ctxgraph.memory.embed import EmbeddingUnavailableError

    try:
        return embed_graph(svc, queries, cache_dir(), say)
    except EmbeddingUnavailableError as exc:
        raise SystemExit(f"the vectors configuration needs the embedding model: {exc} "
                         "(or pass --full-text to measure the full-text rows alone)") from None


def run_row(
    store: str,
    nodes: int,
    *,
    seed: int = 42,
    calls: int = 300,
    signal_calls: int = 60,
    tail: int | None = None,
    seconds: float = 90.0,
    quick: bool = False,
    warmup: float = 0.0,
    keep: Path | None = None,
    vectors: bool = True,
) -> list[dict[str, Any]]:
    """Measure one (store, size): the vectors row then the full-text row, or the
    full-text row alone without ``vectors`` (see the module docstring; ``keep``:
    ``benchmarks.kept``)."""

    def say(message: str) -> None:
        log(f"[{store} {nodes:,}] {message}")

    say("generating")
    ds = generate(nodes, seed)
    base = accumulated(ds)
    tail = min(len(ds.handoffs), default_tail(ds, quick) if tail is None else tail)
    split = len(ds.handoffs) - tail
    timed = ds.handoffs[split:]
    timed_tasks, timed_handoffs = len(ds.tasks[split:] if split > 0 else ds.tasks), len(timed)
    knowledge = sum(len(h[k]) for h in timed for k in ("patterns_discovered", "gotchas", "decisions", "open_questions"))
    written = timed_tasks + timed_handoffs + knowledge + (len(ds.files) if split <= 0 else 0)
    with contextlib.ExitStack() as stack:
        where = kept.folder(keep, store, nodes, seed) if keep else Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="ctxgraph-bench-")))
        svc = stack.enter_context(contextlib.closing(open_service(store, where)))
        expect = kept.identity(store, nodes, seed, tail, vectors)
        facts = kept.read(where, expect, sum(svc.stats()["labels"].values())) if keep else None
        reused = facts is not None
        if facts is None:
            if keep:
                kept.forget(where)
            reset(svc, store, say)
            facts = load(svc, ds, tail, say)
            if vectors:
                facts |= _embedded(svc, ds.queries, say)
            facts["graph_nodes"] = sum(svc.stats()["labels"].values())
            say(f"loaded in {sum(v for k, v in facts.items() if k.endswith('_s')):.1f}s "
                f"({facts['graph_nodes']:,} graph nodes)")
            if keep:
                kept.write(where, expect, facts)
        else:
            say(f"measuring the graph kept in {where} ({facts['graph_nodes']:,} graph nodes)")
        # The generated documents are not needed any more: released, so that the
        # garbage collector's full passes during the timed loops do not walk the
        # harness's own data (~240,000 lists at 100,000 nodes, ~250 ms a pass).
        queries, planted = ds.queries, ds.planted
        del ds, timed
        gc.collect()
        rows = measure(svc, queries, planted, base, store=store, nodes=nodes, vectors=vectors, calls=calls,
                       signal_calls=signal_calls, say=say, seconds=seconds, warmup=warmup)
        if store == "neo4j" and not keep:
            reset(svc, store, say)
    api_s = facts["files_s"] + facts["tasks_s"] + facts["handoffs_s"]
    shared = {
        "graph_nodes": facts["graph_nodes"],
        "ingest_handoffs_per_s": round(timed_handoffs / facts["handoffs_s"], 1),
        "ingest_tasks_per_s": round(timed_tasks / facts["tasks_s"], 1),
        "ingest_nodes_per_s": round(written / api_s, 1),
        "ingest_timed_handoffs": timed_handoffs,
        "bulk_load_s": round(facts["bulk_s"], 2),
        "ingest_s": round(api_s, 2),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "kept_graph": reused,
    }
    if vectors:
        shared |= {"embed_s": round(facts["embed_s"], 2), "task_vectors": facts["task_vectors"]}
    out = []
    for row in rows:
        row.update(shared)
        out.append({k: row[k] for k in (*REQUIRED_KEYS, *sorted(set(row) - set(REQUIRED_KEYS)))})
    return out


__all__ = ["REQUIRED_KEYS", "accumulated", "machine", "percentile", "run_row"]
