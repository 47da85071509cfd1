"""Code notes as gotchas, measured on the evaluation sets' own repositories
(docs/knowledge-import.md; issue 44 item 3).

For each set, the repository's tree at the set's ``snapshot`` (``git archive``
from a bare mirror, into a temporary folder) is imported with
``ContextService.import_project_knowledge`` into an embedded store holding
the set's context map. Then:

- the rules: markers found in the files the import reads, by form and
  marker, and those dropped, by rule (``ctxgraph.sources.notes``);
- precision against the gold files: for each query the context ctxgraph
  computes for it (memory off: the gotchas do not depend on it; with
  ``--history``, the store also holds the set's history, as an evaluation
  run's does, and the contexts are computed as of its end), the gotchas
  it shows; ``precision`` is the share of them anchored in one of the
  query's ``gold_files`` (over all gotchas shown; ``macro``: the mean over the
  queries that show any), ``hit`` the share of queries with at least one
  such gotcha. ``bm25`` is the same for the same number of gotchas per query
  picked from the same imported gotchas by BM25 over their text (the
  evaluation's ``bm25`` baseline: ``bm25s``, its tokenizer; exactly as many,
  id breaking ties, so both have the same denominator), the query being the
  task's name and objective. ``tokens`` is the largest context and the
  budget it had.

    python -m benchmarks.knowledge_notes [--sets click,flask] [--eval-dir ../shared/eval]
        [--mirrors /work/.mirror] [--history] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from ctxgraph.evaluation.dataset import EvalSet, load_set
from ctxgraph.evaluation.knowledge import KnowledgeScore
from ctxgraph.evaluation.runner import load_history
from ctxgraph.graph.local import LocalStore
from ctxgraph.memory.scan import SourceFile, walk
from ctxgraph.service import ContextService
from ctxgraph.service.project_notes import note_file
from ctxgraph.sources.notes import read_notes

SETS = ("click", "werkzeug", "flask", "requests", "rich")


def tree_at(mirrors: Path, project: str, commit: str, into: Path) -> Path:
    """The repository's files at ``commit`` (``git archive`` of the bare mirror) under ``into``."""
    git_dir = mirrors / project.replace("/", "+") / "repo"
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def rules(root: Path) -> dict[str, Any]:
    """Markers found and kept by form and marker, dropped by rule, over the files the import reads."""
    kept: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    markers: Counter[str] = Counter()
    for f in walk(root):
        if isinstance(f, SourceFile) and note_file(f.path):
            found = read_notes(f.path, f.text)
            kept.update(n.form for n in found.notes)
            markers.update(n.marker for n in found.notes)
            dropped.update(d.reason for d in found.dropped)
    total = sum(kept.values()) + sum(dropped.values())
    return {"found": total, "kept": dict(sorted(kept.items())), "markers": dict(markers.most_common()),
            "dropped": dict(dropped.most_common())}


def measure(name: str, data: EvalSet, root: Path, store_path: Path, *, history: bool = False) -> dict[str, Any]:
    store = LocalStore.open(store_path)
    svc = ContextService(store)
    svc.record_outcomes = False
    svc.task_vectors = False
    now = data.snapshot if history else None
    try:
        if history:
            load_history(svc, data)
        else:
            svc.add_files(list(data.files))
        report = svc.import_project_knowledge(root, adrs=True, notes=True, adr_dirs=())
        ids = [i for f in store.imported_files("knowledge") if f.kind == "notes" for i in f.items]
        items = {k.id: k for k in store.get_knowledge(ids)}
        paths = {k.id: (k.location or "").rsplit(":", 1)[0] for k in items.values()}
        score = KnowledgeScore(paths, {i: k.summary for i, k in items.items()})
        shown_queries = 0
        largest = (0, 0)
        for q in data.queries:
            ctx = svc.compute(q.task(), record=False, memory=False, now=now)
            largest = max(largest, (ctx.tokens, ctx.budget))
            shown = [w.id for w in ctx.warnings if w.id in paths]
            shown_queries += bool(shown)
            score.add(q.text, shown, q.gold_files)
    finally:
        store.close()
    return {"set": name, "import": report.as_dict(), "queries": len(data.queries),
            "queries_shown": shown_queries, **{k: v for k, v in score.as_dict().items() if k in ("ctxgraph", "bm25")},
            "tokens": {"max": largest[0], "budget": largest[1]},
            "gotchas_in_source": sum(1 for p in paths.values() if p in set(data.map_paths))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--eval-dir", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "eval",
                        help="the folder of the sets (default: ../shared/eval)")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--history", action="store_true", help="load the set's history into the store too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for name in args.sets.split(","):
        data = load_set(args.eval_dir / name)
        with tempfile.TemporaryDirectory(prefix=f"notes-{name}-") as tmp:
            (Path(tmp) / "tree").mkdir()
            root = tree_at(args.mirrors, data.meta["project"], data.meta["snapshot"], Path(tmp) / "tree")
            row = measure(name, data, root, Path(tmp) / "graph.db", history=args.history)
            row["rules"] = rules(root)
        rows.append(row)
        print(_line(row), file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(table(rows))
    return 0


def _line(row: dict[str, Any]) -> str:
    c, b = row["ctxgraph"], row["bm25"]
    return (f"{row['set']}: {row['import']['gotchas']} gotchas; shown for {row['queries_shown']}/{row['queries']} "
            f"queries; precision ctxgraph {c['precision']} bm25 {b['precision']}")


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| set | gotchas (in source files) | dropped | queries shown any | shown | ctxgraph precision / macro "
            "/ hit | bm25 precision / macro / hit | max tokens / budget |\n|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| {r['set']} | {r['import']['gotchas']} ({r['gotchas_in_source']}) | {sum(r['rules']['dropped'].values())} "
        f"| {r['queries_shown']}/{r['queries']} | {r['ctxgraph']['shown']} "
        f"| {r['ctxgraph']['precision']} / {r['ctxgraph']['macro']} / {r['ctxgraph']['hit']} "
        f"| {r['bm25']['precision']} / {r['bm25']['macro']} / {r['bm25']['hit']} "
        f"| {r['tokens']['max']} / {r['tokens']['budget']} |\n" for r in rows)
    return head + body


if __name__ == "__main__":
    sys.exit(main())
