"""``ctxgraph index``: the associative memory's index of a project's files."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import click

from ctxgraph.cli._common import STARTED, CliError, echo_json, embed_finished, format_option
from ctxgraph.cli._stores import open_service, service_opener, store_options, store_params
from ctxgraph.errors import CtxgraphError

if TYPE_CHECKING:
    from ctxgraph.memory.index import IndexProgress
    from ctxgraph.service import ContextService

#: Seconds between two progress lines when stderr is not a terminal (on a
#: terminal the line is redrawn twice a second): under 2, so that a busy
#: machine's late wake-ups still give a line every 2 s at least.
PLAIN_SECONDS = 1.5
#: The first plain line comes no sooner than this after the run begins.
FIRST_SECONDS = 1.0


class ProgressLine:
    """The index run's progress on stderr: files, chunks and chunks/s.

    On a terminal, a live line (rich) redrawn twice a second; otherwise (a
    log, a pipe) a plain line when the files are being read (the model
    loaded), every :data:`PLAIN_SECONDS` seconds and at the end. A background
    thread draws it, so it moves on while the model loads or a call of the
    embedder runs."""

    def __init__(self, *, quiet: bool = False, terminal: bool | None = None) -> None:
        self.quiet = quiet
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self.latest: IndexProgress | None = None
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._drawing = threading.Lock()
        self._drawn = False
        self._thread: threading.Thread | None = None
        self._rich: Any = None
        self._task: Any = None

    def update(self, progress: IndexProgress) -> None:
        self.latest = progress
        if not self._drawn and progress.phase != "model" and not self.quiet and not self.terminal:
            self._draw()  # the first line once the model is loaded (a missing one is an error alone)

    def text(self) -> str:
        p = self.latest
        elapsed = time.monotonic() - self._started
        if p is None or p.phase == "model":
            return f"indexing: loading the embedding model ({elapsed:.0f}s)"
        if p.phase == "scanning":
            return f"indexing {p.project}: reading the files ({elapsed:.0f}s)"
        if p.phase == "full text":
            return (f"indexing {p.project}: {p.files_found} files, writing the new ones for full text first "
                    f"({elapsed:.0f}s)")
        return (f"indexing {p.project}: {p.files_done}/{p.files_total} files, {p.chunks} chunks, "
                f"{p.chunks_per_s:.1f} chunks/s, {p.files_written} files written ({elapsed:.0f}s)")

    def __enter__(self) -> ProgressLine:
        if self.quiet:
            return self
        if self.terminal:
            from rich.console import Console
            from rich.progress import Progress, TextColumn

            self._rich = Progress(TextColumn("{task.description}"), console=Console(stderr=True),
                                  refresh_per_second=2, transient=False)
            self._task = self._rich.add_task(self.text())
            self._rich.start()
        self._thread = threading.Thread(target=self._tick, name="ctxgraph-index-progress", daemon=True)
        self._thread.start()
        return self

    def _tick(self) -> None:
        interval = 0.5 if self.terminal else PLAIN_SECONDS
        # The first plain line PLAIN_SECONDS after the command started (its imports
        # and the store's opening count), though not within FIRST_SECONDS of here:
        # a model that is missing is reported in one line, without a progress line.
        first = interval if self.terminal else max(FIRST_SECONDS, STARTED + interval - time.monotonic())
        if self._stop.wait(first):
            return
        self._draw()
        while not self._stop.wait(interval):
            self._draw()

    def _draw(self) -> None:
        with self._drawing:  # the ticker and the run's first update
            self._drawn = True
            if self._rich is not None:
                self._rich.update(self._task, description=self.text())
            else:
                click.echo(self.text(), err=True)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.quiet:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if kind is None or self._rich is not None:
            self._draw()  # the last figures (a terminal's line stays)
        if self._rich is not None:
            self._rich.stop()


def _print_report(report: Any, fmt: str, tasks_embedded: int | None = None, *, lines: bool = False,
                  explain: bool = False) -> None:
    """One run's report; ``lines``: JSON on one line (--watch prints one a run: JSON Lines);
    ``explain``: every file left out and why, and the values redacted per file (never the values)."""
    if fmt == "json":
        found = report.as_dict() | ({} if tasks_embedded is None else {"tasks_embedded": tasks_embedded})
        if lines:
            click.echo(json.dumps(found, ensure_ascii=False))
        else:
            echo_json(found)
        return
    kind = "embeddings" if report.embeddings else "lightweight (no embeddings)"
    state = "complete" if report.complete else "stopped by the time limit (run again to go on)"
    click.echo(f"project {report.project} ({report.root}), {kind}: {report.files} files, {report.indexed} "
               f"(re)indexed, {report.unchanged} unchanged, {report.removed} removed, {report.chunks} chunks "
               f"written in {report.seconds:.1f}s ({report.chunks_per_s:.1f} chunks/s); {state}"
               + ("" if tasks_embedded is None else
                  f"; {tasks_embedded} finished task{'' if tasks_embedded == 1 else 's'} embedded"))
    if report.skipped:
        reasons: dict[str, int] = {}
        for s in report.skipped:
            why = s.reason.split(":")[0]
            reasons[why] = reasons.get(why, 0) + 1
        click.echo("skipped: " + ", ".join(f"{n} {why}" for why, n in sorted(reasons.items())))
    if report.redacted:
        values = sum(report.redacted.values())
        click.echo(f"redacted: {values} secret value{'' if values == 1 else 's'} in {len(report.redacted)} "
                   f"file{'' if len(report.redacted) == 1 else 's'} read"
                   + ("" if explain else " (ctxgraph index PATH --explain lists them)"))
    if explain:
        _explain(report)


def _explain(report: Any) -> None:
    """``index --explain``: what was left out and why, and the values redacted per file."""
    click.echo("left out (besides what git ignores, hidden folders and "
               "node_modules, build, dist, vendored and cache folders):")
    for s in report.skipped:
        click.echo(f"  {s.path}: {s.reason}")
    if not report.skipped:
        click.echo("  nothing")
    click.echo("values redacted (replaced by [redacted] in the stored text):")
    for path, n in sorted(report.redacted.items()):
        click.echo(f"  {path}: {n}")
    if not report.redacted:
        click.echo("  none")


@click.command("index")
@click.argument("path", metavar="PATH", required=False, type=click.Path(path_type=Path))
@click.option("--project", metavar="NAME",
              help="Project id [default: the folder's name]. Contexts search it when it is the only "
                   "project indexed, or when named by CTXGRAPH_PROJECT.")
@click.option("--embeddings/--no-embeddings", default=True, show_default=True,
              help="Embed every chunk with all-MiniLM-L6-v2 (local, offline), or keep the lightweight "
                   "index: file names and first lines, found by full text, no ML.")
@click.option("--time-limit", type=click.FloatRange(min=1), metavar="SECONDS",
              help="Stop a run after about this long; what was written stays and the next run goes on.")
@click.option("--watch", is_flag=True,
              help="Keep running: watch PATH and re-index the files saved, added or deleted (within about a "
                   "second), in a background worker (requests coalesced per project, backoff after a "
                   "failure); also a run every --interval seconds, after which the finished tasks that "
                   "have no vector yet are embedded (as embed-tasks; not with --no-embeddings or "
                   "CTXGRAPH_TASK_VECTORS=0). With --format json, one line a run. Ctrl-C stops.")
@click.option("--interval", type=click.FloatRange(min=0.1), default=60.0, show_default=True, metavar="SECONDS",
              help="With --watch: seconds between two runs when no file changes.")
@click.option("--poll", type=click.FloatRange(min=0.05), metavar="SECONDS",
              help="With --watch: notice changes by scanning the files' stats every SECONDS instead of the "
                   "system's file events (for file systems whose events do not arrive).")
@click.option("--max-runs", type=click.IntRange(min=1), metavar="N",
              help="With --watch: stop after N runs (for scripts and tests).")
@click.option("--explain", is_flag=True,
              help="Read every file (not only the changed ones) and list each file left out and why (a secret "
                   "by its name, binary, too large, ...) and how many secret values were redacted in each; "
                   "never the values. With --format json: the summary's skipped and redacted.")
@click.option("--list", "list_projects", is_flag=True, help="List the indexed projects and exit.")
@click.option("-q", "--quiet", is_flag=True, help="No progress line on stderr.")
@store_options
@format_option
def index_command(path: Path | None, project: str | None, embeddings: bool, time_limit: float | None,
                  watch: bool, interval: float, poll: float | None, max_runs: int | None, explain: bool,
                  list_projects: bool, quiet: bool, fmt: str, **kwargs: Any) -> None:
    """Index a project's files for the associative memory.

    Scans PATH (in a git work tree the files git lists, its ignore rules
    applied; skipping node_modules, dist, build, vendored and hidden folders,
    secret files by their name — .env, keys, credential stores, cloud
    configs, *secret* —, binary files, symlinks and files over 500 KB),
    redacts secret values in the text it keeps (detect-secrets' detectors:
    api_key: ..., password = ..., tokens, private keys), splits each file into
    chunks of about 500 tokens on functions, classes or headings, and stores
    them as Chunk nodes linked to their File, with an embedding (384 floats)
    unless --no-embeddings. Incremental: a file whose modification time
    and size are unchanged is not opened, a changed file's unchanged chunks
    keep their vectors, deleted files' chunks are removed. A context then adds
    the chunks nearest to the task (see "Relevant Codebase Context").

    A progress line on stderr (-q silences it) counts files, chunks and
    chunks/s. With --time-limit the run stops in time (counted from the
    command's start) and keeps the files it finished: run it again to go on.
    --format json prints the run's summary.
    """
    params = store_params(kwargs)
    if list_projects:
        with open_service(params, read_only=True) as svc:
            projects = svc.memory_projects()
        if fmt == "json":
            echo_json([p.model_dump(mode="json") for p in projects])
        else:
            for p in projects:
                kind = "embeddings" if p.embeddings else "lightweight"
                click.echo(f"{p.id}\t{p.root}\t{kind}\tindexed_at {p.indexed_at or 'never (incomplete)'}\t"
                           f"{p.files} files")
        return
    if path is None:
        raise CliError("PATH is required (or --list)", 2)
    if explain and watch:
        raise CliError("--explain lists one run: not with --watch", 2)
    if not path.is_dir():
        raise CliError(f"{path}: {'not a folder' if path.exists() else 'no such folder'}", 2)
    if watch:
        _watch(params, path, project, embeddings, time_limit or 300.0, interval, max_runs, fmt, poll=poll,
               quiet=quiet)
        return
    from ctxgraph.memory.embed import EmbeddingUnavailableError

    try:
        if embeddings:  # a missing model is said before any progress line (the run loads it only when needed)
            from ctxgraph.memory.model import model_dir

            model_dir()
        with open_service(params) as svc, ProgressLine(quiet=quiet) as line:
            # The limit counts from the command's start: its imports and the store's opening are in it.
            left = None if time_limit is None else max(0.0, time_limit - (time.monotonic() - STARTED))
            report = svc.index_project(path, project=project, embeddings=embeddings, progress=line.update,
                                       time_limit=left, explain=explain)
    except EmbeddingUnavailableError as exc:
        raise CliError(f"{exc} (or pass --no-embeddings for the lightweight index)", exc.exit_code) from None
    except CtxgraphError as exc:
        raise CliError(str(exc), exc.exit_code) from None
    _print_report(report, fmt, explain=explain)


def stop_on_term() -> None:
    """SIGTERM (a service manager, ``kill``) stops as Ctrl-C does: cleanly."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, interrupt)


def _watch(params: dict[str, Any], path: Path, project: str | None, embeddings: bool, time_limit: float,
           interval: float, max_runs: int | None, fmt: str, *, poll: float | None, quiet: bool) -> None:
    from ctxgraph.memory.watch import POLL_SECONDS, RootWatcher
    from ctxgraph.memory.worker import IndexQueue, IndexRequest, Tenths
    from ctxgraph.service import ContextService

    open_svc = service_opener(params)

    def on_error(req: IndexRequest, exc: BaseException, delay: float) -> None:
        click.echo(f"ctxgraph: warning: indexing {req.project} failed: {exc}; retrying in {delay:.0f}s", err=True)

    # Task vectors: the tasks finished since the last run (ingested by a library
    # caller, or with --no-embed) get theirs here, so their neighbours by
    # embedding are found without a separate embed-tasks.
    embedded: dict[str, int] = {}

    def follow_up(svc: ContextService, report: Any) -> None:
        if embeddings and svc.task_vectors:
            done = embed_finished(svc, "--no-embeddings")
            if done is not None:
                embedded[report.project] = done

    def on_report(report: Any) -> None:
        _print_report(report, fmt, embedded.pop(report.project, None), lines=True)
        if fmt != "json" and any(report.paths.values()):
            click.echo("  " + "; ".join(f"{kind}: {', '.join(paths)}" for kind, paths in report.paths.items()
                                        if paths))

    queue = IndexQueue()
    worker = ContextService.index_worker(open_svc, queue, time_limit=time_limit, on_report=on_report,
                                         on_error=on_error, max_runs=max_runs, follow_up=follow_up, keep_store=True,
                                         progress=None if quiet else Tenths(lambda line: click.echo(line, err=True)))
    try:
        queue.request(path, project=project, embeddings=embeddings)
    except CtxgraphError as exc:
        raise CliError(str(exc), exc.exit_code) from None
    last = time.monotonic()

    def changed() -> None:
        nonlocal last
        queue.request(path, project=project, embeddings=embeddings)
        last = time.monotonic()

    watcher = RootWatcher(path, changed, mode="poll" if poll is not None else "auto",
                          poll_seconds=POLL_SECONDS if poll is None else poll)
    how = "file events" if watcher.mode == "events" else f"polling every {watcher.poll_seconds:g}s"
    if not quiet:
        click.echo(f"watching {path.resolve()} ({how}; a run every {interval:g}s besides; Ctrl-C stops)", err=True)
    worker.start()
    watcher.start()
    stop_on_term()
    try:
        while (max_runs is None or worker.runs < max_runs) and worker.is_alive():
            time.sleep(0.1)
            if time.monotonic() - last >= interval:
                changed()
    except KeyboardInterrupt:
        if not quiet:
            click.echo("stopping", err=True)
    finally:
        watcher.stop()
        worker.stop()  # a run in progress stops at its next embedder call, keeping the files it finished
        worker.join(timeout=30)
        watcher.join(timeout=5)
