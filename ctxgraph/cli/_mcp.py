"""``ctxgraph mcp``: serve the graph over the Model Context Protocol."""

from __future__ import annotations

import importlib
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ctxgraph.cli._common import CliError, from_command_line, stdin_line, verbose
from ctxgraph.cli._stores import neo4j_password, one_store, store_location, store_options
from ctxgraph.mcp.limits import DEFAULT_MAX_TOKENS, MIN_MAX_TOKENS, READ_TOOLS, TOKEN_ENV, TOKEN_FILE_ENV, WRITE_TOOLS
from ctxgraph.mcp.logs import LOG_FORMAT_ENV, LOG_FORMATS, use_log_format
from ctxgraph.mcp.startup import DEFAULT_SHUTDOWN_SECONDS, SHUTDOWN_ENV

if TYPE_CHECKING:
    from ctxgraph.mcp.projects import Projects, ProjectSpec
    from ctxgraph.mcp.transport import StaticTokenVerifier

#: The packages of the ``mcp`` extra (not part of a plain ``pip install ctxgraph``).
MCP_EXTRA_MODULES = ("mcp", "prometheus_client")


MCP_HELP = """Serve ctxgraph over the Model Context Protocol (MCP), for any orchestrator.

\b
Transports:
  stdio (default)   the client starts `ctxgraph mcp` and talks over its
                    standard input and output (logs go to stderr).
  --http HOST:PORT  streamable HTTP at http://HOST:PORT/mcp.

\b
Auth (HTTP only): every request needs `Authorization: Bearer TOKEN`.
The token comes from $CTXGRAPH_MCP_TOKEN or, with --token-stdin, the
first line of standard input - never from the command line - and is
compared in constant time. --project-tokens FILE gives each project its
own token. --no-auth is accepted on loopback addresses only
(127.0.0.0/8, ::1, localhost). On a loopback address only requests whose
Host and Origin headers name that address are served (DNS rebinding).
Without the token: /healthz, /readyz (503 with the reason while a store
is down) and /metrics (Prometheus). SIGTERM drains: new requests get
503, those in flight finish within --shutdown-timeout.

\b
Projects: one store by default (--store / --neo4j, as for every
command); --project NAME=PATH or NAME=neo4j://HOST:PORT (repeatable)
serves several, each with its own store; tools take a `project`
argument (optional with one project or --default-project). Neo4j
projects share NEO4J_USER and the password (NEO4J_PASSWORD,
NEO4J_PASSWORD_FILE, or --password-stdin with --http). An embedded
store that does not exist is refused unless --create.

\b
Client setup: `ctxgraph mcp --print-config [claude|cursor] [options]`
prints the client's JSON with the absolute paths of this ctxgraph and
of the store.

\b
Size cap: no response exceeds --max-response-tokens (estimated as the
rest of ctxgraph counts tokens): a context's budget is lowered to fit
(the result says so), lists are paginated (cursor / next_cursor), and
anything else too large is an error. Arguments are checked strictly
(types, no unknown ones, length limits) before any work.

\b
Memory: where a project's root is known (the folder given as
NAME=FOLDER or by --root, else the settings file's folder or the git
work tree around the store), its code is indexed in the background on
start and watched: a saved file is re-indexed within about a second. A
context computed before the first index is complete uses what is there
and says so
(`_computed.memory`: "partial (412/1,203 files ...)"); graph_stats and the
stats resources show the progress under `memory`, and a line goes to
stderr at each 10 %. --no-index, --read-only or `memory = false` turn it off.

Tools: {reads}, and (unless --read-only) {writes}. Resources:
ctxgraph://context/{task_id}, ctxgraph://stats and, per project,
ctxgraph://projects/{project}/context/{task_id} and .../stats. Errors
are tool errors whose text is the CLI's line (`ctxgraph: error: ...`).
"""


@click.command("mcp", help=MCP_HELP)
@click.option("--http", "http_address", metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST defaults to "
                   "127.0.0.1; port 0 picks a free one, printed on stderr).")
@click.option("--token-stdin", is_flag=True,
              help=f"HTTP: read the bearer token from the first line of standard input (else ${TOKEN_ENV}, "
                   f"else the first line of the file ${TOKEN_FILE_ENV} names).")
@click.option("--no-auth", is_flag=True,
              help="HTTP: accept requests without a token; refused unless HOST is a loopback address.")
@click.option("--project-tokens", "project_tokens_file", metavar="FILE", envvar="CTXGRAPH_MCP_PROJECT_TOKENS",
              show_envvar=True,
              help="HTTP: a file of NAME=TOKEN lines, one bearer token per project; a project's token "
                   f"reaches that project only (${TOKEN_ENV}, if set, still reaches every one).")
@click.option("--project", "project_specs", multiple=True, metavar="NAME=PATH|NAME=URI[#DB]",
              envvar="CTXGRAPH_MCP_PROJECTS", show_envvar=True,
              help="Serve this project (repeatable): an embedded store file, a project folder (its root; "
                   "its store is FOLDER/.ctxgraph/graph.db), or a Neo4j server URI (with #DATABASE to name "
                   "a database). Replaces --store/--neo4j. In the variable: separated by spaces.")
@click.option("--no-index", is_flag=True, envvar="CTXGRAPH_MCP_NO_INDEX", show_envvar=True,
              help="Do not index the projects' roots in the background nor watch them (the memory then "
                   "searches what `ctxgraph index` wrote).")
@click.option("--root", "roots", multiple=True, metavar="[NAME=]FOLDER", envvar="CTXGRAPH_MCP_ROOT",
              show_envvar=True,
              help="The project's root, whose code the memory indexes and watches: FOLDER for the one store "
                   "served, NAME=FOLDER (repeatable) for a project given by --project as a store file or a "
                   "Neo4j URI [default: the settings file's folder, else the git work tree around the store; "
                   "for Neo4j, around the current folder when only one project is served].")
@click.option("--default-project", metavar="NAME", envvar="CTXGRAPH_MCP_DEFAULT_PROJECT", show_envvar=True,
              help="The project used when a call names none [default: the only one].")
@click.option("--max-response-tokens", type=click.IntRange(min=MIN_MAX_TOKENS), default=DEFAULT_MAX_TOKENS,
              show_default=True, envvar="CTXGRAPH_MCP_MAX_RESPONSE_TOKENS", show_envvar=True,
              help="No response is larger (estimated tokens of the whole result).")
@click.option("--read-only", is_flag=True,
              help="Open the stores read-only and offer no tool that writes.")
@click.option("--create", is_flag=True,
              help="Create an embedded store that does not exist yet (without it, a missing store is refused).")
@click.option("--print-config", type=click.Choice(["claude", "cursor"]), is_flag=False, flag_value="claude",
              default=None, metavar="[claude|cursor]",
              help="Print the JSON that registers this server (these options, absolute paths) with Claude "
                   "Code (.mcp.json) or Cursor (.cursor/mcp.json), and exit.")
@click.option("--log-format", type=click.Choice(LOG_FORMATS), default="text", show_default=True,
              envvar=LOG_FORMAT_ENV, show_envvar=True,
              help="json: every line on stderr a JSON object, and one per request (method, tool, project, status, "
                   "duration; never an argument or a token).")
@click.option("--shutdown-timeout", type=click.FloatRange(min=2, max=3600), default=DEFAULT_SHUTDOWN_SECONDS,
              show_default=True, metavar="SECONDS", envvar=SHUTDOWN_ENV, show_envvar=True,
              help="HTTP: on SIGTERM new requests get 503, those in flight finish, and the process exits within "
                   "SECONDS.")
@store_options
def mcp_command(http_address: str | None, token_stdin: bool, no_auth: bool, project_tokens_file: str | None,
                project_specs: tuple[str, ...], no_index: bool, roots: tuple[str, ...], default_project: str | None,
                max_response_tokens: int, log_format: str, shutdown_timeout: float,
                read_only: bool, create: bool, print_config: str | None, store_path: Path | None,
                neo4j_uri: str | None, neo4j_user: str | None, neo4j_database: str | None,
                password_stdin: bool) -> None:
    """Serve ctxgraph over the Model Context Protocol (its help: ``MCP_HELP``)."""
    from ctxgraph.mcp.projects import Project, Projects
    from ctxgraph.mcp.startup import say

    use_log_format(log_format)
    _check_flags(http_address, token_stdin, no_auth, project_tokens_file, password_stdin, print_config)
    specs = _project_specs(project_specs, roots, store_path, neo4j_uri, neo4j_database)
    address, token = _http_auth(http_address, no_auth, token_stdin, project_tokens_file)
    project_tokens = _project_tokens(project_tokens_file, token, specs)
    _check_stores_exist(specs, create, bool(project_specs))
    if print_config:
        print(json.dumps(client_config(print_config, specs, bool(project_specs)), indent=2))
        say(f"{CONFIG_HINT[print_config]}; the server's errors go to the client's MCP log")
        return

    # the SDK (~1-3 s) is imported once the command line is known to be good
    _import_server()
    from ctxgraph.mcp.transport import StaticTokenVerifier

    verifier = StaticTokenVerifier(token, project_tokens) if token or project_tokens else None
    password = None
    servers = ", ".join(s.location for s in specs if s.kind == "neo4j")
    if password_stdin and not servers:
        raise CliError("--password-stdin needs a Neo4j project", 2)
    if servers and address is not None and not token_stdin:
        # over stdio, standard input carries the protocol: no prompt, no password line
        password = neo4j_password(from_stdin=password_stdin, user=neo4j_user, server=servers)

    projects = Projects([Project(s, neo4j_user=neo4j_user, neo4j_password=password, read_only=read_only)
                         for s in specs], default_project)
    try:
        _open_projects(projects, no_index)
        _serve(projects, address, verifier, max_tokens=max_response_tokens, read_only=read_only,
               log_format=log_format, shutdown_timeout=shutdown_timeout)
    finally:
        projects.close()


def _import_server() -> None:
    """Import the server's modules, and with them the SDK; missing, it is the ``mcp`` extra that is."""
    try:
        for module in ("ctxgraph.mcp.observe", "ctxgraph.mcp.tools", "ctxgraph.mcp.transport"):
            importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in MCP_EXTRA_MODULES:
            raise
        raise CliError("the MCP server needs `pip install 'ctxgraph[mcp]'`", 2) from None


def _check_flags(http_address: str | None, token_stdin: bool, no_auth: bool, project_tokens_file: str | None,
                 password_stdin: bool, print_config: str | None) -> None:
    """Refuse the combinations of options that cannot work together."""
    if print_config and (http_address is not None or password_stdin):
        other = "--http" if http_address else "--password-stdin"
        raise CliError(f"--print-config prints a stdio setup: not with {other}", 2)
    if http_address is None and (token_stdin or no_auth or password_stdin or project_tokens_file):
        flag = ("--token-stdin" if token_stdin else "--no-auth" if no_auth else "--password-stdin" if password_stdin
                else "--project-tokens")
        raise CliError(f"{flag} needs --http: over stdio, standard input carries the protocol", 2)
    if no_auth and project_tokens_file:
        raise CliError("--project-tokens cannot be used with --no-auth", 2)
    if token_stdin and (no_auth or password_stdin):
        other = "--no-auth" if no_auth else "--password-stdin (use NEO4J_PASSWORD_FILE)"
        raise CliError(f"--token-stdin cannot be used with {other}", 2)


def _project_specs(project_specs: tuple[str, ...], roots: tuple[str, ...], store_path: Path | None,
                   neo4j_uri: str | None, neo4j_database: str | None) -> list[ProjectSpec]:
    """The served projects: --project's, else the one store of --store / --neo4j; with roots, absolute paths."""
    from ctxgraph.mcp.projects import DEFAULT_NAME, check_distinct, parse_project, spec_of, with_roots

    if project_specs:
        for option, name in (("--store", "store_path"), ("--neo4j", "neo4j_uri")):
            if from_command_line(name):
                raise CliError(f"{option} cannot be used with --project: give every project as --project NAME=...", 2)
        specs = [parse_project(text) for text in project_specs]
    else:
        chosen = one_store({"store_path": store_path, "neo4j_uri": neo4j_uri})
        specs = [spec_of(DEFAULT_NAME, store_location({**chosen, "neo4j_database": None}))]
    specs = [s if s.kind == "embedded" or s.database else replace(s, database=neo4j_database) for s in specs]
    check_distinct(specs)
    specs = with_roots(specs, roots, bool(project_specs))
    return [replace(s, location=os.path.abspath(s.location)) if s.kind == "embedded" else s for s in specs]


def _http_auth(http_address: str | None, no_auth: bool, token_stdin: bool,
               project_tokens_file: str | None) -> tuple[tuple[str, int] | None, str | None]:
    """The HTTP address to bind (None: stdio) and the bearer token every project accepts (None: none)."""
    from ctxgraph.mcp.startup import check_token, is_loopback, parse_address, read_token_file

    if http_address is None:
        return None, None
    address = parse_address(http_address)
    token = None
    if no_auth:
        if not is_loopback(address[0]):
            raise CliError(f"--no-auth is allowed on loopback addresses only (127.0.0.0/8, ::1, localhost), "
                           f"not {address[0]}: give a token", 2)
    elif token_stdin:
        token = check_token(stdin_line("--token-stdin", "token"))
    elif os.environ.get(TOKEN_ENV):
        token = check_token(os.environ[TOKEN_ENV])
    elif os.environ.get(TOKEN_FILE_ENV):
        token = check_token(read_token_file(os.environ[TOKEN_FILE_ENV]))
    elif not project_tokens_file:
        raise CliError(f"a bearer token is required over HTTP: set {TOKEN_ENV} or {TOKEN_FILE_ENV}, or pass "
                       "--token-stdin "
                       "(or --no-auth on a loopback address, or --project-tokens FILE)", 2)
    return address, token


def _project_tokens(project_tokens_file: str | None, token: str | None,
                    specs: list[ProjectSpec]) -> dict[str, str] | None:
    """The per-project tokens of --project-tokens, each naming a served project and none the shared token."""
    from ctxgraph.mcp.startup import check_distinct_tokens, read_project_tokens

    project_tokens = read_project_tokens(project_tokens_file) if project_tokens_file else None
    for name in project_tokens or {}:
        if name not in {s.name for s in specs}:
            raise CliError(f"--project-tokens: {name!r} is not a served project", 2)
    check_distinct_tokens(token, project_tokens)
    return project_tokens


def _check_stores_exist(specs: list[ProjectSpec], create: bool, several: bool) -> None:
    """Refuse an embedded store that does not exist, unless --create."""
    from ctxgraph.mcp.projects import DEFAULT_NAME

    for spec in specs:
        if spec.kind == "embedded" and not create and not os.path.exists(spec.location):
            named = "" if spec.name == DEFAULT_NAME and not several else f"project {spec.name}: "
            raise CliError(f"{named}no store at {spec.location}: create it with `ctxgraph init --store PATH` "
                           "or pass --create", 2)


def _open_projects(projects: Projects, no_index: bool) -> None:
    """Open every project's store (a warning for one that is down) and start its memory's indexing."""
    from ctxgraph.mcp.startup import say

    for project in projects.by_name.values():
        reason = project.try_open()
        if reason is not None:
            say(f"warning: project {project.name}: {reason} (tools will try again; the context of an "
                "unsaved task is computed without the store)")
        elif not no_index:
            say(project.keep_memory(say))


def _serve(projects: Projects, address: tuple[str, int] | None, verifier: StaticTokenVerifier | None, *,
           max_tokens: int, read_only: bool, log_format: str, shutdown_timeout: float) -> None:
    """Serve ``projects`` over stdio (no address) or streamable HTTP until the client or a signal ends it."""
    from ctxgraph.mcp.observe import observe
    from ctxgraph.mcp.startup import say
    from ctxgraph.mcp.tools import build_server
    from ctxgraph.mcp.transport import auth_settings, bind, serve_http, serve_stdio, url_of

    names = projects.names()
    if address is None:
        server = build_server(projects, max_tokens=max_tokens, read_only=read_only)
        if log_format == "json":
            observe(server, None)
        say(f"serving over stdio (projects: {names})")
        serve_stdio(server)
        return
    sock = bind(*address)
    try:
        host, port = sock.getsockname()[:2]
        server = build_server(projects, max_tokens=max_tokens, read_only=read_only,
                              token_verifier=verifier, auth=auth_settings(host, port) if verifier else None)
        say(f"serving {url_of(sock)} (projects: {names}; "
            f"{'bearer token required' if verifier else 'no auth, loopback only'})")
        serve_http(server, sock, projects, access_log=verbose(), shutdown_seconds=shutdown_timeout)
    finally:
        sock.close()

CONFIG_HINT = {
    "claude": "Claude Code: save this as .mcp.json at the project's root (or merge its entry into an existing one)",
    "cursor": "Cursor: save this as .cursor/mcp.json in the project (or ~/.cursor/mcp.json for every project)",
}


# The tool list in the help is the server's own (ctxgraph.mcp.limits: what it registers).
mcp_command.help = MCP_HELP.replace("{reads}", ", ".join(READ_TOOLS)).replace(
    "{writes}", ", ".join(WRITE_TOOLS))


def _executable() -> list[str]:
    """The command that runs this ctxgraph: the console script, else ``python -m ctxgraph``."""
    argv0 = Path(sys.argv[0])
    if argv0.name.startswith("ctxgraph") and argv0.suffix != ".py" and argv0.is_file():
        return [str(argv0.resolve())]
    return [os.path.abspath(sys.executable), "-m", "ctxgraph"]


def client_config(client: str, specs: list[Any], several: bool) -> dict[str, Any]:
    """The ``mcpServers`` JSON of this server for ``client`` (claude or cursor)."""
    command, *prefix = _executable()
    args = [*prefix, "mcp"]
    for name, value in _given_options():
        args += [name] if value is True else [name, value]
    if several:
        for spec in specs:
            where = spec.location + (f"#{spec.database}" if spec.database else "")
            args += ["--project", f"{spec.name}={spec.root if spec.root and not spec.root_option else where}"]
    elif specs[0].kind == "embedded":
        args += ["--store", specs[0].location]
    else:
        args += ["--neo4j", specs[0].location] + (["--neo4j-database", specs[0].database] if specs[0].database else [])
    for spec in specs:
        if spec.root_option:
            args += ["--root", f"{spec.name}={spec.root}" if several else str(spec.root)]
    entry: dict[str, Any] = {"type": "stdio"} if client == "claude" else {}
    entry |= {"command": command, "args": args}
    if any(s.kind == "neo4j" for s in specs):
        ref = "${NEO4J_PASSWORD}" if client == "claude" else "${env:NEO4J_PASSWORD}"
        entry["env"] = {"NEO4J_PASSWORD": ref}
        user = click.get_current_context().params.get("neo4j_user")
        if user:
            entry["env"]["NEO4J_USER"] = user
    return {"mcpServers": {"ctxgraph": entry}}


def _given_options() -> list[tuple[str, Any]]:
    """The serving options given on the command line (not the store's), as they were given."""
    params = click.get_current_context().params
    given: list[tuple[str, Any]] = []
    for flag, name in (("--read-only", "read_only"), ("--max-response-tokens", "max_response_tokens"),
                       ("--default-project", "default_project"), ("--no-index", "no_index")):
        if from_command_line(name):
            value = params[name]
            given.append((flag, value if value is True else str(value)))
    return given
