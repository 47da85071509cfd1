"""The history import's noise rules measured on the five development sets
(issue 44, ``docs/history.md``): per repository, the commits read and what
each rule drops, and how the files of the dropped commits relate to the
files the sets' queries changed (their gold files).

    python -m benchmarks.history_rules                  # the five sets, a table
    python -m benchmarks.history_rules --json --sizes 10,20,40,80

Each set's repository is read as ``ctxgraph history import`` reads it, from
the set's ``snapshot`` (``meta.json``): the non-merge commits reachable from
it, newest first, renames followed to the snapshot's paths. The
repositories are bare mirrors under ``/work/.mirror`` (``--mirrors``), or
any clone: ``--repo click=PATH``.

For the mass-change threshold, the kept commits are put in buckets by their
number of files (after the file rules), and for each bucket: how many
commits, and of their files how many are gold files of some query (the
share, "gold/file"). A commit's files are evidence for each other; the
larger the commit, the thinner that evidence — the share says how thin.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ctxgraph.sources.git_log import read_log, run_git
from ctxgraph.sources.history import entries
from ctxgraph.sources.history_rules import RULES

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
MIRRORS = Path("/work/.mirror")
SETS = ("click", "werkzeug", "flask", "requests", "rich")
BUCKETS = (1, 2, 4, 8, 16, 24, 32, 40, 60, 100, 200, 10**9)


def _gold(folder: Path) -> set[str]:
    gold: set[str] = set()
    for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            gold.update(json.loads(line)["gold_files"])
    return gold


def _repo(name: str, meta: dict[str, Any], given: dict[str, Path], mirrors: Path) -> Path:
    if name in given:
        return given[name]
    return mirrors / meta["project"].replace("/", "+") / "repo"


def measure(name: str, repo: Path, folder: Path) -> dict[str, Any]:
    """The counts of one set (``mass_change`` off: every size is seen)."""
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    gold = _gold(folder)
    rules: Counter[str] = Counter()
    rule_files: Counter[str] = Counter()  # per commit rule: files of the commits it skips
    rule_gold: Counter[str] = Counter()  # ... that are gold files
    files_dropped: Counter[str] = Counter()
    buckets: dict[int, list[int]] = {b: [0, 0, 0] for b in BUCKETS}  # commits, files, gold files
    reverts: list[dict[str, str]] = []
    total = 0
    for entry in entries(read_log(repo, [meta["snapshot"]]), mass_change=10**9):
        total += 1
        for _, rule in entry.verdict.dropped:
            files_dropped[rule] += 1
        if entry.verdict.skipped:
            rules[entry.verdict.rule or ""] += 1
            rule_files[entry.verdict.rule or ""] += len(entry.files)
            rule_gold[entry.verdict.rule or ""] += sum(p in gold for _, p in entry.files)
            if entry.verdict.rule == "revert":
                reverts.append({"commit": entry.commit.id[:10], "reverts": entry.verdict.reverts[:10],
                                "subject": entry.commit.subject[:100]})
            continue
        paths = [p for status, p in entry.files if status != "D"]
        bucket = next(b for b in BUCKETS if len(entry.verdict.kept) <= b)
        buckets[bucket][0] += 1
        buckets[bucket][1] += len(paths)
        buckets[bucket][2] += sum(p in gold for p in paths)
    merges = int(run_git(repo, "rev-list", "--count", "--merges", meta["snapshot"]).stdout.strip() or 0)
    return {"set": name, "repository": meta["project"], "snapshot": meta["snapshot"][:10], "merges": merges,
            "commits": total, "kept": total - sum(rules.values()), "skipped": dict(sorted(rules.items())),
            "files_dropped": dict(sorted(files_dropped.items())),
            "skipped_files": {r: {"files": rule_files[r], "gold_files": rule_gold[r]} for r in sorted(rules)},
            "buckets": [{"up_to": b, "commits": c, "files": f, "gold_files": g} for b, (c, f, g) in buckets.items()],
            "reverts": reverts}


def mass_change_table(rows: list[dict[str, Any]]) -> list[str]:
    """Per bucket of files per commit, over every set: commits, share of the
    kept commits, and the share of their files that are gold files."""
    lines = ["| files per commit | commits | share | gold/file |", "|---|---|---|---|"]
    low = 1
    all_commits = sum(b["commits"] for r in rows for b in r["buckets"])
    for i, up_to in enumerate(BUCKETS):
        c = sum(r["buckets"][i]["commits"] for r in rows)
        f = sum(r["buckets"][i]["files"] for r in rows)
        g = sum(r["buckets"][i]["gold_files"] for r in rows)
        label = f"{low}-{up_to}" if up_to < 10**9 else f"{low}+"
        lines.append(f"| {label} | {c:,} | {c / max(all_commits, 1):.1%} | {g / max(f, 1):.3f} |")
        low = up_to + 1
    return lines


def gold_table(rows: list[dict[str, Any]], mass_change: int) -> list[str]:
    """Per commit rule, over every set: the files of the commits it skips and
    the share of them that are gold files; beside it, the commits kept."""
    lines = ["| commits | files | gold/file |", "|---|---|---|"]
    names = sorted({r for row in rows for r in row["skipped_files"]})
    lines[0] = "| rule | files | gold/file |"
    for name in names:
        f = sum(row["skipped_files"].get(name, {}).get("files", 0) for row in rows)
        g = sum(row["skipped_files"].get(name, {}).get("gold_files", 0) for row in rows)
        lines.append(f"| {name} | {f:,} | {g / max(f, 1):.3f} |")
    for label, keep in ((f"mass-change (over {mass_change})", lambda b: b > mass_change),
                        ("kept", lambda b: b <= mass_change)):
        f = sum(b["files"] for row in rows for b in row["buckets"] if keep(b["up_to"]))
        g = sum(b["gold_files"] for row in rows for b in row["buckets"] if keep(b["up_to"]))
        lines.append(f"| {label} | {f:,} | {g / max(f, 1):.3f} |")
    return lines


def rules_table(rows: list[dict[str, Any]], mass_change: int) -> list[str]:
    """Per set: commits read, merges, kept, skipped per rule (mass-change at ``mass_change``)."""
    names = [r for r in RULES if r not in ("lock", "vendored", "generated")]
    lines = ["| set | merges | commits | kept | " + " | ".join(names) + " | files dropped (lock/vendored/generated) |",
             "|---" * (len(names) + 5) + "|"]
    for r in rows:
        mass = sum(b["commits"] for b in r["buckets"] if b["up_to"] > mass_change)
        skipped = {**r["skipped"], "mass-change": mass}
        kept = r["kept"] - mass
        fd = r["files_dropped"]
        lines.append(f"| {r['set']} | {r['merges']:,} | {r['commits']:,} | {kept:,} ({kept / r['commits']:.1%}) | "
                     + " | ".join(f"{skipped.get(n, 0):,}" for n in names)
                     + f" | {fd.get('lock', 0)}/{fd.get('vendored', 0)}/{fd.get('generated', 0)} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.history_rules", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="*", default=list(SETS))
    parser.add_argument("--eval", type=Path, default=EVAL, help="the folder of the sets (../shared/eval)")
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--repo", action="append", default=[], help="NAME=PATH: the repository of a set")
    parser.add_argument("--mass-change", type=int, default=40, help="the threshold the rules table uses")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    given = {k: Path(v) for k, v in (r.split("=", 1) for r in args.repo)}
    rows = []
    for name in args.sets:
        folder = args.eval / name
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        print(f"{name}: reading {meta['project']}", file=sys.stderr)
        rows.append(measure(name, _repo(name, meta, given, args.mirrors), folder))
    if args.json:
        print(json.dumps({"rows": rows}, indent=2))
        return 0
    print("\n".join(rules_table(rows, args.mass_change)))
    print()
    print("\n".join(mass_change_table(rows)))
    print()
    print("\n".join(gold_table(rows, args.mass_change)))
    print()
    for r in rows:
        print(f"{r['set']}: {len(r['reverts'])} reverts: "
              + "; ".join(f"{v['commit']} ({v['subject']})" for v in r["reverts"][:5]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
