"""``ctxgraph hooks``: a git post-commit hook that keeps the associative
memory's index of the project's root current for CLI-only users (issue 31,
item 3).

The hook is a small shell script, ``post-commit`` in the hooks folder of the
git work tree around the root (``git rev-parse --git-path hooks``, so a
worktree's and ``core.hooksPath`` are honoured; without git, ``.git/hooks``).
It starts ``ctxgraph index ROOT -q --time-limit S`` in the background with
``nohup``: a commit never waits for it. A marker line makes it ours: a
post-commit hook without it is someone else's and is never overwritten or
removed (``install`` refuses, exit 2, and prints the line to add to it)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from ctxgraph.cli._common import CliError, echo_json, format_option, note
from ctxgraph.cli._init import root_option
from ctxgraph.cli._stores import embedded_path, store_options, store_params

#: The line that makes a post-commit hook ctxgraph's.
MARKER = "# ctxgraph post-commit hook: written by `ctxgraph hooks install`, removed by `ctxgraph hooks uninstall`"
HOOK = "post-commit"
_REDIRECT = ">/dev/null 2>&1 &"


def ctxgraph_argv() -> list[str]:
    """How the hook runs this ctxgraph: the console script's absolute path when
    this process is it, else this interpreter with ``-m ctxgraph``."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name in ("ctxgraph", "ctxgraph.exe") and script.is_file():
        return [os.path.abspath(script)]
    return [os.path.abspath(sys.executable), "-m", "ctxgraph"]


def hooks_folder(root: Path) -> Path:
    """The hooks folder of the git work tree around ``root`` (exit 2 when there is none)."""
    try:
        proc = subprocess.run(["git", "-C", str(root), "rev-parse", "--git-path", "hooks"],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        proc = None
    if proc is not None and proc.returncode == 0 and proc.stdout.strip():
        return (root / proc.stdout.strip()).resolve()
    from ctxgraph.service.root import git_work_tree

    tree = git_work_tree(root)
    if proc is None and tree is not None and (tree / ".git").is_dir():  # no git program: the plain layout
        return tree / ".git" / "hooks"
    raise CliError(f"{root} is not in a git work tree: there is no post-commit hook to install "
                   "(run `git init` first, or pass --root PATH)", 2)


def _root(root: Path | None, params: dict[str, Any]) -> Path:
    """The project's root as `init` and `context` find it (exit 2 when none is known)."""
    from ctxgraph.service.root import find_root
    from ctxgraph.settings import find_settings_file

    settings = find_settings_file(Path.cwd().resolve())
    found = find_root(root, settings_source=str(settings[0]) if settings else None,
                      store_path=None if params.get("neo4j_uri") else embedded_path(params))
    if found is None:
        raise CliError("no project root known (no settings file, no git work tree around the store): "
                       "pass --root PATH", 2)
    return found.path


def index_argv(root: Path, params: dict[str, Any], *, embeddings: bool, time_limit: float) -> list[str]:
    """The command the hook runs: this ctxgraph's index of ``root``, on the store
    the options name (an embedded store's absolute path; a Neo4j server's URI,
    user and database: its password comes from the environment git runs in)."""
    from ctxgraph.service.root import project_id

    argv = [*ctxgraph_argv(), "index", str(root), "--project", project_id(root), "-q",
            "--time-limit", f"{time_limit:g}"]
    if not embeddings:
        argv.append("--no-embeddings")
    if params.get("neo4j_uri"):
        if params.get("password_stdin"):
            raise CliError("--password-stdin cannot reach a hook run by git: set NEO4J_PASSWORD_FILE "
                           "(or NEO4J_PASSWORD) in the environment you commit from", 2)
        argv += ["--neo4j", params["neo4j_uri"]]
        for option, key in (("--neo4j-user", "neo4j_user"), ("--neo4j-database", "neo4j_database")):
            if params.get(key):
                argv += [option, params[key]]
    else:
        argv += ["--store", os.path.abspath(embedded_path(params))]
    return argv


def hook_text(argv: list[str]) -> str:
    from ctxgraph.cli._sync import sync_argv

    return ("#!/bin/sh\n"
            f"{MARKER}\n"
            "# Re-indexes the project's code for the associative memory in the background (the commit\n"
            "# does not wait); the run is incremental and stops after its --time-limit.\n"
            f"nohup {shlex.join(argv)} {_REDIRECT}\n"
            "# Checks the code anchors against the work tree (docs/freshness.md).\n"
            f"nohup {shlex.join(sync_argv(argv))} {_REDIRECT}\n")


def read_hook(path: Path) -> tuple[str, list[str] | None] | None:
    """None when there is no hook; else (``"ours"`` with the command it runs, or
    ``"foreign"`` with None)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CliError(f"{path}: cannot read the hook: {exc}", 1) from None
    if MARKER not in text.splitlines():
        return "foreign", None
    for line in text.splitlines():
        if line.startswith("nohup ") and line.endswith(_REDIRECT):
            try:
                return "ours", shlex.split(line.removeprefix("nohup ").removesuffix(_REDIRECT))
            except ValueError:
                break
    return "ours", None


def indexed_root(argv: list[str] | None) -> str | None:
    """The root a hook's command indexes (the argument after ``index``)."""
    if not argv or "index" not in argv[:-1]:
        return None
    return argv[argv.index("index") + 1]


def _emit(fmt: str, data: dict[str, Any], text: str) -> None:
    if fmt == "json":
        echo_json(data)
    else:
        click.echo(text)


@click.group("hooks")
def hooks() -> None:
    """A git post-commit hook that re-indexes the project's code after each commit.

    For CLI-only users (`ctxgraph mcp` and `index --watch` keep the index
    current themselves): `install` writes the hook in the git work tree
    around the project's root, `uninstall` removes it, `status` says what it
    runs. A post-commit hook that is not ctxgraph's is never changed.
    """


@hooks.command("install")
@root_option
@click.option("--embeddings/--no-embeddings", default=True, show_default=True,
              help="The hook's index embeds the changed files' chunks, or keeps the lightweight index.")
@click.option("--time-limit", type=click.FloatRange(min=1), default=300.0, show_default=True, metavar="SECONDS",
              help="The hook's index stops after about this long (the next commit's run goes on).")
@store_options
@format_option
def install_command(root: Path | None, embeddings: bool, time_limit: float, fmt: str, **kwargs: Any) -> None:
    """Write the post-commit hook: after each commit, `ctxgraph index ROOT -q`
    runs in the background (nohup), on this store.

    The hook's file is .git/hooks/post-commit (git's hooks folder: a
    worktree's or core.hooksPath's). Installing again rewrites it only when
    the command changed. An existing post-commit hook that is not ctxgraph's
    is left untouched: exit 2, and the line to add to it is printed.
    """
    params = store_params(kwargs)
    found = _root(root, params)
    path = hooks_folder(found) / HOOK
    argv = index_argv(found, params, embeddings=embeddings, time_limit=time_limit)
    text = hook_text(argv)
    current = read_hook(path)
    if current is not None and current[0] == "foreign":
        raise CliError(f"{path} exists and is not ctxgraph's: left untouched; to re-index after each commit, "
                       f"add this line to it: nohup {shlex.join(argv)} {_REDIRECT}", 2)
    if current is not None and path.read_text(encoding="utf-8", errors="replace") == text:
        action = "unchanged"
    else:
        from ctxgraph.files import atomic_write

        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with atomic_write(path, text=True) as f:
                f.write(text)
            path.chmod(path.stat().st_mode | 0o755)
        except OSError as exc:
            raise CliError(f"{path}: cannot write the hook: {exc}", 1) from None
        action = "installed" if current is None else "updated"
        before = indexed_root(current[1]) if current is not None else None
        if before is not None and before != str(found):
            # git's hooks belong to the repository: its work trees share them.
            note(f"the hook indexed {before}: it now indexes {found} (the work trees of a repository share "
                 "its hooks)")
    if not os.access(path, os.X_OK):
        try:
            path.chmod(path.stat().st_mode | 0o755)
        except OSError as exc:
            raise CliError(f"{path}: cannot make the hook executable: {exc}", 1) from None
    _emit(fmt, {"hook": str(path), "action": action, "root": str(found), "command": argv},
          f"{action}: {path}\nafter each commit it runs: {shlex.join(argv)}")


@hooks.command("uninstall")
@root_option
@store_options
@format_option
def uninstall_command(root: Path | None, fmt: str, **kwargs: Any) -> None:
    """Remove ctxgraph's post-commit hook (a hook that is not ctxgraph's stays)."""
    found = _root(root, store_params(kwargs))
    path = hooks_folder(found) / HOOK
    current = read_hook(path)
    if current is None:
        action = "absent"
    elif current[0] == "foreign":
        action = "foreign"
        note(f"{path} is not ctxgraph's: left untouched")
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise CliError(f"{path}: cannot remove the hook: {exc}", 1) from None
        action = "removed"
    messages = {"absent": "no post-commit hook", "foreign": "not ctxgraph's, left untouched", "removed": "removed"}
    _emit(fmt, {"hook": str(path), "action": action, "root": str(found)}, f"{messages[action]}: {path}")


@hooks.command("status")
@root_option
@store_options
@format_option
def status_command(root: Path | None, fmt: str, **kwargs: Any) -> None:
    """Whether ctxgraph's post-commit hook is installed, and what it runs."""
    found = _root(root, store_params(kwargs))
    path = hooks_folder(found) / HOOK
    current = read_hook(path)
    state = "absent" if current is None else current[0]
    argv = None if current is None else current[1]
    executable = current is not None and os.access(path, os.X_OK)
    data = {"hook": str(path), "state": state, "installed": state == "ours", "executable": executable,
            "root": str(found), "command": argv}
    if state == "ours":
        text = (f"installed: {path}" + ("" if executable else " (not executable: git skips it)")
                + f"\nafter each commit it runs: {shlex.join(argv) if argv else '(unreadable: reinstall it)'}")
    elif state == "foreign":
        text = f"not installed: {path} is another post-commit hook (not ctxgraph's)"
    else:
        text = f"not installed: no {path}"
    _emit(fmt, data, text)


__all__ = ["MARKER", "hooks"]
