"""The ``ctxgraph`` command line. Parsing and printing only; the work is in
:class:`ctxgraph.service.ContextService`."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ctxgraph.errors import CtxgraphError, StoreUnavailableError

if TYPE_CHECKING:
    from ctxgraph.compute.config import Strategy
    from ctxgraph.service import ContextService

F = TypeVar("F", bound=Callable[..., Any])

# What a command needs is imported when it runs: `ctxgraph --help`, `--version`
# and the commands that compute no signals load neither spaCy, numpy, the
# Neo4j driver nor the MCP SDK (tests/unit/test_cli_imports.py holds it), and
# not even pydantic for the help. Hence the choices below are spelled out
# here; a unit test checks them against the enums (Complexity, TaskStatus).
COMPLEXITIES: list[str] = ["easy", "normal", "complex"]
STATUSES: list[str] = ["pending", "in_progress", "blocked", "completed", "failed"]


class CliError(click.ClickException):
    """One line on stderr, a specific exit code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        # click >= 8.2 declares exit_code a ClassVar; this instance's own value shadows it.
        vars(self)["exit_code"] = exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"ctxgraph: error: {self.format_message()}", err=True)


class _Group(click.Group):
    """Maps ctxgraph's errors to one-line messages (tracebacks with --verbose)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except CtxgraphError as exc:
            if _verbose(ctx):
                raise
            raise CliError(str(exc), exc.exit_code) from None
        except Exception as exc:
            if _verbose(ctx):
                raise
            raise CliError(f"unexpected {type(exc).__name__}: {exc} (rerun with --verbose for details)") from None


def _verbose(ctx: click.Context) -> bool:
    root = ctx.find_root()
    return bool(root.params.get("verbose"))


def store_options(fn: F) -> F:
    """--store / --neo4j and friends, on every command that opens a store."""
    return click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
                        envvar="CTXGRAPH_STORE", show_envvar=True,
                        help="Embedded store file [default: the nearest .ctxgraph/graph.db from here "
                             "upwards, else ./.ctxgraph/graph.db].")(neo4j_options(fn))


def neo4j_options(fn: F) -> F:
    """--neo4j URI and its user, database and password options."""
    options = [
        click.option("--neo4j", "neo4j_uri", metavar="URI", envvar="NEO4J_URI", show_envvar=True,
                     help="Use a Neo4j server (neo4j://, bolt://, +s/+ssc variants) instead of "
                          "the embedded store. Password from NEO4J_PASSWORD or NEO4J_PASSWORD_FILE, "
                          "--password-stdin, or a prompt when standard input is a terminal."),
        click.option("--neo4j-user", metavar="NAME", envvar="NEO4J_USER", show_envvar=True,
                     help="Neo4j user [default: neo4j]."),
        click.option("--neo4j-database", metavar="NAME", envvar="NEO4J_DATABASE", show_envvar=True,
                     help="Neo4j database [default: the server's default]."),
        click.option("--password-stdin", is_flag=True,
                     help="Read the Neo4j password from the first line of standard input."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def format_option(fn: F) -> F:
    return click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                        show_default=True, help="Output format; json is for programs.")(fn)


def service_opener(params: dict[str, Any], *, read_only: bool = False) -> Callable[[], ContextService]:
    """A function that opens the service on the store the options name (the
    Neo4j password, if the CLI must supply it, is read now, once)."""
    from ctxgraph.service import ContextService

    return partial(
        ContextService.open,
        params.get("store_path"),
        neo4j_uri=params.get("neo4j_uri"),
        neo4j_user=params.get("neo4j_user"),
        neo4j_password=_neo4j_password(params),
        neo4j_database=params.get("neo4j_database"),
        read_only=read_only,
    )


@contextmanager
def open_service(params: dict[str, Any], *, read_only: bool = False) -> Iterator[ContextService]:
    """The service on the store the options name; ``read_only`` for commands
    that only read (the store is then opened so that it cannot be written).

    A command that fails leaves no new file: an embedded store this command
    created (with its folder) is removed again when the command fails and
    the store holds no node (what a failed write left is nothing)."""
    created = [] if read_only or params.get("neo4j_uri") else new_paths(embedded_path(params))
    try:
        svc = service_opener(params, read_only=read_only)()
    except StoreUnavailableError as exc:
        remove_if_empty(created)
        hint = demo_hint(params) if read_only else None
        if hint:
            raise StoreUnavailableError(f"{exc}; {hint}") from None
        raise
    except BaseException:
        remove_if_empty(created)
        raise
    try:
        yield svc
    except BaseException:
        svc.close()
        remove_if_empty(created)
        raise
    svc.close()


_STDIN_USED = "ctxgraph.stdin_used"


def _mark_stdin_used() -> None:
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_STDIN_USED] = True


def _neo4j_password(params: dict[str, Any]) -> str | None:
    """The password when the CLI must supply it: ``--password-stdin``, else a
    prompt (hidden input) when no NEO4J_PASSWORD / NEO4J_PASSWORD_FILE is set
    and standard input is a terminal; else None (the environment's, if any)."""
    uri = params.get("neo4j_uri")
    if not uri:
        if params.get("password_stdin"):
            raise CliError("--password-stdin needs a Neo4j server (--neo4j URI or NEO4J_URI)", 2)
        return None
    if params.get("password_stdin"):
        ctx = click.get_current_context(silent=True)
        if ctx is not None and ctx.meta.get(_STDIN_USED):
            raise CliError("--password-stdin cannot be used when a document comes from standard input (-); "
                           "use NEO4J_PASSWORD_FILE", 2)
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise CliError("--password-stdin: no password on the first line of standard input", 2)
        return password
    if os.environ.get("NEO4J_PASSWORD") or os.environ.get("NEO4J_PASSWORD_FILE"):
        return None
    if sys.stdin is not None and sys.stdin.isatty():
        user = params.get("neo4j_user") or "neo4j"
        password = click.prompt(f"Neo4j password for {user} at {uri}", hide_input=True, err=True,
                                default="", show_default=False)
        return str(password) or None
    return None


def _store_params(kwargs: dict[str, Any]) -> dict[str, Any]:
    keys = ("store_path", "neo4j_uri", "neo4j_user", "neo4j_database", "password_stdin")
    return one_store({k: kwargs.pop(k) for k in keys})


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


def _embed_finished(svc: Any, skip_flag: str, tasks: list[str] | None = None) -> int | None:
    """``svc.embed_tasks(tasks=tasks)``: how many finished tasks were embedded
    (``tasks``: only among these), or None (with one warning naming the install
    command and the calling command's ``skip_flag``) when the model cannot load."""
    from ctxgraph.memory.embed import EmbeddingUnavailableError

    try:
        return int(svc.embed_tasks(tasks=tasks))
    except EmbeddingUnavailableError as exc:
        warn(f"tasks not embedded: {exc} (or pass {skip_flag} to skip this step)")
        return None


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False))


def _read_input(path: str) -> tuple[str, bytes]:
    if path == "-":
        _mark_stdin_used()
        return "<stdin>", sys.stdin.buffer.read()
    p = Path(path)
    try:
        return str(p), p.read_bytes()
    except IsADirectoryError:
        raise CliError(f"{p}: is a folder; expected a file", 2) from None
    except OSError as exc:
        raise CliError(f"{p}: cannot read: {exc.strerror}", 2) from None


# ------------------------------------------------------------------------ root


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="Log progress and show tracebacks on errors.")
@click.version_option(package_name="ctxgraph")
def main(verbose: bool) -> None:
    """Computed context for AI-agent tasks, from a knowledge graph.

    Before an agent starts a task, `ctxgraph context TASK` prints the patterns,
    gotchas, decisions, dependency handoffs and code references that matter
    for it. After the agent finishes, `ctxgraph ingest handoff FILE` adds what
    it learned. The graph lives in an embedded store (.ctxgraph/graph.db) or on
    a Neo4j server (--neo4j URI).
    """
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not verbose:
        # The driver logs each retry of a failed transaction; the outcome is
        # what the user needs (one line on failure), the retries are --verbose.
        logging.getLogger("neo4j").setLevel(logging.CRITICAL)
        # A context computed without the store is reported by `context` itself,
        # in one "ctxgraph: warning:" line; the service's log record would repeat it.
        logging.getLogger("ctxgraph.service").setLevel(logging.ERROR)


@main.command()
@store_options
@click.option("--reset", is_flag=True, help="Delete everything in the store first.")
def init(reset: bool, **kwargs: Any) -> None:
    """Create the store (or check the server) and apply the schema."""
    with open_service(_store_params(kwargs)) as svc:
        svc.initialize(reset=reset)
        click.echo(f"ready: {svc.location}")


# ------------------------------------------------------------------------ context


@main.command()
@click.argument("task_id", required=False)
@click.option("--task-file", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="Read the task from a YAML/JSON file (one task, as in a tasks file) instead of the store; "
                   "if the store is unavailable, the context is computed without it and a warning says so.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown",
              show_default=True, help="markdown for agents, json for orchestrators.")
@click.option("--complexity", type=click.Choice(COMPLEXITIES),
              help="Override the task's complexity tier (item caps per section).")
@click.option("--budget", type=click.IntRange(min=1), metavar="TOKENS",
              help="Token budget the Markdown must fit [default: the tier's: easy 4000, normal 8000, "
                   "complex 16000, or the settings file's].")
@click.option("--strategy", type=click.Choice(["recent", "important", "balanced"]),
              help="How ties in relevance are ordered [default: balanced, or the settings file's].")
@click.option("--debug", is_flag=True, envvar="CTXGRAPH_DEBUG_CONTEXT", show_envvar=True,
              help="Append the Context Debug section.")
@click.option("--explain", is_flag=True,
              help="List every candidate with its score parts and whether it was kept, compressed "
                   "or dropped (and why); in JSON under \"explain\".")
@click.option("--template", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A Jinja2 template to render with instead of the built-in one.")
@click.option("--memory/--no-memory", default=True, show_default=True,
              help="Use the associative memory (the code indexed by `ctxgraph index`) when one is usable.")
@click.option("--project", "memory_project", metavar="NAME", envvar="CTXGRAPH_PROJECT", show_envvar=True,
              help="The indexed project to search [default: the only one indexed].")
@click.option("--record", is_flag=True, envvar="CTXGRAPH_RECORD", show_envvar=True,
              help="Record the context as delivered (`ctxgraph outcomes` scores it when the task's handoff "
                   "is ingested); opens the store for writing instead of read-only.")
@store_options
def context(task_id: str | None, task_file: str | None, fmt: str, complexity: str | None, budget: int | None,
            strategy: Strategy | None, debug: bool, explain: bool, template: Path | None, memory: bool,
            memory_project: str | None, record: bool, **kwargs: Any) -> None:
    """Compute the context of TASK_ID (Markdown within the token budget).

    With --task-file the task need not be stored (an orchestrator can ask
    before it adds the task), and a store that cannot be reached degrades the
    context instead of failing it.
    """
    from ctxgraph.core.models import Task
    from ctxgraph.service import ContextService

    if (task_id is None) == (task_file is None):
        raise CliError("give a TASK_ID or --task-file (one of them)", 2)
    task: str | Task = task_id or ""
    if task_file is not None:
        source, data = _read_input(task_file)
        task = ContextService.read_task(data, source)
    template_text = None
    if template is not None:
        try:
            template_text = template.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"{template}: cannot read template: {exc}", 2) from None
    params = _store_params(kwargs)
    try:
        service = open_service(params, read_only=not record)
        svc = service.__enter__()
    except StoreUnavailableError as exc:
        if not isinstance(task, Task):
            raise
        service = None
        location = params.get("neo4j_uri") or str(params.get("store_path") or ContextService.default_store_path())
        svc = ContextService.unavailable(location, str(exc))
    svc.memory = memory
    if memory_project:
        svc.memory_project = memory_project
    try:
        ctx = svc.compute(task, complexity=complexity, budget=budget, strategy=strategy,
                          debug=debug, explain=explain, template=template_text)
    finally:
        if service is not None:
            service.__exit__(None, None, None)
    if ctx.computed.notes:
        more = len(ctx.computed.notes) - 1
        extra = f" (and {more} more parts; --debug lists them)" if more else ""
        click.echo(f"ctxgraph: warning: context computed without the store's answer: {ctx.computed.notes[0]}{extra}",
                   err=True)
    if fmt == "json":
        _echo_json(ctx.model_dump(mode="json", by_alias=True))
        return
    click.echo(ctx.markdown, nl=False)
    if explain and ctx.explain is not None:
        click.echo(f"\n## Explain ({ctx.tokens} of {ctx.budget} tokens, strategy {ctx.computed.strategy})\n")
        click.echo("| fate | reason | section | id | scope | relevance | type | strategy | level | tokens | tags |")
        click.echo("|---|---|---|---|---|---|---|---|---|---|---|")
        for e in ctx.explain:
            click.echo(f"| {e.fate} | {e.reason or '-'} | {e.section} | {e.id} | {e.scope} | {e.relevance:g} | "
                       f"{e.type_priority:g} | {e.strategy_term:.4g} | {e.level} | {e.tokens} | "
                       f"{', '.join(e.tag_matches) or '-'} |")


@main.command("embed-tasks")
@store_options
@format_option
def embed_tasks(fmt: str, **kwargs: Any) -> None:
    """Embed the finished tasks' texts for the history's neighbours by embedding.

    Each finished task without a vector of its current text (name, objective,
    criteria) is embedded with all-MiniLM-L6-v2, locally, and its vector
    stored: a context then also ranks files by the tasks nearest to its own
    text. Incremental (tasks already embedded are skipped) and safe to stop:
    vectors are stored 4,096 at a time. Run it after ingesting handoffs;
    contexts computed before use the vectors there are.
    """
    with open_service(_store_params(kwargs)) as svc:
        pending = svc.tasks_to_embed()
        bar = click.progressbar(length=len(pending), label="Embedding tasks", file=sys.stderr,
                                hidden=len(pending) < 64)
        with bar:
            embedded = svc.embed_tasks(pending, progress=bar.update)
        total = svc.task_vector_count()
    if fmt == "json":
        _echo_json({"embedded": embedded, "tasks_with_vectors": total})
        return
    click.echo(f"{embedded} tasks embedded; {total} tasks have vectors")


@main.command()
@store_options
@format_option
def stats(fmt: str, **kwargs: Any) -> None:
    """Count nodes per label and relationships per type."""
    with open_service(_store_params(kwargs), read_only=True) as svc:
        counts = svc.stats()
        location = svc.location
    if fmt == "json":
        _echo_json(counts)
        return
    click.echo(f"store: {location}")
    click.echo("nodes:")
    for label, n in counts["labels"].items():
        click.echo(f"  {label:<14}{n:>8}")
    click.echo("relationships:")
    for rel, n in counts["relationships"].items():
        click.echo(f"  {rel:<14}{n:>8}")


from ctxgraph.cli._analyst import analyst_command  # noqa: E402 (needs the names above)
from ctxgraph.cli._backup import export_command, import_command  # noqa: E402
from ctxgraph.cli._demo import demo_command  # noqa: E402
from ctxgraph.cli._eval import eval_command  # noqa: E402
from ctxgraph.cli._index import index_command  # noqa: E402
from ctxgraph.cli._ingest import ingest  # noqa: E402
from ctxgraph.cli._knowledge import knowledge  # noqa: E402
from ctxgraph.cli._mcp import mcp_command  # noqa: E402
from ctxgraph.cli._outcomes import outcomes_command  # noqa: E402
from ctxgraph.cli._stores import demo_hint, embedded_path, new_paths, one_store, remove_if_empty  # noqa: E402
from ctxgraph.cli._tasks import depend, task  # noqa: E402
from ctxgraph.cli._tune import tune_command  # noqa: E402

main.add_command(task)
main.add_command(depend)
main.add_command(knowledge)
main.add_command(ingest)
main.add_command(analyst_command)
main.add_command(demo_command)
main.add_command(eval_command)
main.add_command(index_command)
main.add_command(mcp_command)
main.add_command(export_command)
main.add_command(import_command)
main.add_command(outcomes_command)
main.add_command(tune_command)


def __getattr__(name: str) -> Any:
    # Names this module once imported eagerly, kept importable from here.
    if name in ("InvalidDocumentError", "UnknownTaskError"):
        from ctxgraph import errors

        return getattr(errors, name)
    if name == "TaskDoc":
        from ctxgraph.core.models import TaskDoc

        return TaskDoc
    raise AttributeError(f"module 'ctxgraph.cli' has no attribute {name!r}")


__all__ = ["CliError", "InvalidDocumentError", "TaskDoc", "UnknownTaskError", "main"]
