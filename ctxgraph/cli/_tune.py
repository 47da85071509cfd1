"""``ctxgraph tune``: learn the file ranking's weights from the project's own history."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ctxgraph.cli._common import CliError, echo_json, format_option
from ctxgraph.cli._stores import open_service, store_options, store_params
from ctxgraph.errors import CtxgraphError


@click.command("tune")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the search's order: the same history and seed give the same weights.")
@click.option("--settings", "settings_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file to write [default: the nearest ctxgraph.toml, or pyproject.toml with "
                   "[tool.ctxgraph], from here upwards; else ./ctxgraph.toml].")
@click.option("--dry-run", is_flag=True, help="Report what tuning finds; write nothing.")
@store_options
@format_option
def tune_command(seed: int, settings_path: Path | None, dry_run: bool, fmt: str, **kwargs: Any) -> None:
    """Fit the weights that rank a context's code references on this graph's
    finished tasks, and write them to the settings file.

    The history is replayed in completion order: its older half is the first
    graph, the rest comes in five blocks of tasks, each asked as new queries
    against the graph as it stood before the block; a query scores the share
    of the files its handoff really touched among the first five files
    ranked. The weights are fitted on the first four blocks and kept only if
    they beat the current ones on the newest block by at least 0.01 recall@5
    (else the current weights stay: nothing is written). One set is fitted
    for a history ranked by full text, one for neighbours by embedding when
    tasks have vectors (ctxgraph embed-tasks). Contexts use the written
    weights ([ranking.full_text] and [ranking.dense]) from then on.
    """
    from ctxgraph.settings import load_settings, settings_target, write_ranking

    try:
        target, _ = (settings_path, True) if settings_path else settings_target()
        # read once: a broken settings file is refused before the work
        settings = load_settings(target) if target.exists() else None
        with open_service(store_params(kwargs), read_only=True) as svc:
            # --settings FILE: its weights are where the search starts
            config = settings.context if settings_path is not None and settings is not None else None
            with click.progressbar(length=1, label="Replaying the history", file=sys.stderr,
                                   hidden=not sys.stderr.isatty()) as bar:
                def progress(done: int, total: int) -> None:
                    bar.length = total
                    bar.update(done - bar.pos)

                result = svc.tune(seed=seed, progress=progress, config=config)
        written = bool(result.changed and not dry_run)
        if written:
            write_ranking(target, result.weights)
    except CtxgraphError as exc:
        raise CliError(str(exc), exc.exit_code) from None
    if fmt == "json":
        echo_json({"tasks": result.tasks, "seed": seed, "settings": str(target), "written": written,
                    "weights": result.weights.model_dump(), "fits": [f.as_dict() for f in result.fits]})
        return
    click.echo(f"finished tasks replayed: {result.tasks}")
    for f in result.fits:
        click.echo(f"{f.kind}: {f.queries} queries ({f.fit_queries} fitted, {f.validation_queries} newest "
                   f"validated)")
        click.echo(f"  recall@5 fitted blocks  {f.fit_recall_before:.3f} -> {f.fit_recall_after:.3f}")
        click.echo(f"  recall@5 newest block   {f.validation_recall_before:.3f} -> "
                   f"{f.validation_recall_after:.3f}")
        shown = ", ".join(f"{k} {v:g}" for k, v in f.fitted.model_dump().items())
        click.echo(f"  fitted: {shown}")
        click.echo(f"  {'adopted' if f.adopted else 'kept the current weights'}: {f.reason}")
    if written:
        click.echo(f"wrote [ranking] to {target}")
    elif dry_run and result.changed:
        click.echo(f"dry run: {target} not written")
    else:
        click.echo("nothing written: the current weights stay")


__all__ = ["tune_command"]
