"""Files named that no longer exist, on the sets built from released
packages (``benchmarks/release_sets.py``; issue 32): before and after the
freshness check, with the history's anchors made on the old release and
synced against the new one.

For each set, a git work tree is made holding the old release's package
files (one commit), and the history is loaded *without* the context map (as
``benchmarks/freshness_eval.py`` does: the history alone ranks the files)
into two embedded stores:

- **anchored**: with the work tree as the project's root, so every file a
  handoff names is anchored on the old release's code. The new release's
  files then replace the old ones in a second commit and ``sync`` runs:
  anchors of files git sees renamed follow them, the others gone are deleted.
- **plain**: without a root, so nothing is anchored (what ``freshness_eval``
  measures: only the just-in-time check of the files a context names).

Then every query is answered three ways, memory off:

- ``off``: the anchored store with no root (freshness off: the history's
  files as ranked);
- ``jit``: the plain store with the work tree at the new release as the root
  (files not in it are left out; nothing follows a rename);
- ``synced``: the anchored store, synced, with the same root (renamed files
  shown at their new paths, deleted ones left out).

A project with releases between the two (``Project.via``) has them
committed in turn, and a third store, **stepwise**, anchored like the first,
is synced after each commit, as the post-commit hook of ``ctxgraph hooks
install`` syncs a project: ``synced`` is then that store, and
``synced_once`` the store synced only after the last commit (git compares
the old release with the new one in one diff, and a file renamed and then
much changed is no longer paired with its old name).

``stale_at_5`` is the share of the first 5 files named that are not in the
new release's tree (the set's context map); recall is against the queries'
gold files in the new tree.

    python -m benchmarks.release_sets && python -m benchmarks.release_eval
    python -m benchmarks.release_eval pluggy --markdown
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.release_derive import Release
from benchmarks.release_sets import PROJECTS, ROOT, between, releases
from ctxgraph.evaluation.dataset import load_set
from ctxgraph.evaluation.protocol import summarize
from ctxgraph.evaluation.runner import load_history, run_queries
from ctxgraph.service import ContextService

MODES = ("off", "jit", "synced")


def _git(repo: Path, *args: str, when: str | None = None) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    subprocess.run(["git", "-c", "user.name=release-eval", "-c", "user.email=release-eval@localhost",
                    "-c", "commit.gpgsign=false", *args], cwd=repo, env=env, check=True, capture_output=True)


def write_tree(repo: Path, tree: Mapping[str, str]) -> None:
    """``repo``'s files (but ``.git``) replaced by ``tree``'s."""
    for path in sorted(repo.rglob("*"), reverse=True):
        if ".git" in path.relative_to(repo).parts:
            continue
        if path.is_file():
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    for rel, text in tree.items():
        out = repo / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")


def _commit(repo: Path, release: Release) -> None:
    write_tree(repo, release.tree)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", f"release {release.version}")


def _sync(svc: ContextService) -> dict[str, Any]:
    return {k: v for k, v in svc.sync().model_dump().items() if k not in ("root", "seconds")}


def run(folder: Path, old: Release, new: Release, via: Sequence[Release] = ()) -> dict[str, Any]:
    """Each mode's figures on the set in ``folder`` built from the releases
    ``old`` and ``new`` (with the releases ``via`` committed between them),
    and what the syncs found."""
    es = load_set(folder)
    name = es.meta.get("project") or es.name
    history_only = dataclasses.replace(es, files=())
    snapshot = frozenset(es.map_paths)
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / name
        repo.mkdir()
        _git(repo, "init", "-q")
        _commit(repo, old)
        stores = {kind: ContextService.open(Path(tmp) / f"{kind}.db")
                  for kind in ("plain", "anchored", *(("stepwise",) if via else ()))}
        try:
            for kind, svc in stores.items():
                svc.record_outcomes = False
                svc.root = None
                if kind != "plain":
                    svc.use_root(repo)
                load_history(svc, history_only)
            steps = []
            for release in via:
                _commit(repo, release)
                steps.append({"release": release.version, **_sync(stores["stepwise"])})
            _commit(repo, new)
            rows["sync"] = _sync(stores["anchored"])
            if via:
                steps.append({"release": new.version, **_sync(stores["stepwise"])})
                rows["sync_steps"] = steps
            modes = {"off": "anchored", "jit": "plain", "synced": "stepwise" if via else "anchored",
                     **({"synced_once": "anchored"} if via else {})}
            for mode, kind in modes.items():
                svc = stores[kind]
                svc.root = None
                if mode != "off":
                    svc.use_root(repo)
                outcomes, skipped, _ = run_queries(svc, es, memory=False)
                rows[mode] = summarize(outcomes["ctxgraph"], skipped, snapshot).as_dict()
        finally:
            for svc in stores.values():
                svc.close()
    return rows


def markdown(results: list[dict[str, Any]]) -> str:
    """The docs' table: per set, stale@5 and recall@5 / @10 in the three modes."""
    head = ("| set (old → new) | queries | history | stale@5 off → jit → synced | "
            "recall@5 off → jit → synced | recall@10 off → jit → synced |")
    lines = [head, "|---|---|---|---|---|---|"]
    for r in results:
        def trio(key: str, r: dict[str, Any] = r) -> str:
            return " → ".join(f"{r[m][key]:.3f}" for m in MODES)

        lines.append(f"| {r['set']} ({r['old']} → {r['new']}) | {r['queries']} | {r['history']} | "
                     f"{trio('stale_at_5')} | {trio('recall_at_5')} | {trio('recall_at_10')} |")
        if "synced_once" in r:
            once = r["synced_once"]
            lines.append(f"| {r['set']}, synced only after the last release | | | {once['stale_at_5']:.3f} | "
                         f"{once['recall_at_5']:.3f} | {once['recall_at_10']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.release_eval", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="sets under --sets (default: every project's)")
    parser.add_argument("--sets", type=Path, default=ROOT / ".cache" / "release-sets")
    parser.add_argument("--markdown", action="store_true", help="also print the docs' table")
    args = parser.parse_args(argv)
    by_name = {p.name: p for p in PROJECTS}
    results = []
    for name in args.names or [p.name for p in PROJECTS]:
        folder = args.sets / name
        if name not in by_name or not folder.is_dir():
            parser.error(f"no set {folder}: build it with python -m benchmarks.release_sets {name}")
        print(f"{name} ...", file=sys.stderr, flush=True)
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        rows = run(folder, *releases(by_name[name]), via=between(by_name[name]))
        result = {"set": name, "old": meta["old"].split("==")[1], "new": meta["pypi"].split("==")[1],
                  "history": meta["history"], "queries": meta["queries"], **rows}
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.markdown:
        print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
