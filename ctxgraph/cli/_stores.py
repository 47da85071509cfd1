"""Which store a command opens, and what a failing command leaves: one store
per command (--store and --neo4j, or their variables, are not both taken),
no new file after a failure, and where the demo is when the project's store
is missing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from ctxgraph.cli import CliError, note


def embedded_path(params: dict[str, Any]) -> Path:
    from ctxgraph.service import ContextService

    return Path(params.get("store_path") or os.environ.get("CTXGRAPH_STORE") or ContextService.default_store_path())


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
        try:
            folder.rmdir()  # only when empty
        except OSError:
            return


def demo_hint(params: dict[str, Any]) -> str | None:
    """Where the demo is, when the default store does not exist but the demo's does."""
    if params.get("neo4j_uri") or params.get("store_path") or os.environ.get("CTXGRAPH_STORE"):
        return None
    from ctxgraph.cli._demo import DEMO_STORE

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


__all__ = ["demo_hint", "embedded_path", "new_paths", "one_store", "remove_if_empty"]
