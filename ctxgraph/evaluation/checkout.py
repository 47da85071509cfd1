"""The repository of an evaluation set at its snapshot (``ctxgraph eval SET
--repo GIT_DIR``, :mod:`ctxgraph.evaluation.repo`).

A set's ``meta.json`` names the public repository (``"project":
"pallets/click"``) and ``snapshot``, the full id of the commit just before
the first query's. :func:`checkout` makes a work tree of ``GIT_DIR`` (any
repository git can clone from: a bare mirror, a work tree) at that commit:
``git clone --shared --no-checkout`` (objects are read from ``GIT_DIR``, not
copied) then ``git checkout --detach SNAPSHOT``, in the cache folder
(:func:`~ctxgraph.evaluation.source.cache_dir`), under ``eval-repo/`` and a
name made of the project and the commit. It is made in a temporary folder
beside it and moved into place, then marked complete by a file inside its
``.git`` (where no listing of the tree sees it); a later run reuses a
complete one. The clone reads its objects from ``GIT_DIR``: moving or
deleting that repository breaks the cached work tree (delete it to make it
again).

:func:`package_tree` copies the files under ``src_prefix`` (the package the
history speaks of) out of a checkout, under their repository paths, for a
run that indexes the package alone.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxgraph.errors import ConfigurationError
from ctxgraph.evaluation.source import cache_dir
from ctxgraph.sources.git_log import GitError, run_git

#: The file inside a checkout's ``.git`` that says it is complete.
MARKER = "ctxgraph-eval-complete"
_COMMIT = re.compile(r"[0-9a-f]{40}")
_PROJECT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")
_FOLDER = re.compile(r"([A-Za-z0-9._-]+/)+")


def snapshot_of(meta: dict[str, Any], set_name: str) -> tuple[str, str]:
    """(project, snapshot commit) of ``meta.json``, checked."""
    project, snapshot = meta.get("project"), meta.get("snapshot")
    if not (isinstance(project, str) and _PROJECT.fullmatch(project)):
        raise ConfigurationError(f"{set_name}: meta.json needs \"project\": \"owner/name\" for --repo")
    if not (isinstance(snapshot, str) and _COMMIT.fullmatch(snapshot)):
        raise ConfigurationError(f"{set_name}: meta.json needs \"snapshot\": a full commit id (40 hex digits) "
                                 "for --repo")
    return project, snapshot


def src_prefix_of(meta: dict[str, Any], set_name: str) -> str:
    """``meta.json``'s ``src_prefix``, checked (a relative folder ending in ``/``)."""
    prefix = meta.get("src_prefix")
    if not (isinstance(prefix, str) and _FOLDER.fullmatch(prefix)) or ".." in prefix.split("/"):
        raise ConfigurationError(f"{set_name}: meta.json needs 'src_prefix' as a relative folder ending in '/'")
    return prefix


def checkout(repo: Path, meta: dict[str, Any], set_name: str, cache: Path | None = None) -> Path:
    """The work tree of ``repo`` at the set's snapshot (made on first use, then reused)."""
    project, snapshot = snapshot_of(meta, set_name)
    base = (cache or cache_dir()).resolve() / "eval-repo"
    target = base / f"{project.replace('/', '+')}-{snapshot[:12]}"
    if (target / ".git" / MARKER).is_file():
        return target
    source = repo.resolve()
    if not source.is_dir():
        raise ConfigurationError(f"{repo}: no such folder")
    if run_git(source, "rev-parse", "--git-dir", check=False).returncode != 0:
        raise ConfigurationError(f"{repo}: not a git repository")
    if run_git(source, "cat-file", "-e", f"{snapshot}^{{commit}}", check=False).returncode != 0:
        raise ConfigurationError(f"{repo}: has no commit {snapshot} (the snapshot of {set_name}, in {project}); "
                                 f"--repo needs a clone of {project}")
    base.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=base, prefix=".clone-") as tmp:
        work = Path(tmp) / "tree"
        try:
            run_git(Path(tmp), "clone", "--quiet", "--shared", "--no-checkout", str(source), str(work))
            run_git(work, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", snapshot)
        except GitError as exc:
            raise ConfigurationError(f"{repo}: could not check out {snapshot[:12]}: {exc}") from None
        (work / ".git" / MARKER).write_text(f"{project} {snapshot}\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.replace(work, target)
    return target


def commit_time(tree: Path) -> datetime:
    """When the work tree's ``HEAD`` was committed (its committer date)."""
    stamp = run_git(tree, "log", "-1", "--format=%ct", "HEAD").stdout.strip()
    return datetime.fromtimestamp(int(stamp), tz=UTC)


def tracked_files(tree: Path) -> list[str]:
    """The files git tracks in the work tree, by path."""
    listed = run_git(tree, "-c", "core.quotePath=false", "ls-files", "-z").stdout
    return sorted(p for p in listed.split("\0") if p)


def package_tree(tree: Path, prefix: str) -> Path:
    """A folder holding the checkout's files under ``prefix`` alone, at their
    repository paths (``<checkout>.package/files``; made once, then reused)."""
    holder = tree.parent / f"{tree.name}.package"
    files = holder / "files"
    if (holder / "complete").is_file():
        return files
    holder.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=holder, prefix=".copy-") as tmp:
        made = Path(tmp) / "files"
        count = 0
        for rel in tracked_files(tree):
            if rel.startswith(prefix) and (tree / rel).is_file() and not (tree / rel).is_symlink():
                (made / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(tree / rel, made / rel)
                count += 1
        if not count:
            raise ConfigurationError(f"{tree}: no file under {prefix}")
        if files.exists():
            shutil.rmtree(files)
        os.replace(made, files)
    (holder / "complete").write_text(f"{prefix}\n", encoding="utf-8")
    return files


__all__ = ["MARKER", "checkout", "commit_time", "package_tree", "snapshot_of", "src_prefix_of", "tracked_files"]
