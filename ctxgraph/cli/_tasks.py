"""``ctxgraph task ...`` and ``ctxgraph depend``: tasks, their dependencies and blockers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ctxgraph.cli._common import COMPLEXITIES, STATUSES, Group, echo_json, format_option
from ctxgraph.cli._stores import open_service, store_options, store_params

if TYPE_CHECKING:
    from ctxgraph.core.models import Task


@click.group(cls=Group)
def task() -> None:
    """Add, show, list and block tasks."""


@task.command("add")
@click.argument("task_id")
@click.option("--name", default="", help="Short title.")
@click.option("--objective", default="", help="What the task must achieve.")
@click.option("--criterion", "criteria", multiple=True, help="An acceptance criterion (repeatable).")
@click.option("--type", "task_type", default=None,
              help="Task type (feature, bugfix, refactor, test, docs, ...). Default: the first its text names "
                   "(fix/bug/leak: bugfix; add/implement: feature; ...), else feature.")
@click.option("--complexity", type=click.Choice(COMPLEXITIES), default="normal", show_default=True)
@click.option("--depends-on", multiple=True, metavar="TASK_ID", help="A dependency (repeatable).")
@click.option("--no-context", is_flag=True, help="Set requires_context off (no working memory).")
@store_options
@format_option
def task_add(task_id: str, name: str, objective: str, criteria: tuple[str, ...], task_type: str | None,
             complexity: str, depends_on: tuple[str, ...], no_context: bool, fmt: str,
             **kwargs: Any) -> None:
    """Add a task (or update its text); its signals are computed and stored."""
    doc = {"id": task_id, "name": name, "objective": objective, "acceptance_criteria": list(criteria),
           "complexity": complexity, "depends_on": list(depends_on), "requires_context": not no_context}
    if task_type:
        doc["type"] = task_type
    with open_service(store_params(kwargs)) as svc:
        saved = svc.add_task(doc)
    if fmt == "json":
        echo_json(saved.model_dump(mode="json"))
    else:
        click.echo(f"added {saved.id}")


def _task_lines(t: Task) -> list[str]:
    from ctxgraph.core.models import TaskStatus

    lines = [f"{t.id}  [{t.status.value}]  {t.intent}"]
    if t.objective and t.objective.strip() != t.intent:
        lines.append(f"  objective: {' '.join(t.objective.split())}")
    for c in t.acceptance_criteria:
        lines.append(f"  - {c}")
    lines.append(f"  type: {t.type}   complexity: {t.complexity.value}   "
                 f"requires_context: {'yes' if t.requires_context else 'no'}")
    if t.depends_on:
        lines.append(f"  depends on: {', '.join(t.depends_on)}")
    if t.status is TaskStatus.BLOCKED:
        lines.append(f"  blocked since {t.blocked_at}: {t.blocked_reason}")
    if t.outcome_summary:
        lines.append(f"  outcome ({'success' if t.success else 'failed'}, {t.completed_at}): "
                     f"{t.outcome_summary}")
    if t.signals:
        lines.append(f"  keywords: {', '.join(t.signals.keywords)}")
        lines.append(f"  domains: {', '.join(t.signals.domains) or '-'}")
    return lines


@task.command("show")
@click.argument("task_id")
@store_options
@format_option
def task_show(task_id: str, fmt: str, **kwargs: Any) -> None:
    """Show one task with its signals and outcome."""
    with open_service(store_params(kwargs), read_only=True) as svc:
        t = svc.get_task(task_id)
    if fmt == "json":
        echo_json(t.model_dump(mode="json"))
    else:
        click.echo("\n".join(_task_lines(t)))


@task.command("list")
@click.option("--status", type=click.Choice(STATUSES), help="Only tasks with this status.")
@store_options
@format_option
def task_list(status: str | None, fmt: str, **kwargs: Any) -> None:
    """List tasks, in id order."""
    from ctxgraph.core.models import TaskStatus

    with open_service(store_params(kwargs), read_only=True) as svc:
        tasks = svc.list_tasks(TaskStatus(status) if status else None)
    if fmt == "json":
        echo_json([t.model_dump(mode="json") for t in tasks])
        return
    for t in tasks:
        click.echo(f"{t.id}\t{t.status.value}\t{t.intent}")


@task.command("block")
@click.argument("task_id")
@click.option("--reason", required=True, help="Why the task cannot go on.")
@store_options
def task_block(task_id: str, reason: str, **kwargs: Any) -> None:
    """Mark a task blocked (it shows under Active Blockers)."""
    with open_service(store_params(kwargs)) as svc:
        svc.block(task_id, reason)
    click.echo(f"blocked {task_id}")


@task.command("unblock")
@click.argument("task_id")
@store_options
def task_unblock(task_id: str, **kwargs: Any) -> None:
    """Set a blocked task back to pending."""
    with open_service(store_params(kwargs)) as svc:
        svc.unblock(task_id)
    click.echo(f"unblocked {task_id}")


@click.command()
@click.argument("task_id")
@click.argument("dependency_id")
@store_options
def depend(task_id: str, dependency_id: str, **kwargs: Any) -> None:
    """Make TASK_ID depend on DEPENDENCY_ID (cycles are refused)."""
    with open_service(store_params(kwargs)) as svc:
        svc.add_dependency(task_id, dependency_id)
    click.echo(f"{task_id} depends on {dependency_id}")


__all__ = ["depend", "task"]
