"""Evaluation sets of our own from released packages (issue 32): two sdists
of a project fetched with pip, the old release's changelog as the history,
the new release's as the queries, the new release's tree as the snapshot.
How the rows are derived, and what that cannot say, is in
``benchmarks/release_derive.py``'s text.

    python -m benchmarks.release_sets                 # every project below
    python -m benchmarks.release_sets jinja2 pluggy   # some of them

The sdists are fetched with ``pip download --no-deps --no-binary :all:``
into ``$CTXGRAPH_BENCH_CACHE/release-src`` (``.cache/release-src`` without
it) and the sets are written to ``.cache/release-sets/NAME`` (``--out``):
both git-ignored, third-party text that is never committed. Each set has
the files of ``../shared/eval`` (``history.jsonl``, ``context_map.jsonl``,
``queries.jsonl``, ``meta.json``) so that ``ctxgraph eval``,
``python -m benchmarks.freshness_eval DIR`` and
``python -m benchmarks.release_eval`` run it. ``meta.json`` also names the
old release, the files gone between the two and the derivation's counts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.release_derive import Release, build_rows

ROOT = Path(__file__).resolve().parents[1]
#: Seconds one ``pip download`` may take.
FETCH_TIMEOUT = 600
CHANGELOGS = ("CHANGES.rst", "CHANGELOG.rst", "CHANGELOG.md", "CHANGES.md", "HISTORY.rst", "NEWS.rst")


@dataclass(frozen=True)
class Project:
    """A project and the two releases a set compares. ``package_dir``: the
    package's folder in its wheel; ``prefix``: that folder in the sdist (and
    the repository)."""

    name: str
    dist: str
    old: str
    new: str
    package: str
    prefix: str
    #: Releases between the two, committed (and synced) in turn by
    #: ``release_eval``, as a post-commit hook would sync a real project's history.
    via: tuple[str, ...] = ()

    @property
    def package_dir(self) -> str:
        return f"{self.package}/"


#: Pairs chosen because files were deleted or renamed between them (a diff of
#: the sdists' file lists), each of a moderate size (7 to 43 Python files).
PROJECTS = (
    # 2.11 -> 3.0: Python 2 support dropped (_compat.py), the async modules merged (async_utils.py).
    Project("jinja2", "Jinja2", "2.11.3", "3.0.3", "jinja2", "src/jinja2/"),
    # 1.26 -> 2.0: six, the App Engine and NTLM contribs and request.py removed.
    Project("urllib3", "urllib3", "1.26.15", "2.0.7", "urllib3", "src/urllib3/"),
    # 0.13 -> 1.0: callers/hooks/manager.py made private (_callers.py, ...), _result.py split out; by
    # 1.5 the renamed files changed too much for git to pair them with the old ones in one diff.
    Project("pluggy", "pluggy", "0.13.1", "1.5.0", "pluggy", "src/pluggy/", via=("1.0.0", "1.2.0", "1.3.0", "1.4.0")),
    # 0.13 -> 0.18: the transports rewritten (urllib3 transport gone), content streams split.
    Project("httpx", "httpx", "0.13.3", "0.18.2", "httpx", "httpx/"),
)


def cache_dir() -> Path:
    base = os.environ.get("CTXGRAPH_BENCH_CACHE")
    return (Path(base) if base else ROOT / ".cache") / "release-src"


def fetch(dist: str, version: str, cache: Path | None = None) -> Path:
    """The release's sdist (fetched with pip on first use)."""
    folder = (cache or cache_dir()) / f"{dist}-{version}"
    found = sorted(folder.glob("*.tar.gz")) if folder.is_dir() else []
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    print(f"fetching {dist}=={version} (sdist) ...", file=sys.stderr, flush=True)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--quiet",
             "--disable-pip-version-check", "--dest", str(folder), f"{dist}=={version}"],
            capture_output=True, text=True, check=False, timeout=FETCH_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"release_sets: error: pip download {dist}=={version} took over {FETCH_TIMEOUT} s "
                         "(pip builds an sdist's metadata, which may fetch its build backend)") from None
    found = sorted(folder.glob("*.tar.gz"))
    if done.returncode != 0 or not found:
        why = (done.stderr.strip().splitlines() or ["no sdist"])[-1]
        raise SystemExit(f"release_sets: error: could not fetch {dist}=={version} with pip: {why}")
    return found[0]


def read_sdist(path: Path, version: str, prefix: str) -> Release:
    """The package's Python files under their repository paths, and the changelog."""
    tree: dict[str, str] = {}
    logs: dict[str, str] = {}
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            rel = member.name.split("/", 1)[1] if "/" in member.name else ""
            wanted = rel.startswith(prefix) and rel.endswith(".py")
            if not (wanted or rel in CHANGELOGS):
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            text = handle.read().decode("utf-8", errors="replace")
            (tree if wanted else logs)[rel] = text
    changelog = next((logs[name] for name in CHANGELOGS if name in logs), None)
    if changelog is None:
        raise SystemExit(f"release_sets: error: {path.name} ships none of {', '.join(CHANGELOGS)}")
    return Release(version=version, tree=tree, changelog=changelog)


def releases(project: Project, cache: Path | None = None) -> tuple[Release, Release]:
    return (read_sdist(fetch(project.dist, project.old, cache), project.old, project.prefix),
            read_sdist(fetch(project.dist, project.new, cache), project.new, project.prefix))


def between(project: Project, cache: Path | None = None) -> list[Release]:
    """The releases ``project.via`` names, oldest first."""
    return [read_sdist(fetch(project.dist, v, cache), v, project.prefix) for v in project.via]


def write_set(folder: Path, rows: dict[str, Any], meta: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("history", "context_map", "queries"):
        with open(folder / f"{name}.jsonl", "w", encoding="utf-8") as out:
            for row in rows[name]:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    (folder / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def build(project: Project, out: Path, cache: Path | None = None) -> dict[str, Any]:
    """Build one set into ``out / project.name``; its meta."""
    old, new = releases(project, cache)
    rows = build_rows(old, new, prefix=project.prefix, package=project.package)
    meta = {
        "project": project.name,
        "pypi": f"{project.dist}=={project.new}",
        "package_dir": project.package_dir,
        "src_prefix": project.prefix,
        "old": f"{project.dist}=={project.old}",
        "via": list(project.via),
        "derivation": "changelog entries mapped to the files defining the names they mention "
                      "(benchmarks/release_derive.py)",
        **rows["stats"],
    }
    write_set(out / project.name, rows, meta)
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.release_sets", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"projects (default: all of {', '.join(p.name for p in PROJECTS)})")
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "release-sets")
    args = parser.parse_args(argv)
    by_name = {p.name: p for p in PROJECTS}
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        parser.error(f"unknown project(s): {', '.join(unknown)}")
    for name in args.names or list(by_name):
        meta = build(by_name[name], args.out)
        print(json.dumps({"set": name, "folder": str(args.out / name),
                          **{k: meta[k] for k in ("old", "pypi", "old_files", "new_files", "history",
                                                  "history_dropped", "history_naming_gone", "queries",
                                                  "queries_dropped", "gone", "gone_named")}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
