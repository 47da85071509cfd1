"""``ctxgraph view``: the graph as a self-contained HTML page, written or served
on loopback (the reads are :mod:`ctxgraph.service.view`, the page
:mod:`ctxgraph.view`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ctxgraph.cli._common import CliError, from_command_line, memory_project_option
from ctxgraph.cli._stores import open_service, store_options, store_params

#: The page's file unless --output names another (and --serve alone writes none).
DEFAULT_OUTPUT = Path("ctxgraph-view.html")
#: The overview's node limit (``ctxgraph.service.view.OVERVIEW_LIMIT``), spelled out for the help.
OVERVIEW_LIMIT = 400


@click.command("view")
@click.argument("task_id", required=False)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help=f"Write the page here [default: {DEFAULT_OUTPUT}; with --serve, none].")
@click.option("--serve", is_flag=True,
              help="Serve the page on 127.0.0.1 until interrupted (Ctrl-C) instead of writing it.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="The port --serve listens on (0: a free one).")
@click.option("--limit", type=click.IntRange(min=1), default=OVERVIEW_LIMIT, show_default=True,
              help="Without TASK_ID: the most nodes the whole-graph overview draws.")
@click.option("--memory/--no-memory", default=None,
              help="Compute the task's context with the associative memory when one is usable "
                   "[default: on, unless the settings say memory = false].")
@memory_project_option
@store_options
def view_command(task_id: str | None, output: Path | None, serve: bool, port: int, limit: int,
                 memory: bool | None, memory_project: str | None, **kwargs: Any) -> None:
    """Draw TASK_ID's neighbourhood, or the whole graph, as an HTML page.

    With TASK_ID: the task, its dependencies and their handoffs, and the
    knowledge, files and related tasks its context drew on (the context is
    computed as `ctxgraph context` computes it, not recorded); stale and
    superseded items are marked. Without: every task, knowledge item and
    handed-off file, when there are at most --limit of them. The page is one
    file that loads nothing from the network (the drawing library,
    Cytoscape.js, is inlined); open it in a browser.
    """
    if from_command_line("port") and not serve:
        raise CliError("--port is where --serve listens: give --serve too", 2)
    if from_command_line("limit") and task_id:
        raise CliError("--limit bounds the whole-graph overview: give no TASK_ID, or no --limit", 2)
    from ctxgraph.service.view import overview, task_view
    from ctxgraph.view.page import render_page

    with open_service(store_params(kwargs), read_only=True) as svc:
        graph = (task_view(svc, task_id, memory=memory, memory_project=memory_project) if task_id
                 else overview(svc, limit=limit))
    page = render_page(graph)
    what = f"{task_id or 'the whole graph'}: {len(graph.nodes)} nodes, {len(graph.edges)} edges"
    target = output if output is not None else None if serve else DEFAULT_OUTPUT
    if target is not None:
        _write(target, page)
        click.echo(f"wrote {target} ({what})")
    if serve:
        _serve(page, port, what)


def _write(path: Path, page: str) -> None:
    from ctxgraph.files import atomic_write

    try:
        with atomic_write(path, text=True) as out:
            out.write(page)
    except OSError as exc:
        raise CliError(f"{path}: cannot write: {exc.strerror or exc}", 2) from None


def _serve(page: str, port: int, what: str) -> None:
    """``page`` at / on 127.0.0.1:``port`` (every other path: 404), until interrupted."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    body = page.encode("utf-8")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path not in ("/", "/index.html"):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the command's one line says where it serves."""

    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError as exc:
        raise CliError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}", 2) from None
    click.echo(f"serving http://127.0.0.1:{server.server_address[1]}/ ({what}); Ctrl-C to stop", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


__all__ = ["view_command"]
