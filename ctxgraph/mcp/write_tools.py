"""The MCP tools that write (``limits.WRITE_TOOLS``): add, block and unblock
a task, ingest a handoff, sync the code anchors. :class:`~ctxgraph.mcp.tools.CtxgraphTools`
registers them unless the server is read-only; each call runs inside its
guard (the size cap, ctxgraph's errors as tool errors)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from ctxgraph import Task
from ctxgraph.mcp.limits import MAX_CRITERIA, MAX_ID_CHARS, MAX_ITEMS, MAX_TEXT_CHARS
from ctxgraph.mcp.models import (
    ComplexityArg,
    Criterion,
    Id,
    IngestOutcome,
    Name,
    ProjectArg,
    RequiredTaskId,
    SyncResult,
    TaskResult,
    Text,
)
from ctxgraph.mcp.projects import Projects
from ctxgraph.mcp.responses import Measured, ok
from ctxgraph.service import ContextService

#: A tool call's guard: ``work()`` within the size cap, errors as tool errors.
Guard = Callable[[Callable[[], CallToolResult | Measured]], CallToolResult]


class WriteTools:
    """The tools that write, bound to a server's projects and its guard."""

    def __init__(self, projects: Projects, guard: Guard) -> None:
        self.projects = projects
        self.guard = guard

    def add_task(
        self,
        task_id: RequiredTaskId,
        name: Annotated[Name, Field(description="Short title.")] = "",
        objective: Annotated[Text, Field(description="What the task must achieve.")] = "",
        acceptance_criteria: Annotated[list[Criterion] | None, Field(max_length=MAX_CRITERIA,
                                                                     description="Acceptance criteria.")] = None,
        type: Annotated[Name, Field(description="Task type (feature, bugfix, ...) [default: the first its "
                                                "text names (fix/bug/leak: bugfix; add: feature), else "
                                                "feature].")] = "",
        complexity: Annotated[ComplexityArg, Field(description="Complexity tier [default: normal].")] = None,
        depends_on: Annotated[list[Id] | None, Field(max_length=MAX_ITEMS,
                                                     description="Ids of stored tasks it depends on.")] = None,
        requires_context: Annotated[bool, Field(description="False: no working memory in its context.")] = True,
        project: ProjectArg = None,
    ) -> Annotated[CallToolResult, TaskResult]:
        """Add a task (or update its text; a finished task keeps its outcome) with its dependencies; its
        signals are computed and stored. Unknown dependencies and cycles are refused, nothing written."""
        def work() -> CallToolResult:
            proj = self.projects.get(project)
            doc = {"id": task_id, "name": name, "objective": objective,
                   "acceptance_criteria": list(acceptance_criteria or []), "type": type,
                   "complexity": complexity or "normal", "depends_on": list(depends_on or []),
                   "requires_context": requires_context}
            saved = proj.call(lambda svc: svc.add_task(doc))
            return ok({"project": proj.name, "task": saved.model_dump(mode="json")})
        return self.guard(work)

    def ingest_handoff(
        self,
        handoff: Annotated[str, Field(description=(
            "The structured handoff document, YAML or JSON text (task_id, summary, success, files_created, "
            "files_modified, dependencies_for_next, patterns_discovered, gotchas, decisions, open_questions); "
            "at most 5 MB (5,242,880 bytes of UTF-8), as a handoff file."))],
        source: Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS,
                                     description="A name for the document in messages.")] = "<handoff>",
        embed: Annotated[bool, Field(description=(
            "Then embed the finished tasks' texts that have no vector yet (as `ctxgraph embed-tasks`)."))] = True,
        project: ProjectArg = None,
    ) -> Annotated[CallToolResult, IngestOutcome]:
        """Ingest the structured handoff an agent wrote when it finished its task. It is validated whole
        first (the CLI's validation and one-line refusal); a bad document writes nothing. The same
        handoff twice changes nothing; a changed one for the same task replaces the earlier one."""
        def work() -> CallToolResult:
            proj = self.projects.get(project)
            data = handoff.encode("utf-8", "surrogatepass")  # a lone surrogate is refused as not UTF-8

            def run(svc: ContextService) -> tuple[Any, int | None, str | None]:
                result = svc.ingest_handoffs([(source, data)])[0]
                if not embed:
                    return result, None, None
                from ctxgraph.memory.embed import EmbeddingUnavailableError

                try:
                    return result, svc.embed_tasks(tasks=[result.task_id]), None
                except EmbeddingUnavailableError as exc:
                    return result, None, f"tasks not embedded: {exc} (or pass embed=false to skip this step)"
            result, embedded, warning = proj.call(run)
            structured = {"project": proj.name, "result": result.model_dump(mode="json"), "embedded": embedded,
                          "warning": warning}
            return ok(structured, extra_text=[f"ctxgraph: warning: {warning}"] if warning else [])
        return self.guard(work)

    def block_task(
        self,
        task_id: RequiredTaskId,
        reason: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS,
                                     description="Why the task cannot go on.")],
        project: ProjectArg = None,
    ) -> Annotated[CallToolResult, TaskResult]:
        """Mark a task blocked (it shows under Active Blockers in every context)."""
        def work() -> CallToolResult:
            proj = self.projects.get(project)

            def run(svc: ContextService) -> Task:
                svc.block(task_id, reason)
                return svc.get_task(task_id)
            return ok({"project": proj.name, "task": proj.call(run).model_dump(mode="json")})
        return self.guard(work)

    def unblock_task(self, task_id: RequiredTaskId,
                     project: ProjectArg = None) -> Annotated[CallToolResult, TaskResult]:
        """Set a blocked task back to pending."""
        def work() -> CallToolResult:
            proj = self.projects.get(project)

            def run(svc: ContextService) -> Task:
                svc.unblock(task_id)
                return svc.get_task(task_id)
            return ok({"project": proj.name, "task": proj.call(run).model_dump(mode="json")})
        return self.guard(work)

    def sync(self, project: ProjectArg = None) -> Annotated[CallToolResult, SyncResult]:
        """Check the project's code anchors (the files its handoffs and patterns named) against its work tree,
        as `ctxgraph sync`: each is unchanged, changed, renamed (followed) or deleted (its item retired). A
        context checks its own anchors anyway; this stores what is found for all of them."""
        def work() -> CallToolResult:
            proj = self.projects.get(project)
            report = proj.call(lambda svc: svc.sync())
            return ok({"project": proj.name, "report": report.model_dump(mode="json")})
        return self.guard(work)
