"""One error base for the whole package; the CLI maps these to one-line messages."""

from __future__ import annotations


class CtxgraphError(Exception):
    """Base of every error ctxgraph raises on purpose."""

    exit_code = 1


class InvalidDocumentError(CtxgraphError):
    """A handoff, task file or context map failed validation.

    ``problems`` holds ``(field_path, reason)`` pairs; ``source`` names the file
    (or ``<stdin>``) the document came from.
    """

    exit_code = 2

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        parts = [f"{path}: {reason}" if path else reason for path, reason in problems]
        super().__init__(f"{source}: invalid document: " + "; ".join(parts))


class UnknownTaskError(CtxgraphError):
    exit_code = 3

    def __init__(self, task_id: str, *, source: str | None = None) -> None:
        self.task_id = task_id
        where = f"{source}: " if source else ""
        hint = " (add the task before its handoff)" if source else ""
        super().__init__(f"{where}unknown task: {task_id!r}{hint}")


class DependencyCycleError(CtxgraphError):
    exit_code = 4

    def __init__(self, cycle: list[str]) -> None:
        self.cycle = cycle
        super().__init__("dependency cycle refused: " + " -> ".join(cycle))


class StoreUnavailableError(CtxgraphError):
    """The store cannot be reached or opened (server down, bad path, locked)."""

    exit_code = 5


class AuthenticationError(StoreUnavailableError):
    """The server refused the credentials."""


class ConfigurationError(CtxgraphError):
    exit_code = 2


class InvalidArgumentError(CtxgraphError):
    """A caller passed a value an argument does not take (an unknown
    complexity or strategy, a budget under 1...): the message names the
    argument and what it takes."""

    exit_code = 2
