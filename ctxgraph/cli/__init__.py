"""The ``ctxgraph`` command line. Parsing and printing only; the work is in
:class:`ctxgraph.service.ContextService`."""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ctxgraph.cli._analyst import analyst_command
from ctxgraph.cli._backup import export_command, import_command
from ctxgraph.cli._common import (
    COMPLEXITIES,
    STATUSES,
    CliError,
    Group,
    echo_json,
    format_option,
    memory_project_option,
    read_input,
)
from ctxgraph.cli._conflicts import conflicts_command
from ctxgraph.cli._demo import demo_command
from ctxgraph.cli._eval import eval_command
from ctxgraph.cli._history import history
from ctxgraph.cli._hooks import hooks
from ctxgraph.cli._index import index_command
from ctxgraph.cli._ingest import ingest
from ctxgraph.cli._init import init_command, root_option
from ctxgraph.cli._knowledge import knowledge
from ctxgraph.cli._mcp import mcp_command
from ctxgraph.cli._notes import knowledge_import as _knowledge_import  # noqa: F401 (`knowledge import`)
from ctxgraph.cli._outcomes import outcomes_command
from ctxgraph.cli._search import search_command
from ctxgraph.cli._stores import open_service, store_options, store_params
from ctxgraph.cli._sync import sync_command
from ctxgraph.cli._tasks import depend, task
from ctxgraph.cli._tune import tune_command
from ctxgraph.cli._view import view_command
from ctxgraph.errors import StoreUnavailableError

if TYPE_CHECKING:
    from ctxgraph.compute.config import Strategy


# ------------------------------------------------------------------------ root


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
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
@click.option("--memory/--no-memory", default=None,
              help="Use the associative memory (the code indexed by `ctxgraph init` or `ctxgraph index`) "
                   "when one is usable [default: on, unless the settings say memory = false].")
@memory_project_option
@root_option
@click.option("--record", is_flag=True, envvar="CTXGRAPH_RECORD", show_envvar=True,
              help="Record the context as delivered (`ctxgraph outcomes` scores it when the task's handoff "
                   "is ingested); opens the store for writing instead of read-only.")
@store_options
def context(task_id: str | None, task_file: str | None, fmt: str, complexity: str | None, budget: int | None,
            strategy: Strategy | None, debug: bool, explain: bool, template: Path | None, memory: bool | None,
            memory_project: str | None, root: Path | None, record: bool, **kwargs: Any) -> None:
    """Compute the context of TASK_ID (Markdown within the token budget).

    With --task-file the task need not be stored (an orchestrator can ask
    before it adds the task), and a store that cannot be reached degrades the
    context instead of failing it.
    """
    from ctxgraph.compute.output import store_warning
    from ctxgraph.core.models import Task
    from ctxgraph.service import ContextService

    if (task_id is None) == (task_file is None):
        raise CliError("give a TASK_ID or --task-file (one of them)", 2)
    task: str | Task = task_id or ""
    if task_file is not None:
        source, data = read_input(task_file)
        task = ContextService.read_task(data, source)
    template_text = None
    if template is not None:
        try:
            template_text = template.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"{template}: cannot read template: {exc}", 2) from None
    params = store_params(kwargs)
    try:
        service = open_service(params, read_only=not record)
        svc = service.__enter__()
        if root is not None:
            svc.use_root(root)
    except StoreUnavailableError as exc:
        if not isinstance(task, Task):
            raise
        service = None
        location = params.get("neo4j_uri") or str(params.get("store_path") or ContextService.default_store_path())
        svc = ContextService.unavailable(location, str(exc))
    try:
        ctx = svc.compute(task, complexity=complexity, budget=budget, strategy=strategy, debug=debug,
                          explain=explain, template=template_text, memory=memory, memory_project=memory_project)
    finally:
        if service is not None:
            service.__exit__(None, None, None)
    warning = store_warning(ctx)
    if warning:
        click.echo(f"ctxgraph: warning: {warning}", err=True)
    if fmt == "json":
        echo_json(ctx.model_dump(mode="json", by_alias=True))
        return
    click.echo(ctx.markdown, nl=False)
    if explain and ctx.explain is not None:
        from ctxgraph.compute.render import cell  # ids and reasons name files and tasks: one line, | escaped

        click.echo(f"\n## Explain ({ctx.tokens} of {ctx.budget} tokens, strategy {ctx.computed.strategy})\n")
        click.echo("| fate | reason | section | id | scope | relevance | type | strategy | level | tokens | tags "
                   "| features |")
        click.echo("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for e in ctx.explain:
            click.echo(f"| {e.fate} | {cell(e.reason or '-')} | {e.section} | {cell(e.id)} | {e.scope} | "
                       f"{e.relevance:g} | {e.type_priority:g} | {e.strategy_term:.4g} | {e.level} | {e.tokens} | "
                       f"{cell(', '.join(e.tag_matches) or '-')} | "
                       f"{cell(', '.join(f'{name} {value:g}' for name, value in e.features.items()) or '-')} |")


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
    with open_service(store_params(kwargs)) as svc:
        pending = svc.tasks_to_embed()
        bar = click.progressbar(length=len(pending), label="Embedding tasks", file=sys.stderr,
                                hidden=len(pending) < 64)
        with bar:
            embedded = svc.embed_tasks(pending, progress=bar.update)
        total = svc.task_vector_count()
    if fmt == "json":
        echo_json({"embedded": embedded, "tasks_with_vectors": total})
        return
    click.echo(f"{embedded} tasks embedded; {total} tasks have vectors")


@main.command()
@store_options
@format_option
def stats(fmt: str, **kwargs: Any) -> None:
    """Count nodes per label and relationships per type."""
    with open_service(store_params(kwargs), read_only=True) as svc:
        counts = svc.stats()
        location = svc.location
    if fmt == "json":
        echo_json(counts)
        return
    click.echo(f"store: {location}")
    click.echo("nodes:")
    for label, n in counts["labels"].items():
        click.echo(f"  {label:<14}{n:>8}")
    click.echo("relationships:")
    for rel, n in counts["relationships"].items():
        click.echo(f"  {rel:<14}{n:>8}")


main.add_command(init_command)
main.add_command(task)
main.add_command(depend)
main.add_command(knowledge)
main.add_command(ingest)
main.add_command(analyst_command)
main.add_command(demo_command)
main.add_command(eval_command)
main.add_command(index_command)
main.add_command(hooks)
main.add_command(history)
main.add_command(mcp_command)
main.add_command(export_command)
main.add_command(import_command)
main.add_command(outcomes_command)
main.add_command(conflicts_command)
main.add_command(tune_command)
main.add_command(sync_command)
main.add_command(search_command)  # (also `knowledge list`)
main.add_command(view_command)


def run() -> None:
    """The ``ctxgraph`` console script (and ``python -m ctxgraph``): :func:`main`,
    then the process ends without tearing the interpreter down.

    Freeing every object of a process that loaded spaCy, pydantic's schemas
    and the embedding model, module by module, took ``task add`` 100-180 ms
    of CPU after its work was done and its output written (on this project's
    machine: 1.12-1.15 s of CPU for the process against 0.94-0.97 s at the end
    of ``main``). So once the command has returned, the atexit handlers run
    (logging's flush among them), stdout and stderr are flushed, and the
    process exits with the command's code (``os._exit``). Whenever that could
    lose anything it exits the usual way instead: a thread that is not a
    daemon still running (its end would be waited for), an exit status that
    is not a number, or a flush that fails (e.g. a closed pipe, which the
    interpreter reports as before). Every store and connection is closed by
    the commands themselves before they return."""
    try:
        main.main(prog_name="ctxgraph")
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    if not isinstance(code, int) or any(t is not threading.main_thread() and not t.daemon and t.is_alive()
                                        for t in threading.enumerate()):
        raise SystemExit(code)
    import atexit

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        raise SystemExit(code) from None
    os._exit(code)


def __getattr__(name: str) -> Any:
    # Names this module once imported eagerly, kept importable from here.
    if name in ("InvalidDocumentError", "UnknownTaskError"):
        from ctxgraph import errors

        return getattr(errors, name)
    if name == "TaskDoc":
        from ctxgraph.core.models import TaskDoc

        return TaskDoc
    raise AttributeError(f"module 'ctxgraph.cli' has no attribute {name!r}")


__all__ = [
    "COMPLEXITIES",
    "STATUSES",
    "CliError",
    "InvalidDocumentError",
    "TaskDoc",
    "UnknownTaskError",
    "format_option",
    "main",
    "open_service",
    "run",
    "store_options",
]
