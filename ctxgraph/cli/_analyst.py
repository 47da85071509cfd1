"""``ctxgraph analyst-queries``: the saved Cypher queries for Neo4j Browser."""

from __future__ import annotations

from pathlib import Path

import click

from ctxgraph.cli._common import CliError, echo_json, format_option
from ctxgraph.files import atomic_write


@click.command("analyst-queries")
@click.option("--zip", "zip_path", type=click.Path(path_type=Path), metavar="FILE",
              help="Write the queries as a zip to drop onto Neo4j Browser (it saves them as scripts in a "
                   "folder 'ctxgraph').")
@click.option("--task", "task_id", default="task-015", show_default=True,
              help="The task the zip's parameter script points the queries at.")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@format_option
def analyst_command(zip_path: Path | None, task_id: str, force: bool, fmt: str) -> None:
    """List the saved analyst queries, or write them for Neo4j Browser.

    Without --zip: each query's name, title and parameters. With --zip FILE:
    one zip holding every query and a script setting their parameter
    (`:param task_id => ...`); drag FILE onto Neo4j Browser's window and they
    appear under Favorites as saved scripts. Run the parameter script first.
    """
    from ctxgraph import cypher

    if zip_path is None:
        rows = [{"name": n, "title": cypher.analyst_title(n), "parameters": cypher.analyst_parameters(n)}
                for n in cypher.analyst_names()]
        if fmt == "json":
            echo_json(rows)
            return
        for row in rows:
            params = ", ".join(f"${p}" for p in row["parameters"]) or "-"
            click.echo(f"{row['name']}\t{params}\t{row['title']}")
        return
    from ctxgraph.cypher.browser import browser_zip

    if zip_path.is_dir():
        raise CliError(f"{zip_path}: is a folder; expected a file", 2)
    if zip_path.exists() and not force:
        raise CliError(f"{zip_path}: exists (pass --force to overwrite it)", 2)
    if not zip_path.parent.is_dir():
        raise CliError(f"{zip_path.parent}: no such folder", 2)
    data = browser_zip(task_id)
    try:
        with atomic_write(zip_path) as handle:
            handle.write(data)
    except OSError as exc:
        raise CliError(f"{zip_path}: cannot write: {exc.strerror or exc}") from None
    n = len(cypher.analyst_names())
    if fmt == "json":
        echo_json({"zip": str(zip_path), "queries": n, "task_id": task_id})
    else:
        click.echo(f"wrote {n} saved queries and a parameter script (task_id {task_id}) to {zip_path}: "
                   "drop it onto Neo4j Browser")
