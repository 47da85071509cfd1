"""``ctxgraph demo``: load the packaged demo project and print one task's context."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from ctxgraph.cli._common import CliError, echo_json
from ctxgraph.cli._stores import DEMO_STORE, neo4j_options, one_store, open_service


def _foreign_contents(svc: Any, demo_ids: set[str]) -> str | None:
    """What the store holds besides an earlier demo (None: empty, or only the demo)."""
    tasks = svc.list_tasks()
    foreign = sorted(t.id for t in tasks if t.id not in demo_ids)
    if foreign:
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        tasks_word = "a task that is" if len(foreign) == 1 else f"{len(foreign)} tasks that are"
        return f"{tasks_word} not the demo's ({', '.join(foreign[:3])}{more})"
    if not tasks:
        nodes = sum(svc.stats()["labels"].values())
        if nodes:
            return f"{nodes} nodes and no demo task"
    return None


@click.command("demo")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
              help=f"Embedded store to load the demo into [default: {DEMO_STORE}].")
@neo4j_options
@click.option("--task", "task_id", default=None, help="Task whose context to print [default: task-015].")
@click.option("--reset", is_flag=True,
              help="Empty the store even when it holds more than an earlier demo (never needed for the "
                   "default demo store).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown",
              show_default=True, help="markdown for agents, json for orchestrators.")
@click.option("--debug", is_flag=True, help="Append the Context Debug section.")
def demo_command(store_path: Path | None, task_id: str | None, reset: bool, fmt: str, debug: bool,
                 **kwargs: Any) -> None:
    """Load the demo project (shipped with ctxgraph) and print one task's context.

    The demo is a 17-task history of a small web shop built by agents, with
    handoffs, a context map, a blocked task and a failed one. It goes into
    .ctxgraph/demo.db, or --store FILE, or the Neo4j server named by --neo4j
    or NEO4J_URI (for Neo4j Browser). The store is emptied first; one that
    holds anything but an earlier demo is refused unless --reset is given.
    """
    from ctxgraph.demo import DEMO_TASK, demo_dir, demo_task_ids, load_project

    params = one_store({"store_path": store_path, **kwargs})
    if not params.get("neo4j_uri"):
        params["store_path"] = params.get("store_path") or DEMO_STORE
    root = demo_dir()
    with open_service(params) as svc:
        location = svc.location
        foreign = None if reset else _foreign_contents(svc, demo_task_ids(root))
        if foreign:
            raise CliError(f"{location} holds {foreign}; the demo empties the store it loads into: "
                           "pass --reset to empty it anyway, or name another store", 2)
        svc.initialize(reset=True)
        n_tasks, n_files, n_handoffs = load_project(svc, root)
        ctx = svc.compute(task_id or DEMO_TASK, debug=debug)
    click.echo(f"Loaded {n_tasks} tasks, {n_files} context-map entries and {n_handoffs} handoffs "
               f"into {location}.", err=True)
    if fmt == "json":
        echo_json(ctx.model_dump(mode="json", by_alias=True))
    else:
        click.echo(f"Context of {task_id or DEMO_TASK} ({ctx.tokens} tokens):\n", err=True)
        click.echo(ctx.markdown, nl=False)
    click.echo(f"\nNext, the same context again: {next_command(task_id or DEMO_TASK, params)}", err=True)


def next_command(task_id: str, params: dict[str, Any]) -> str:
    """The ``ctxgraph context`` command that reads the store the demo loaded, as
    a user types it in the same shell (the Neo4j server as the demo was given it)."""
    args = ["ctxgraph", "context", task_id]
    if params.get("neo4j_uri"):
        source = click.get_current_context().get_parameter_source("neo4j_uri")
        if source is not ParameterSource.ENVIRONMENT:
            args += ["--neo4j", params["neo4j_uri"]]
        for option, name in (("--neo4j-user", "neo4j_user"), ("--neo4j-database", "neo4j_database")):
            if params.get(name) and click.get_current_context().get_parameter_source(name) \
                    is not ParameterSource.ENVIRONMENT:
                args += [option, params[name]]
    else:
        args += ["--store", str(params["store_path"])]
    return shlex.join(args)
