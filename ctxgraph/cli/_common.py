"""What every ``ctxgraph`` command shares that is not about the store: the
error and message lines, the JSON output, reading an input file or standard
input, and the choices the help spells out (store options and opening the
service are :mod:`ctxgraph.cli._stores`).

What a command needs is imported when it runs: ``ctxgraph --help``,
``--version`` and the commands that compute no signals load neither spaCy,
numpy, the Neo4j driver nor the MCP SDK (tests/unit/test_cli_imports.py holds
it), and not even pydantic for the help."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ctxgraph.errors import CtxgraphError

#: When the command line started (this module's import; the interpreter's own
#: start is a few tens of ms before): ``index --time-limit`` counts from here.
STARTED = time.monotonic()

F = TypeVar("F", bound=Callable[..., Any])

#: The choices of --complexity and --status, spelled out so that the help needs
#: no pydantic; a unit test checks them against the enums (Complexity, TaskStatus).
COMPLEXITIES: list[str] = ["easy", "normal", "complex"]
STATUSES: list[str] = ["pending", "in_progress", "blocked", "completed", "failed", "retired"]


class CliError(click.ClickException):
    """One line on stderr, a specific exit code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        # click >= 8.2 declares exit_code a ClassVar; this instance's own value shadows it.
        vars(self)["exit_code"] = exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"ctxgraph: error: {self.format_message()}", err=True)


def verbose(ctx: click.Context | None = None) -> bool:
    """Whether ``--verbose`` was given (to ``ctx``'s root, else the current command's)."""
    ctx = ctx or click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().params.get("verbose"))


class Group(click.Group):
    """Maps ctxgraph's errors to one-line messages (tracebacks with --verbose)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except CtxgraphError as exc:
            if verbose(ctx):
                raise
            raise CliError(str(exc), exc.exit_code) from None
        except Exception as exc:
            if verbose(ctx):
                raise
            raise CliError(f"unexpected {type(exc).__name__}: {exc} (rerun with --verbose for details)") from None


def format_option(fn: F) -> F:
    return click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                        show_default=True, help="Output format; json is for programs.")(fn)


def memory_project_option(fn: F) -> F:
    """``--project NAME`` (``$CTXGRAPH_PROJECT``): the associative memory's project."""
    return click.option("--project", "memory_project", metavar="NAME", envvar="CTXGRAPH_PROJECT", show_envvar=True,
                        help="The indexed project to search [default: the only one indexed, else the root's].")(fn)


def from_command_line(name: str) -> bool:
    """Whether the current command's parameter ``name`` was given on the command line."""
    ctx = click.get_current_context()
    return ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE


_WARNED: set[str] = set()


def note(message: str) -> None:
    """``ctxgraph: note: MESSAGE`` on stderr."""
    click.echo(f"ctxgraph: note: {message}", err=True)


def warn(message: str) -> None:
    """``ctxgraph: warning: MESSAGE`` on stderr, once per process (a watcher
    that meets the same problem every run says it once)."""
    if message not in _WARNED:
        _WARNED.add(message)
        click.echo(f"ctxgraph: warning: {message}", err=True)


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False))


_STDIN_USED = "ctxgraph.stdin_used"


def mark_stdin_used() -> None:
    """Note that the command reads a document from standard input (which
    --password-stdin then cannot share)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_STDIN_USED] = True


def stdin_used() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(_STDIN_USED))


def stdin_line(option: str, what: str) -> str:
    """The first line of standard input, which ``option`` (e.g. ``--token-stdin``)
    reads ``what`` (e.g. ``token``) from; an empty line is refused."""
    line = sys.stdin.readline().rstrip("\r\n")
    if not line:
        raise CliError(f"{option}: no {what} on the first line of standard input", 2)
    return line


def read_input(path: str) -> tuple[str, bytes]:
    """``(source name, bytes)`` of a file, or of standard input for ``-``."""
    if path == "-":
        mark_stdin_used()
        return "<stdin>", sys.stdin.buffer.read()
    p = Path(path)
    try:
        return str(p), p.read_bytes()
    except IsADirectoryError:
        raise CliError(f"{p}: is a folder; expected a file", 2) from None
    except OSError as exc:
        raise CliError(f"{p}: cannot read: {exc.strerror}", 2) from None


def embed_finished(svc: Any, skip_flag: str, tasks: list[str] | None = None) -> int | None:
    """``svc.embed_tasks(tasks=tasks)``: how many finished tasks were embedded
    (``tasks``: only among these), or None (with one warning naming the install
    command and the calling command's ``skip_flag``) when the model cannot load."""
    from ctxgraph.memory.embed import EmbeddingUnavailableError

    try:
        return int(svc.embed_tasks(tasks=tasks))
    except EmbeddingUnavailableError as exc:
        warn(f"tasks not embedded: {exc} (or pass {skip_flag} to skip this step)")
        return None


__all__ = ["COMPLEXITIES", "STARTED", "STATUSES", "CliError", "Group", "echo_json", "embed_finished", "format_option",
           "from_command_line", "mark_stdin_used", "note", "read_input", "stdin_line", "stdin_used", "verbose",
           "warn"]
