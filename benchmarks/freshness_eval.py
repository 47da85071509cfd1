"""Files named that no longer exist, before and after the context's freshness check (issue 32).

On an evaluation set (``../shared/eval/SET``) loaded *without* its context
map — what a project gets from ``ctxgraph init`` and handoffs alone, where
the history ranks every file it ever touched, deleted ones too — the
queries' contexts are computed twice on the same store: with no project
root (freshness off) and with the release's source at the snapshot as the
root (``ctxgraph eval --index-source``'s tree; freshness on, so files not in
it are left out). The set's context map is used only as the snapshot's file
list: for ``stale_at_5`` (the share of the first 5 files named that are not
in it) and for skipping queries as ``ctxgraph eval`` does. The memory is
off in both (the figures are the history's ranking alone).

    python -m benchmarks.freshness_eval click werkzeug
"""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
from pathlib import Path

from ctxgraph.evaluation.dataset import load_set
from ctxgraph.evaluation.protocol import summarize
from ctxgraph.evaluation.runner import load_history, run_queries
from ctxgraph.evaluation.source import source_tree
from ctxgraph.service import ContextService

SETS = Path(__file__).resolve().parents[1].parent / "shared" / "eval"


def run(name: str) -> dict[str, dict[str, float | int]]:
    es = load_set(SETS / name if not Path(name).is_dir() else Path(name))
    src = source_tree(es.meta, es.name)
    rows: dict[str, dict[str, float | int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        svc = ContextService.open(Path(tmp) / "graph.db")
        try:
            svc.record_outcomes = False
            load_history(svc, dataclasses.replace(es, files=()))
            for fresh in (False, True):
                svc.root = None
                if fresh:
                    svc.use_root(src)
                outcomes, skipped, _ = run_queries(svc, es, memory=False)
                rows["on" if fresh else "off"] = summarize(
                    outcomes["ctxgraph"], skipped, frozenset(es.map_paths)).as_dict()
        finally:
            svc.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or ["click"]
    for name in names:
        rows = run(name)
        print(json.dumps({"set": name, **rows}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
