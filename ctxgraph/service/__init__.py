"""ContextService: the API. Wires a store, the signal extractor and compute.

    with ContextService.open() as svc:             # embedded store
        svc.add_task(Task(id="task-1", objective="Add JWT login"))
        ctx = svc.compute("task-1")
        print(ctx.markdown)

The service is one class joined from the modules of this package:
:mod:`.core` (open and close, tasks, compute), :mod:`.ingest` (handoffs,
documents; their files read by :mod:`.documents`), :mod:`.vectors` (task
vectors and each context's query vector), :mod:`.knowledge` (knowledge by hand
and by text), :mod:`.feedback` (context outcomes, tuning) and :mod:`.admin`
(the store as a whole: schema, counts, the code memory's index, export and
import). Stores are opened by :mod:`ctxgraph.graph.factory`, whose
locations the front ends name through this package. The names below
are what the CLI and the MCP server use besides the service itself.
"""

from ctxgraph.graph.factory import StoreLocation, chosen_location, parse_location
from ctxgraph.service.admin import IMPORT_BATCH, ExportReader, ExportSummary
from ctxgraph.service.core import ContextService
from ctxgraph.service.ingest import HANDOFF_BATCH, MAX_DOCUMENT_BYTES, TASK_WRITE_BATCH, IngestResult
from ctxgraph.service.knowledge import SEARCH_WINDOW, KnowledgeMatch

__all__ = [
    "HANDOFF_BATCH",
    "IMPORT_BATCH",
    "MAX_DOCUMENT_BYTES",
    "SEARCH_WINDOW",
    "TASK_WRITE_BATCH",
    "ContextService",
    "ExportReader",
    "ExportSummary",
    "IngestResult",
    "KnowledgeMatch",
    "StoreLocation",
    "chosen_location",
    "parse_location",
]
