"""``ctxgraph mcp``: serve the graph over the Model Context Protocol."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from ctxgraph.cli import CliError, store_options
from ctxgraph.mcp.limits import DEFAULT_MAX_TOKENS, MIN_MAX_TOKENS, TOKEN_ENV


def _from_command_line(name: str) -> bool:
    ctx = click.get_current_context()
    return ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE


def _stdin_line(what: str) -> str:
    line = sys.stdin.readline().rstrip("\r\n")
    if not line:
        raise CliError(f"{what}: nothing on the first line of standard input", 2)
    return line


@click.command("mcp")
@click.option("--http", "http_address", metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST defaults to "
                   "127.0.0.1; port 0 picks a free one, printed on stderr).")
@click.option("--token-stdin", is_flag=True,
              help=f"HTTP: read the bearer token from the first line of standard input (else ${TOKEN_ENV}).")
@click.option("--no-auth", is_flag=True,
              help="HTTP: accept requests without a token; refused unless HOST is a loopback address.")
@click.option("--project", "project_specs", multiple=True, metavar="NAME=PATH|NAME=URI[#DB]",
              help="Serve this project (repeatable): an embedded store file, or a Neo4j server URI "
                   "(with #DATABASE to name a database). Replaces --store/--neo4j.")
@click.option("--default-project", metavar="NAME",
              help="The project used when a call names none [default: the only one].")
@click.option("--max-response-tokens", type=click.IntRange(min=MIN_MAX_TOKENS), default=DEFAULT_MAX_TOKENS,
              show_default=True, help="No response is larger (estimated tokens of the whole result).")
@click.option("--read-only", is_flag=True,
              help="Open the stores read-only and offer no tool that writes.")
@store_options
def mcp_command(http_address: str | None, token_stdin: bool, no_auth: bool, project_specs: tuple[str, ...],
                default_project: str | None, max_response_tokens: int, read_only: bool, store_path: Path | None,
                neo4j_uri: str | None, neo4j_user: str | None, neo4j_database: str | None,
                password_stdin: bool) -> None:
    """Serve ctxgraph over the Model Context Protocol (MCP), for any orchestrator.

    \b
    Transports:
      stdio (default)   the client starts `ctxgraph mcp` and talks over its
                        standard input and output (logs go to stderr).
      --http HOST:PORT  streamable HTTP at http://HOST:PORT/mcp.

    \b
    Auth (HTTP only): every request needs `Authorization: Bearer TOKEN`.
    The token comes from $CTXGRAPH_MCP_TOKEN or, with --token-stdin, the
    first line of standard input - never from the command line - and is
    compared in constant time. --no-auth is accepted on loopback addresses
    only (127.0.0.0/8, ::1, localhost).

    \b
    Projects: one store by default (--store / --neo4j, as for every
    command); --project NAME=PATH or NAME=neo4j://HOST:PORT (repeatable)
    serves several, each with its own store; tools take a `project`
    argument (optional with one project or --default-project). Neo4j
    projects share NEO4J_USER and the password (NEO4J_PASSWORD,
    NEO4J_PASSWORD_FILE, or --password-stdin with --http).

    \b
    Size cap: no response exceeds --max-response-tokens (estimated as the
    rest of ctxgraph counts tokens): a context's budget is lowered to fit
    (the result says so), lists are paginated (cursor / next_cursor), and
    anything else too large is an error.

    Tools: compute_context, explain_context, search_knowledge, get_task,
    list_tasks, graph_stats, list_projects, and (unless --read-only)
    add_task, ingest_handoff, block_task, unblock_task. Resources:
    ctxgraph://context/{task_id}, ctxgraph://stats and, per project,
    ctxgraph://projects/{project}/context/{task_id} and .../stats. Errors
    are tool errors whose text is the CLI's line (`ctxgraph: error: ...`).
    """
    from ctxgraph.mcp.projects import DEFAULT_NAME, Project, Projects, check_distinct, parse_project, spec_for
    from ctxgraph.mcp.tools import build_server
    from ctxgraph.mcp.transport import (
        StaticTokenVerifier,
        auth_settings,
        bind,
        check_token,
        is_loopback,
        parse_address,
        say,
        serve_http,
        serve_stdio,
        url_of,
    )
    from ctxgraph.service import ContextService

    if http_address is None and (token_stdin or no_auth or password_stdin):
        flag = "--token-stdin" if token_stdin else "--no-auth" if no_auth else "--password-stdin"
        raise CliError(f"{flag} needs --http: over stdio, standard input carries the protocol", 2)
    if token_stdin and (no_auth or password_stdin):
        other = "--no-auth" if no_auth else "--password-stdin (use NEO4J_PASSWORD_FILE)"
        raise CliError(f"--token-stdin cannot be used with {other}", 2)
    if project_specs:
        for option, name in (("--store", "store_path"), ("--neo4j", "neo4j_uri")):
            if _from_command_line(name):
                raise CliError(f"{option} cannot be used with --project: give every project as --project NAME=...", 2)
        specs = [parse_project(text) for text in project_specs]
    elif neo4j_uri:
        specs = [spec_for(DEFAULT_NAME, neo4j_uri)]
    else:
        specs = [spec_for(DEFAULT_NAME, str(store_path or ContextService.default_store_path()))]
    specs = [s if s.kind == "embedded" or s.database else replace(s, database=neo4j_database) for s in specs]
    check_distinct(specs)

    address = token = None
    if http_address is not None:
        address = parse_address(http_address)
        if no_auth:
            if not is_loopback(address[0]):
                raise CliError(f"--no-auth is allowed on loopback addresses only (127.0.0.1, ::1, localhost), "
                               f"not {address[0]}: give a token", 2)
        elif token_stdin:
            token = check_token(_stdin_line("--token-stdin"))
        elif os.environ.get(TOKEN_ENV):
            token = check_token(os.environ[TOKEN_ENV])
        else:
            raise CliError(f"a bearer token is required over HTTP: set {TOKEN_ENV} or pass --token-stdin "
                           "(or --no-auth on a loopback address)", 2)
    password = None
    on_neo4j = any(s.kind == "neo4j" for s in specs)
    if password_stdin:
        if not on_neo4j:
            raise CliError("--password-stdin needs a Neo4j project", 2)
        password = _stdin_line("--password-stdin")
    elif (on_neo4j and address is not None and not token_stdin and sys.stdin is not None and sys.stdin.isatty()
          and not (os.environ.get("NEO4J_PASSWORD") or os.environ.get("NEO4J_PASSWORD_FILE"))):
        user = neo4j_user or os.environ.get("NEO4J_USER") or "neo4j"
        password = str(click.prompt(f"Neo4j password for {user}", hide_input=True, err=True, default="",
                                    show_default=False)) or None

    projects = Projects([Project(s, neo4j_user=neo4j_user, neo4j_password=password, read_only=read_only)
                         for s in specs], default_project)
    try:
        for project in projects.by_name.values():
            reason = project.try_open()
            if reason is not None:
                say(f"warning: project {project.name}: {reason} (tools will try again; the context of an "
                    "unsaved task is computed without the store)")
        names = projects.names()
        if address is None:
            server = build_server(projects, max_tokens=max_response_tokens, read_only=read_only)
            say(f"serving over stdio (projects: {names})")
            serve_stdio(server)
            return
        sock = bind(*address)
        try:
            host, port = sock.getsockname()[:2]
            verifier = StaticTokenVerifier(token) if token is not None else None
            server = build_server(projects, max_tokens=max_response_tokens, read_only=read_only,
                                  token_verifier=verifier, auth=auth_settings(host, port) if verifier else None)
            say(f"serving {url_of(sock)} (projects: {names}; "
                f"{'bearer token required' if verifier else 'no auth, loopback only'})")
            serve_http(server, sock, access_log=_verbose())
        finally:
            sock.close()
    finally:
        projects.close()


def _verbose() -> bool:
    ctx: Any = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().params.get("verbose"))
