"""Tool arguments checked before a call does any work: strict types (no
``"100"`` for 100, no ``"yes"`` for true, no JSON text for a list), no
unknown argument, and the length limits of :mod:`ctxgraph.mcp.limits` on
every string and list. A refusal is one line naming the argument, quoting
at most :data:`~ctxgraph.mcp.responses.QUOTE_CHARS` characters of what was
sent.

The argument model of each tool is the SDK's own (built from the tool
function's signature, as the input schema it publishes), made strict with
``extra="forbid"``; the published input schema is this strict model's, so
it says ``additionalProperties: false`` and what the limits are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from ctxgraph.errors import CtxgraphError
from ctxgraph.mcp.responses import clip

#: Exit code of a refused argument (the CLI's for a usage error).
USAGE = 2


class ArgumentError(CtxgraphError):
    exit_code = USAGE


class StrictTool:
    """A tool function with its strict argument model and the SDK's metadata
    (whose ``convert_result`` checks a result against the output schema)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.name: str = fn.__name__
        self.metadata: FuncMetadata = func_metadata(fn)
        base = self.metadata.arg_model
        config = ConfigDict(strict=True, extra="forbid", arbitrary_types_allowed=True)
        self.model: type[BaseModel] = type(base.__name__, (base,), {"model_config": config,
                                                                      "__module__": base.__module__})
        self.schema: dict[str, Any] = self.model.model_json_schema(by_alias=True)
        self.names: list[str] = [f.alias or n for n, f in self.model.model_fields.items()]

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments of the tool function; an :class:`ArgumentError` when refused."""
        try:
            parsed = self.model.model_validate(dict(arguments))
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
            more = len(errors) - 1
            tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
            raise ArgumentError(f"{self.name}: {self._describe(errors[0])}{tail}") from None
        return {name: getattr(parsed, name) for name in type(parsed).model_fields}

    def _describe(self, err: ErrorDetails) -> str:
        where = ".".join(str(part) for part in err["loc"])
        kind, got, ctx = err["type"], err.get("input"), err.get("ctx") or {}
        if kind == "extra_forbidden":
            if len(err["loc"]) == 1:
                return f"unknown argument {clip(where)!r} (it takes: {', '.join(self.names)})"
            return f"argument {clip(where)!r}: unknown field"
        if kind == "missing":
            return f"argument {where!r} is required"
        if kind == "string_too_long" and isinstance(got, str):
            return f"argument {where!r} is {len(got):,} characters long; the limit is {ctx['max_length']:,}"
        if kind in ("model_type", "dict_type"):
            return f"argument {where!r} should be an object, got {_shown(got)}"
        if kind == "too_long" and isinstance(got, list | tuple | dict):
            return f"argument {where!r} has {len(got):,} items; the limit is {ctx['max_length']:,}"
        return f"argument {where!r}: {err['msg'][0].lower()}{err['msg'][1:]}, got {_shown(got)}"


def _shown(value: Any) -> str:
    """What was sent, briefly: its JSON type and, for a scalar, its value (clipped)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {clip(value)!r}"
    if isinstance(value, int | float):
        return f"the number {clip(str(value))}"
    if isinstance(value, list | tuple):
        return f"a list of {len(value):,} items"
    if isinstance(value, dict):
        return f"an object of {len(value):,} fields"
    return f"a {type(value).__name__}"
