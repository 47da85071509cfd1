"""``ctxgraph search`` and ``ctxgraph knowledge list``: finding knowledge,
tasks and code without an id (the work is :mod:`ctxgraph.service.find`)."""

from __future__ import annotations

from typing import Any

import click

from ctxgraph.cli._common import echo_json, format_option, memory_project_option
from ctxgraph.cli._knowledge import knowledge
from ctxgraph.cli._stores import open_service, store_options, store_params

#: Every knowledge kind (``--kind``), as the MCP tool's ``kinds`` takes them.
ALL_KINDS = ["pattern", "gotcha", "decision", "open_question", "adr", "plan", "module_memory", "changelog"]
#: Items per part unless --limit says otherwise: the MCP tool's page.
DEFAULT_LIMIT = 50


def _one_line(text: str | None, limit: int = 160) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


@click.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--in", "sections", multiple=True, type=click.Choice(["knowledge", "tasks", "code"]),
              help="Search only these parts (repeatable) [default: all three].")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(ALL_KINDS),
              help="Only knowledge of this kind (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), default=DEFAULT_LIMIT, show_default=True,
              help="Items per part at most.")
@click.option("--memory/--no-memory", default=None,
              help="Search the associative memory (the indexed code) for code snippets when one is usable "
                   "[default: on, unless the settings say memory = false].")
@memory_project_option
@store_options
@format_option
def search_command(query: tuple[str, ...], sections: tuple[str, ...], kinds: tuple[str, ...], limit: int,
                   memory: bool | None, memory_project: str | None, fmt: str, **kwargs: Any) -> None:
    """Search the knowledge, the tasks and the code for QUERY, best first.

    The knowledge is ranked as the MCP tool search_knowledge ranks it: by the
    tags a context would match (QUERY's keywords count 1, its domains 0.5),
    then the most recently updated; the tasks, of any status, are found and
    ranked the same way by their own tags. The code is what a context of
    QUERY, as an unsaved task, shows: its code references and, with an index,
    its codebase snippets.
    """
    from ctxgraph.service.find import SECTIONS, search

    text = " ".join(query)
    with open_service(store_params(kwargs), read_only=True) as svc:
        found = search(svc, text, kinds=list(kinds) or None, sections=list(sections) or list(SECTIONS),  # type: ignore[arg-type]
                       memory=memory, memory_project=memory_project)
    found = found.model_copy(update={"knowledge": found.knowledge[:limit], "tasks": found.tasks[:limit],
                                     "code": found.code[:limit], "snippets": found.snippets[:limit]})
    if fmt == "json":
        echo_json(found.model_dump(mode="json"))
        return
    asked = set(sections or SECTIONS)
    click.echo(f"query: {_one_line(text)} (keywords: {', '.join(found.keywords) or '-'}; "
               f"domains: {', '.join(found.domains) or '-'})")
    if "knowledge" in asked:
        click.echo(f"knowledge ({len(found.knowledge)}):")
        for m in found.knowledge:
            click.echo(f"  {m.item.id}  {m.relevance:g}  {_one_line(m.item.summary)}  [{', '.join(m.matched_tags)}]")
    if "tasks" in asked:
        click.echo(f"tasks ({len(found.tasks)}):")
        for t in found.tasks:
            title = t.task.name or t.task.objective
            click.echo(f"  {t.task.id}  {t.relevance:g}  [{t.task.status.value}]  {_one_line(title, 100)}  "
                       f"[{', '.join(t.matched_tags)}]")
    if "code" in asked:
        click.echo(f"code ({len(found.code) + len(found.snippets)}):")
        for c in found.code:
            click.echo(f"  {c.file}  {c.relevance:g}  {c.component}: {_one_line(c.notes, 100)}")
        for s in found.snippets:
            click.echo(f"  {s.path}:{s.start_line}-{s.end_line}  {s.score:.4g}  (indexed code)")


@knowledge.command("list")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(ALL_KINDS),
              help="Only knowledge of this kind (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only knowledge carrying this tag (repeatable: every one).")
@click.option("--task", "task_id", metavar="TASK_ID", help="Only the knowledge TASK_ID's handoff discovered.")
@click.option("--stale", is_flag=True, help="Only knowledge whose code changed or is gone since it was anchored.")
@click.option("--superseded", is_flag=True, help="Only knowledge a later item superseded.")
@store_options
@format_option
def knowledge_list(kinds: tuple[str, ...], tags: tuple[str, ...], task_id: str | None, stale: bool,
                   superseded: bool, fmt: str, **kwargs: Any) -> None:
    """List the knowledge nodes, in id order, with their ids (for `knowledge show`).

    Each line: the id, the kind, the tasks whose handoffs discovered it, and
    marks: superseded (a later item replaced it), stale (the code its anchor
    vouches for changed or is gone; `ctxgraph sync` checks every anchor).
    """
    from ctxgraph.service.find import list_knowledge

    with open_service(store_params(kwargs), read_only=True) as svc:
        listed = list_knowledge(svc, kinds=list(kinds) or None, tags=tags, task_id=task_id, stale=stale,
                                only_superseded=superseded)
    if fmt == "json":
        echo_json([x.model_dump(mode="json") for x in listed])
        return
    for x in listed:
        marks = ([f"superseded {x.item.valid_until}" if x.item.valid_until else "superseded"] if x.superseded
                 else []) + ([f"stale ({x.stale})"] if x.stale else [])
        where = f" from {', '.join(x.tasks)}" if x.tasks else ""
        shown = f" [{'; '.join(marks)}]" if marks else ""
        click.echo(f"{x.item.id} ({x.item.kind}{where}){shown}: {_one_line(x.item.summary)}")
    click.echo(f"{len(listed)} knowledge items", err=True)


__all__ = ["knowledge_list", "search_command"]
