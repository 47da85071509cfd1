"""Which store a command opens, and what a failing command leaves: the store
options (--store, --neo4j and its user, database and password), one store
per command (--store and --neo4j, or their variables, are not both taken),
the service opened on it, no new file after a failure, and where the demo is
when the project's store is missing."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from ctxgraph.cli._common import CliError, F, note, stdin_line, stdin_used
from ctxgraph.errors import StoreUnavailableError

if TYPE_CHECKING:
    from ctxgraph.service import ContextService, StoreLocation

#: Where the demo goes when no store is named: its own file, never the project's graph.
DEMO_STORE = Path(".ctxgraph") / "demo.db"
#: The folder of the project's store, and what the ``.gitignore`` the store writes
#: when it makes that folder holds (``ctxgraph.graph.local.folder``'s ``FOLDER``, ``GITIGNORE``).
STORE_FOLDER, GITIGNORE = ".ctxgraph", "*\n"


def store_options(fn: F) -> F:
    """--store / --neo4j and friends, on every command that opens a store."""
    return click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
                        envvar="CTXGRAPH_STORE", show_envvar=True,
                        help="Embedded store file [default: the nearest .ctxgraph/graph.db from here "
                             "upwards, else ./.ctxgraph/graph.db].")(neo4j_options(fn))


#: --neo4j-user and --neo4j-database, also on commands with a --neo4j of their own (eval).
neo4j_user_option = click.option("--neo4j-user", metavar="NAME", envvar="NEO4J_USER", show_envvar=True,
                                 help="Neo4j user [default: neo4j].")
neo4j_database_option = click.option("--neo4j-database", metavar="NAME", envvar="NEO4J_DATABASE",
                                     show_envvar=True, help="Neo4j database [default: the server's default].")


def neo4j_options(fn: F) -> F:
    """--neo4j URI and its user, database and password options."""
    options = [
        click.option("--neo4j", "neo4j_uri", metavar="URI", envvar="NEO4J_URI", show_envvar=True,
                     help="Use a Neo4j server (neo4j://, bolt://, +s/+ssc variants) instead of "
                          "the embedded store. Password from NEO4J_PASSWORD or NEO4J_PASSWORD_FILE, "
                          "--password-stdin, or a prompt when standard input is a terminal."),
        neo4j_user_option,
        neo4j_database_option,
        click.option("--password-stdin", is_flag=True,
                     help="Read the Neo4j password from the first line of standard input."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def neo4j_password(*, from_stdin: bool, user: str | None, server: str) -> str | None:
    """The Neo4j password when the command must supply it: the first line of
    standard input with ``from_stdin`` (--password-stdin), else a prompt
    (hidden input) for ``user`` at ``server`` when no NEO4J_PASSWORD /
    NEO4J_PASSWORD_FILE is set and standard input is a terminal; else None
    (the environment's, if any). The caller has checked that a Neo4j server
    is used and that standard input is free."""
    if from_stdin:
        return stdin_line("--password-stdin", "password")
    if os.environ.get("NEO4J_PASSWORD") or os.environ.get("NEO4J_PASSWORD_FILE"):
        return None
    if sys.stdin is not None and sys.stdin.isatty():
        password = click.prompt(f"Neo4j password for {user or 'neo4j'} at {server}", hide_input=True, err=True,
                                default="", show_default=False)
        return str(password) or None
    return None


def _password(params: dict[str, Any]) -> str | None:
    """The password a store command supplies for the server its options name."""
    uri = params.get("neo4j_uri")
    if not uri:
        if params.get("password_stdin"):
            raise CliError("--password-stdin needs a Neo4j server (--neo4j URI or NEO4J_URI)", 2)
        return None
    if params.get("password_stdin") and stdin_used():
        raise CliError("--password-stdin cannot be used when a document comes from standard input (-); "
                       "use NEO4J_PASSWORD_FILE", 2)
    return neo4j_password(from_stdin=bool(params.get("password_stdin")), user=params.get("neo4j_user"), server=uri)


def store_params(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The store options taken out of a command's ``kwargs``, naming one store."""
    keys = ("store_path", "neo4j_uri", "neo4j_user", "neo4j_database", "password_stdin")
    return one_store({k: kwargs.pop(k) for k in keys})


def service_opener(params: dict[str, Any], *, read_only: bool = False) -> Callable[[], ContextService]:
    """A function that opens the service on the store the options name (the
    Neo4j password, if the CLI must supply it, is read now, once)."""
    from ctxgraph.service import ContextService

    location = store_location(params)
    return partial(ContextService.open, location, neo4j_user=params.get("neo4j_user"),
                   neo4j_password=_password(params), read_only=read_only)


def store_location(params: dict[str, Any]) -> StoreLocation:
    """The store the options name (:func:`ctxgraph.graph.factory.chosen_location`)."""
    from ctxgraph.service import chosen_location

    return chosen_location(params.get("store_path"), neo4j_uri=params.get("neo4j_uri"),
                           database=params.get("neo4j_database"))


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


def embedded_path(params: dict[str, Any]) -> Path:
    """The embedded store file the options name, the Neo4j server aside."""
    from ctxgraph.service import chosen_location

    path = chosen_location(params.get("store_path")).path
    assert path is not None  # a path object, CTXGRAPH_STORE or the default: a file
    return path


def note_new_gitignore(params: dict[str, Any]) -> None:
    """When opening the embedded store ``params`` name makes its ``.ctxgraph``
    folder (with a ``.gitignore``: :mod:`ctxgraph.graph.local.folder`), say so
    once, last, as the command ends (not when it failed and removed the folder)."""
    if params.get("neo4j_uri"):
        return
    folder = embedded_path(params).parent
    if folder.name != STORE_FOLDER or folder.exists():
        return
    ignore = folder / ".gitignore"

    def say() -> None:
        if ignore.is_file():
            note(f"wrote {ignore}: git ignores the store's folder")

    click.get_current_context().call_on_close(say)


def new_paths(store: Path) -> list[Path]:
    """``store`` and the folders above it that do not exist yet (deepest first),
    or nothing when the store exists."""
    if store.exists():
        return []
    missing = [store]
    folder = store.parent
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def remove_if_empty(created: list[Path]) -> None:
    """Remove the store file (with its WAL files) and folders this command
    created, unless a node was written to it (then it is a store: kept)."""
    if not created or not created[0].is_file():
        return
    from ctxgraph.service import ContextService

    if not ContextService.discard_empty_store(created[0]):
        return
    for folder in created[1:]:
        _discard_gitignore(folder)  # the one this command wrote with the folder
        try:
            folder.rmdir()  # only when empty
        except OSError:
            return


def _discard_gitignore(folder: Path) -> None:
    """Delete the ``.gitignore`` the store wrote when it made ``folder`` (a
    command that made the folder and failed leaves nothing); any other is kept."""
    ignore = folder / ".gitignore"
    try:
        if folder.name == STORE_FOLDER and ignore.read_text(encoding="ascii") == GITIGNORE:
            ignore.unlink()
    except (OSError, UnicodeDecodeError):
        pass


def demo_hint(params: dict[str, Any]) -> str | None:
    """Where the demo is, when the default store does not exist but the demo's does."""
    if params.get("neo4j_uri") or params.get("store_path") or os.environ.get("CTXGRAPH_STORE"):
        return None
    store = embedded_path(params)
    demo = store.with_name(DEMO_STORE.name)
    if store.exists() or not demo.is_file():
        return None
    return f"the demo is in {demo}: add --store {demo}"


def one_store(params: dict[str, Any], store_option: str = "store_path") -> dict[str, Any]:
    """``params`` naming one store. --store and --neo4j both on the command
    line, or CTXGRAPH_STORE and NEO4J_URI both in the environment, are
    refused (exit 2); one on the command line outranks the other from the
    environment, with a note on stderr."""
    store, uri = params.get("store_path"), params.get("neo4j_uri")
    if store is None or not uri:
        return params
    ctx = click.get_current_context(silent=True)
    from_env = {name: ctx is not None and ctx.get_parameter_source(name) is ParameterSource.ENVIRONMENT
                for name in (store_option, "neo4j_uri")}
    if from_env[store_option] == from_env["neo4j_uri"]:
        both = "CTXGRAPH_STORE and NEO4J_URI" if from_env["neo4j_uri"] else "--store and --neo4j"
        raise CliError(f"{both} name two stores: give one of them", 2)
    if from_env["neo4j_uri"]:
        note(f"--store {store} given: NEO4J_URI from the environment is not used")
        return {**params, "neo4j_uri": None}
    note("--neo4j given: CTXGRAPH_STORE from the environment is not used")
    return {**params, "store_path": None}


__all__ = ["DEMO_STORE", "demo_hint", "embedded_path", "neo4j_database_option", "neo4j_options", "neo4j_password",
           "neo4j_user_option", "new_paths", "one_store",
           "open_service", "remove_if_empty", "service_opener", "store_location", "store_options", "store_params"]
