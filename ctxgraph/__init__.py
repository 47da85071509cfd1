"""ctxgraph: computed context for AI-agent tasks from a knowledge graph.

The public API::

    from ctxgraph import ContextService, Task
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from ctxgraph.compute.output import ComputedContext as ComputedContext
    from ctxgraph.core.models import Complexity as Complexity
    from ctxgraph.core.models import FileEntry as FileEntry
    from ctxgraph.core.models import HandoffDoc as HandoffDoc
    from ctxgraph.core.models import KnowledgeItem as KnowledgeItem
    from ctxgraph.core.models import Task as Task
    from ctxgraph.core.models import TaskDoc as TaskDoc
    from ctxgraph.core.models import TaskStatus as TaskStatus
    from ctxgraph.errors import ConfigurationError as ConfigurationError
    from ctxgraph.errors import CtxgraphError as CtxgraphError
    from ctxgraph.errors import DependencyCycleError as DependencyCycleError
    from ctxgraph.errors import InvalidArgumentError as InvalidArgumentError
    from ctxgraph.errors import InvalidDocumentError as InvalidDocumentError
    from ctxgraph.errors import StoreUnavailableError as StoreUnavailableError
    from ctxgraph.errors import UnknownTaskError as UnknownTaskError
    from ctxgraph.service import ContextService as ContextService
    from ctxgraph.service import IngestResult as IngestResult

_EXPORTS = {
    "Complexity": "ctxgraph.core.models",
    "ComputedContext": "ctxgraph.compute.output",
    "ConfigurationError": "ctxgraph.errors",
    "ContextService": "ctxgraph.service",
    "CtxgraphError": "ctxgraph.errors",
    "DependencyCycleError": "ctxgraph.errors",
    "FileEntry": "ctxgraph.core.models",
    "HandoffDoc": "ctxgraph.core.models",
    "IngestResult": "ctxgraph.service",
    "InvalidArgumentError": "ctxgraph.errors",
    "InvalidDocumentError": "ctxgraph.errors",
    "KnowledgeItem": "ctxgraph.core.models",
    "StoreUnavailableError": "ctxgraph.errors",
    "Task": "ctxgraph.core.models",
    "TaskDoc": "ctxgraph.core.models",
    "TaskStatus": "ctxgraph.core.models",
    "UnknownTaskError": "ctxgraph.errors",
}


def __getattr__(name: str) -> Any:
    # Lazy, so `import ctxgraph` stays cheap (spaCy and the driver load on use).
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'ctxgraph' has no attribute {name!r}")


__all__ = [*sorted(_EXPORTS), "__version__"]
