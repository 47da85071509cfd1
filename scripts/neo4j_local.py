#!/usr/bin/env python3
"""Run a real Neo4j 5.26 Community server on this machine without Docker.

The server comes from Neo4j's own jars on Maven Central (fetched once with
Maven into ``.cache/neo4j/lib``) and runs as a plain ``java`` process bound to
127.0.0.1, with authentication on. The password is set on first start and
kept in ``.cache/neo4j/password`` (mode 0600); it is never printed.

Subcommands: fetch, start, stop, status, env, run. ``run -- CMD...`` starts a
server (or reuses a running one), runs CMD with NEO4J_URI / NEO4J_USER /
NEO4J_PASSWORD in its environment, stops the server again if it started it,
and exits with CMD's exit code. See scripts/README.md.

Standard library only; the ``neo4j`` Python driver is imported when a step
needs to talk to the server. This file is the command line; the work is in
scripts/_neo4j_local/ (fetch, instance paths and state, password, server).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from _neo4j_local.common import (
    DEFAULT_BOLT_PORT,
    DEFAULT_HTTP_PORT,
    HOST,
    NEO4J_VERSION,
    PROG,
    STOP_TIMEOUT,
    USER,
    Fail,
    say,
    say_on_stderr,
)
from _neo4j_local.fetch import fetch
from _neo4j_local.instance import INSTANCE_ENV, Instance
from _neo4j_local.process import port_open
from _neo4j_local.server import describe, start, stop

Command = Callable[[argparse.Namespace, Instance], int]

# ----------------------------------------------------------------- commands


def cmd_fetch(args: argparse.Namespace, inst: Instance) -> int:
    fetch(force=args.force)
    return 0


def cmd_start(args: argparse.Namespace, inst: Instance) -> int:
    start(inst, args.home, args.bolt_port, args.http_port)
    return 0


def cmd_stop(args: argparse.Namespace, inst: Instance) -> int:
    stop(inst)
    return 0


def cmd_status(args: argparse.Namespace, inst: Instance) -> int:
    state = inst.read_state()
    if state is None:
        say("Neo4j is not running")
        return 1
    answering = port_open(state["bolt_port"])
    say(f"Neo4j running (pid {state['pid']}){'' if answering else ', Bolt not answering yet'}")
    describe(inst, state)
    return 0 if answering else 1


def start_hint(instance: str | None) -> str:
    """The command that starts this instance, for error messages."""
    if not instance:
        return "python scripts/neo4j_local.py start"
    return f"python scripts/neo4j_local.py --instance {instance} start --bolt-port PORT --http-port PORT"


def cmd_env(args: argparse.Namespace, inst: Instance) -> int:
    # A stopped server is an error, not a default URI: `eval "$(... env)"`
    # would accept that silently and point the shell at another server.
    state = inst.read_state()
    if state is None:
        which = f" (instance {inst.name})" if inst.name else ""
        raise Fail(f"Neo4j is not running{which}; start it first: {start_hint(inst.name)}")
    if not inst.password_file.exists():
        print(f"# {PROG}: no password file yet ({inst.password_file})", file=sys.stderr)
    uri = f"bolt://{HOST}:{state['bolt_port']}"
    print(f"export NEO4J_URI={shlex.quote(uri)}")
    print(f"export NEO4J_USER={shlex.quote(USER)}")
    print(f"export NEO4J_PASSWORD_FILE={shlex.quote(str(inst.password_file))}")
    return 0


def cmd_run(args: argparse.Namespace, inst: Instance) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise Fail("run needs a command after --, e.g. run -- python -m pytest")
    say_on_stderr()
    state, started = start(inst, args.home, args.bolt_port, args.http_port)
    password = inst.read_password_file()
    if password is None:
        raise Fail(f"no password file at {inst.password_file}")
    env = dict(os.environ)
    env.update(NEO4J_URI=f"bolt://{HOST}:{state['bolt_port']}", NEO4J_USER=USER, NEO4J_PASSWORD=password)

    def on_term(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, on_term)
    child: subprocess.Popen[bytes] | None = None
    try:
        try:
            child = subprocess.Popen(command, env=env)
        except FileNotFoundError:
            print(f"{PROG}: error: command not found: {command[0]}", file=sys.stderr)
            return 127
        except PermissionError:
            print(f"{PROG}: error: cannot execute: {command[0]}", file=sys.stderr)
            return 126
        return child.wait()
    except KeyboardInterrupt:
        return 130
    finally:
        if child is not None and child.poll() is None:
            child.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=10)
            if child.poll() is None:
                child.kill()
        signal.signal(signal.SIGTERM, previous)
        if started:
            stop(inst)


def port_number(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port: {text!r}")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            f"Run Neo4j {NEO4J_VERSION} Community locally from Maven Central jars "
            "(no Docker). Auth on; the password lives in "
            ".cache/neo4j/password and is never printed."
        ),
    )
    parser.add_argument(
        "--instance",
        default=os.environ.get(INSTANCE_ENV) or None,
        metavar="NAME",
        help=f"a separate server with its own home, state and password under "
        f".cache/neo4j/instances/NAME (env {INSTANCE_ENV}); pair it with other ports",
    )
    sub = parser.add_subparsers(dest="command_name", metavar="COMMAND", required=True)

    def server_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--home",
            type=Path,
            default=None,
            help="Neo4j home (data, logs); default .cache/neo4j/home, or the instance's",
        )
        p.add_argument(
            "--bolt-port",
            type=port_number,
            default=DEFAULT_BOLT_PORT,
            help=f"Bolt port on {HOST} (default {DEFAULT_BOLT_PORT})",
        )
        p.add_argument(
            "--http-port",
            type=port_number,
            default=DEFAULT_HTTP_PORT,
            help=f"HTTP/Browser port on {HOST} (default {DEFAULT_HTTP_PORT})",
        )

    p = sub.add_parser(
        "fetch",
        help="download Neo4j's jars with Maven (once)",
        description="Download Neo4j and Neo4j Browser jars from Maven Central "
        "into .cache/neo4j/lib (skipped when already there).",
    )
    p.add_argument("--force", action="store_true", help="fetch again even if cached")
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser(
        "start",
        help="start the server in the background",
        description="Fetch if needed, start Neo4j detached, wait for Bolt "
        "and set the neo4j user's password. Does nothing when "
        "already running.",
    )
    server_options(p)
    p.set_defaults(func=cmd_start)

    p = sub.add_parser(
        "stop",
        help="stop the server",
        description=f"SIGTERM the server, SIGKILL after {STOP_TIMEOUT:.0f} s.",
    )
    p.set_defaults(func=cmd_stop)

    p = sub.add_parser(
        "status",
        help="say whether the server runs (exit 0) or not (exit 1)",
        description="Exit 0 when the server runs and Bolt answers, else 1.",
    )
    p.set_defaults(func=cmd_status)

    p = sub.add_parser(
        "env",
        help="print export lines for the running server (NEO4J_URI/USER/PASSWORD_FILE)",
        description="Print shell export lines (NEO4J_URI with the running "
        "server's Bolt port, NEO4J_USER, NEO4J_PASSWORD_FILE); the password "
        "itself is not printed. When the server (of --instance, if given) is "
        "not running, print nothing and exit 1. "
        'Use: eval "$(python scripts/neo4j_local.py env)"',
    )
    p.set_defaults(func=cmd_env)

    p = sub.add_parser(
        "run",
        help="run a command against a server, then stop it",
        usage=f"{PROG} run [options] -- CMD [ARG ...]",
        description="Start the server (or reuse a running one), run CMD with "
        "NEO4J_URI, NEO4J_USER and NEO4J_PASSWORD in its "
        "environment, stop the server if this call started it, "
        "and exit with CMD's status.",
    )
    server_options(p)
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD [ARG ...]", help="the command to run")
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        inst = Instance.named(args.instance)
        if getattr(args, "home", "absent") is None:
            args.home = inst.default_home
        func: Command = args.func
        return int(func(args, inst))
    except Fail as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
