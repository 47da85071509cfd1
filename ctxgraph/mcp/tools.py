"""The MCP server: tools and resources over ``ContextService``.

Every tool is a thin call into the service of the project it names (the
methods the CLI calls: ``compute``, ``add_task``, ``ingest_handoffs``,
``block``/``unblock``, ``get_task``, ``list_tasks``, ``stats``, ``conflicts``; plus
:mod:`ctxgraph.mcp.ops`), run under that project's lock on a worker thread.
Results and errors are built by :mod:`ctxgraph.mcp.responses`; no response
exceeds the size cap.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver.exceptions import ResourceError
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from ctxgraph import Task, TaskStatus
from ctxgraph.compute.output import ComputedContext, store_warning
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.errors import CtxgraphError
from ctxgraph.mcp import ops
from ctxgraph.mcp.limits import (
    MAX_ID_CHARS,
    MAX_ITEMS,
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
    READ_TOOLS,
    WRITE_TOOLS,
)
from ctxgraph.mcp.models import (
    BudgetArg,
    ComplexityArg,
    ConflictsResult,
    ContextResult,
    CursorArg,
    ExplainResult,
    FateArg,
    InlineTask,
    InlineTaskArg,
    KindArg,
    LimitArg,
    ListStatusArg,
    ProjectArg,
    ProjectInfo,
    ProjectsResult,
    RequiredTaskId,
    SearchResult,
    StatsResult,
    StrategyArg,
    TaskIdArg,
    TaskListResult,
    TaskResult,
)
from ctxgraph.mcp.projects import Projects
from ctxgraph.mcp.responses import (
    DEFAULT_PAGE,
    Level,
    Measured,
    capped,
    clipped_page,
    compact,
    decode_cursor,
    digest,
    error,
    error_line,
    ok,
    page,
    shorten,
    wire_tokens,
)
from ctxgraph.mcp.server import CtxgraphServer
from ctxgraph.mcp.write_tools import WriteTools
from ctxgraph.service import ContextService

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
ctxgraph computes, for a task an agent is about to start, the context that matters for it (patterns, \
gotchas, decisions, dependency handoffs, code references) within a token budget, from a knowledge graph \
of the project's history; after the agent finishes, its structured handoff is ingested. Call \
compute_context before a task (by task_id, or an unsaved `task`), ingest_handoff after it. Errors are \
the CLI's one-line messages (`ctxgraph: error: ...`)."""

#: Room kept for the note saying a context's budget was lowered.
LOWERED_NOTE_TOKENS = 64

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def _target(task_id: str | None, task: InlineTask | None) -> str | Task:
    if (task_id is None) == (task is None):
        raise CtxgraphError("give a task_id or a task (one of them)")
    return task_id if task_id is not None else task.to_task()  # type: ignore[union-attr]


#: The fields of a search hit, a conflict and a task a listing may shorten (:func:`responses.shorten`).
KNOWLEDGE_FIELDS = ("item.summary", "item.rationale", "item.context", "item.recommendation", "item.location",
                    "item.replaces", "item.tags", "matched_tags")
CONFLICT_FIELDS = ("first", "second", "shared_tags")
TASK_FIELDS = ("name", "objective", "acceptance_criteria", "blocked_reason", "outcome_summary", "depends_on",
               "signals.keywords", "signals.domains", "signals.files_mentioned")


def _listed(entry: dict[str, Any], fields: tuple[str, ...], level: Level) -> dict[str, Any]:
    """A dumped entry of a listing, shortened to ``level``, with the fields shortened named in ``clipped``
    (left out when none was: an entry is then the CLI's JSON)."""
    clipped = shorten(entry, fields, level)
    return {**entry, "clipped": clipped} if clipped else entry


def _context_options(budget: int | None, complexity: str | None, strategy: str | None) -> dict[str, Any]:
    return {"budget": budget, "complexity": complexity, "strategy": strategy}


class CtxgraphTools:
    """The tools and resources of one server, bound to its projects and size cap."""

    def __init__(self, projects: Projects, max_tokens: int, read_only: bool = False) -> None:
        self.projects = projects
        self.cap = max_tokens
        self.read_only = read_only
        #: the tools that write (registered unless ``read_only``)
        self.writes = WriteTools(projects, self.guard)

    # -- plumbing ------------------------------------------------------------

    def guard(self, work: Callable[[], CallToolResult | Measured]) -> CallToolResult:
        """``work()`` within the cap; ctxgraph's errors as tool errors with the CLI's text."""
        try:
            return capped(work(), self.cap)
        except CtxgraphError as exc:
            return error(str(exc), exc.exit_code)
        except Exception as exc:  # a bug: the client gets one line, the log the traceback
            log.exception("tool call failed")
            return error(f"unexpected {type(exc).__name__}: {exc} (the server's log has the traceback)")

    def context_result(self, project: str, ctx: ComputedContext, lowered: int | None) -> CallToolResult:
        warning = store_warning(ctx)
        notes = [f"ctxgraph: warning: {warning}"] if warning else []
        if lowered is not None:
            notes.append(f"ctxgraph: warning: budget lowered from {lowered:,} to {ctx.budget:,} tokens to fit "
                         f"the response cap of {self.cap:,} tokens")
        structured = {"project": project, "context": ctx.model_dump(mode="json", by_alias=True),
                      "warning": warning, "budget_lowered_from": lowered}
        return ok(structured, ctx.markdown, extra_text=notes)

    def computed(self, project: str | None, target: str | Task, size: Callable[[ComputedContext], int],
                 **options: Any) -> tuple[str, ComputedContext, int | None]:
        """The context of ``target`` within the cap; an unsaved task degrades when the store is down."""
        proj = self.projects.get(project)
        run = proj.call_or_degrade if isinstance(target, Task) else proj.call
        ctx, lowered = run(lambda svc: ops.compute_within(svc, target, size, self.cap, **options))
        return proj.name, ctx, lowered

    # -- tools -----------------------------------------------------------------

    def compute_context(
        self,
        task_id: TaskIdArg = None,
        task: InlineTaskArg = None,
        budget: BudgetArg = None,
        complexity: ComplexityArg = None,
        strategy: StrategyArg = None,
        debug: Annotated[bool, Field(description="Append the Context Debug section.")] = False,
        project: ProjectArg = None,
    ) -> Annotated[CallToolResult, ContextResult]:
        """Compute the context of a task before an agent starts it: the Markdown to put in the agent's prompt
        (the text block) and its JSON (structured: `context` is what `ctxgraph context --format json` prints,
        with tokens, budget and counts under `_computed`)."""
        def work() -> CallToolResult | Measured:
            target = _target(task_id, task)
            name = self.projects.get(project).name
            options = {**_context_options(budget, complexity, strategy), "debug": debug}
            last: list[tuple[ComputedContext, Measured]] = []

            def size(c: ComputedContext) -> int:
                built = self.context_result(name, c, None)
                last[:] = [(c, Measured(built, wire_tokens(built)))]
                return last[0][1].tokens + LOWERED_NOTE_TOKENS
            ctx_, lowered = self.computed(project, target, size, **options)[1:]
            if lowered is None and last and last[0][0] is ctx_:
                return last[0][1]
            return self.context_result(name, ctx_, lowered)
        return self.guard(work)

    def explain_context(
        self,
        task_id: TaskIdArg = None,
        task: InlineTaskArg = None,
        item_id: Annotated[str | None, Field(max_length=MAX_ID_CHARS, description=(
            "Only this candidate: a knowledge id (pattern:..., gotcha:...), file:PATH, prior:TASK or task:TASK, "
            "as the entries name them."))] = None,
        fate: Annotated[FateArg | None, Field(description="Only candidates with this fate.")] = None,
        section: Annotated[str | None, Field(max_length=MAX_NAME_CHARS,
                                             description="Only this section (patterns, warnings, ...).")] = None,
        budget: BudgetArg = None,
        complexity: ComplexityArg = None,
        strategy: StrategyArg = None,
        cursor: CursorArg = None,
        limit: LimitArg = DEFAULT_PAGE,
        project: ProjectArg = None,
    ) -> Annotated[CallToolResult, ExplainResult]:
        """Explain why items were kept or dropped in a task's context: every candidate (or the one named by
        item_id) with its tag matches, relevance, type priority, strategy term, scope, level, tokens and fate
        (kept, compressed, or dropped by cap, budget, chain, superseded or filtered). Paginated."""
        def work() -> CallToolResult | Measured:
            target = _target(task_id, task)
            options = _context_options(budget, complexity, strategy)
            key = digest({"task_id": task_id, "task": task.model_dump(mode="json") if task else None,
                          "item_id": item_id, "fate": fate, "section": section, **options,
                          "project": self.projects.get(project).name})
            offset = decode_cursor(cursor, key)
            name, ctx, _ = self.computed(project, target, lambda c: 0, explain=True, **options)
            entries = [e for e in ctx.explain or ()
                       if (item_id is None or e.id == item_id) and (fate is None or e.fate == fate)
                       and (section is None or e.section == section)]
            head = {"project": name, "task_id": ctx.task_id, "tokens": ctx.tokens, "budget": ctx.budget,
                    "strategy": ctx.computed.strategy, "total": len(entries), "warning": store_warning(ctx)}

            def build(items: list[Any], more: str | None) -> CallToolResult:
                return ok({**head, "entries": [e.model_dump(mode="json") for e in items], "next_cursor": more})
            return page(entries, offset, limit, key, build, self.cap)
        return self.guard(work)

    def search_knowledge(
        self,
        text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS, description="What to look for.")],
        kinds: Annotated[list[KindArg] | None, Field(max_length=MAX_ITEMS, description="Only these kinds.")] = None,
        cursor: CursorArg = None,
        limit: LimitArg = DEFAULT_PAGE,
        project: ProjectArg = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search the knowledge (patterns, gotchas, decisions, open questions, ADRs...) by text, with the tag
        matching a context uses: the text's keywords and domains; best first. Paginated."""
        def work() -> CallToolResult | Measured:
            proj = self.projects.get(project)
            key = digest({"text": text, "kinds": sorted(kinds or []), "project": proj.name})
            offset = decode_cursor(cursor, key)
            signals, found = proj.call(lambda svc: svc.search_knowledge(text, kinds=kinds))
            head = {"project": proj.name, "keywords": list(signals.keywords), "domains": list(signals.domains),
                    "total": len(found)}

            def build(items: list[Any], more: str | None, level: Level) -> CallToolResult:
                top = dict(head)
                clipped = shorten(top, ("keywords", "domains"), level)
                listed = [_listed(m.model_dump(mode="json"), KNOWLEDGE_FIELDS, level) for m in items]
                return ok({**top, "items": listed, "next_cursor": more, **({"clipped": clipped} if clipped else {})})
            return clipped_page(found, offset, limit, key, build, self.cap)
        return self.guard(work)

    def get_task(self, task_id: RequiredTaskId, project: ProjectArg = None) -> Annotated[CallToolResult, TaskResult]:
        """One stored task with its signals, status and outcome."""
        def work() -> CallToolResult:
            proj = self.projects.get(project)
            task = proj.call(lambda svc: svc.get_task(task_id))
            return ok({"project": proj.name, "task": task.model_dump(mode="json")})
        return self.guard(work)

    def list_tasks(
        self,
        status: Annotated[ListStatusArg | None, Field(
            description="Only tasks with this status (retired: imported commits no longer on the branch).")] = None,
        cursor: CursorArg = None,
        limit: LimitArg = DEFAULT_PAGE,
        project: ProjectArg = None,
    ) -> Annotated[CallToolResult, TaskListResult]:
        """Stored tasks in id order. Paginated."""
        def work() -> CallToolResult | Measured:
            proj = self.projects.get(project)
            key = digest({"status": status, "project": proj.name})
            offset = decode_cursor(cursor, key)
            tasks = proj.call(lambda svc: svc.list_tasks(TaskStatus(status) if status else None))

            def build(items: list[Any], more: str | None, level: Level) -> CallToolResult:
                listed = [_listed(t.model_dump(mode="json"), TASK_FIELDS, level) for t in items]
                return ok({"project": proj.name, "total": len(tasks), "tasks": listed, "next_cursor": more})
            return clipped_page(tasks, offset, limit, key, build, self.cap)
        return self.guard(work)

    def list_conflicts(
        self, cursor: CursorArg = None, limit: LimitArg = DEFAULT_PAGE, project: ProjectArg = None,
    ) -> Annotated[CallToolResult, ConflictsResult]:
        """Likely conflicts among the decisions in force (``ctxgraph conflicts``): pairs sharing at
        least 3 tags (tag Jaccard >= 0.4) whose texts differ (word Jaccard < 0.8), most similar tags
        first. Resolve one by ingesting a handoff whose decision `supersedes` the other. Paginated."""
        def work() -> CallToolResult | Measured:
            proj = self.projects.get(project)
            key = digest({"conflicts": True, "project": proj.name})
            offset = decode_cursor(cursor, key)
            found = proj.call(ContextService.conflicts)

            def build(items: list[Any], more: str | None, level: Level) -> CallToolResult:
                listed = [_listed(c.model_dump(mode="json"), CONFLICT_FIELDS, level) for c in items]
                return ok({"project": proj.name, "total": len(found), "conflicts": listed, "next_cursor": more})
            return clipped_page(found, offset, limit, key, build, self.cap)
        return self.guard(work)

    def graph_stats(self, project: ProjectArg = None) -> Annotated[CallToolResult, StatsResult]:
        """Nodes per label and relationships per type in the project's graph."""
        def work() -> CallToolResult:
            proj = self.projects.get(project)
            return ok({"project": proj.name, **proj.call(ContextService.stats), "memory": proj.memory_status()})
        return self.guard(work)

    def list_projects(self) -> Annotated[CallToolResult, ProjectsResult]:
        """The projects (stores) this server serves, which one is the default, and the response size cap."""
        def work() -> CallToolResult:
            try:
                default: str | None = self.projects.get(None).name
            except CtxgraphError:
                default = None
            infos = [ProjectInfo(name=p.name, store=p.spec.kind, default=p.name == default)
                     for p in self.projects.visible()]
            return ok({"projects": [i.model_dump(mode="json") for i in infos], "read_only": self.read_only,
                       "max_response_tokens": self.cap})
        return self.guard(work)

    # -- resources ---------------------------------------------------------------

    def context_markdown(self, project: str | None, task_id: str) -> str:
        """A stored task's context as Markdown (a warning line first when the store did not fully answer)."""
        try:
            _, ctx, _ = self.computed(project, task_id, lambda c: estimate_tokens(c.markdown) + 200)
        except CtxgraphError as exc:
            raise ResourceError(error_line(str(exc))) from None
        warning = store_warning(ctx)
        return f"ctxgraph: warning: {warning}\n\n{ctx.markdown}" if warning else ctx.markdown

    def stats_json(self, project: str | None) -> str:
        try:
            proj = self.projects.get(project)
            return compact({"project": proj.name, **proj.call(ContextService.stats), "memory": proj.memory_status()})
        except CtxgraphError as exc:
            raise ResourceError(error_line(str(exc))) from None

    def register(self, server: CtxgraphServer) -> None:
        # The names are limits.READ_TOOLS / WRITE_TOOLS: `ctxgraph mcp --help` lists them from there.
        reads: list[Callable[..., CallToolResult]] = [getattr(self, name) for name in READ_TOOLS]
        writes: list[Callable[..., CallToolResult]] = [getattr(self.writes, name) for name in WRITE_TOOLS]
        for fn in reads:
            server.add_strict_tool(fn, annotations=READ)
        for fn in [] if self.read_only else writes:
            server.add_strict_tool(fn, annotations=WRITE)

        @server.resource("ctxgraph://context/{task_id}", name="context", mime_type="text/markdown",
                         description="The computed context of a stored task of the default project (Markdown).")
        def context_resource(task_id: str) -> str:
            return self.context_markdown(None, task_id)

        @server.resource("ctxgraph://projects/{project}/context/{task_id}", name="project_context",
                         mime_type="text/markdown", description="The computed context of a project's stored task.")
        def project_context_resource(project: str, task_id: str) -> str:
            return self.context_markdown(project, task_id)

        @server.resource("ctxgraph://stats", name="stats", mime_type="application/json",
                         description="Nodes per label and relationships per type of the default project.")
        def stats_resource() -> str:
            return self.stats_json(None)

        @server.resource("ctxgraph://projects/{project}/stats", name="project_stats", mime_type="application/json",
                         description="Nodes per label and relationships per type of a project.")
        def project_stats_resource(project: str) -> str:
            return self.stats_json(project)


def build_server(
    projects: Projects,
    *,
    max_tokens: int,
    read_only: bool = False,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> CtxgraphServer:
    """The MCP server of ``projects`` (tools, resources); ``token_verifier`` and
    ``auth`` protect its HTTP transport (see :mod:`ctxgraph.mcp.transport`)."""
    from importlib.metadata import version

    server = CtxgraphServer(
        "ctxgraph", version=version("ctxgraph"), instructions=INSTRUCTIONS,
        token_verifier=token_verifier, auth=auth, log_level="WARNING",
    )
    CtxgraphTools(projects, max_tokens, read_only).register(server)
    return server
