"""ctxgraph: computed context for AI-agent tasks from a knowledge graph.

The public API::

    from ctxgraph import ContextService, Task
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from ctxgraph.compute.context import ComputedContext as ComputedContext
    from ctxgraph.errors import CtxgraphError as CtxgraphError
    from ctxgraph.graph.models import HandoffDoc as HandoffDoc
    from ctxgraph.graph.models import Task as Task
    from ctxgraph.service import ContextService as ContextService

_EXPORTS = {
    "ComputedContext": "ctxgraph.compute.context",
    "ContextService": "ctxgraph.service",
    "CtxgraphError": "ctxgraph.errors",
    "HandoffDoc": "ctxgraph.graph.models",
    "Task": "ctxgraph.graph.models",
}


def __getattr__(name: str) -> Any:
    # Lazy, so `import ctxgraph` stays cheap (spaCy and the driver load on use).
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'ctxgraph' has no attribute {name!r}")


__all__ = ["ComputedContext", "ContextService", "CtxgraphError", "HandoffDoc", "Task", "__version__"]
