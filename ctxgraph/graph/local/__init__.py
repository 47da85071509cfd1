"""The embedded default store — one SQLite file, no server (see ``store``).

Modules by concern: ``connection`` (opening, locking and retries, read and
write transactions, the schema), ``sql`` (every SQL statement), ``nodes``
(nodes and edges on a cursor), ``writes``, ``reads`` (tasks, files, tags,
``gather``), ``history`` (the corpus cache, ``_history_evidence``, task
vectors), ``memory`` (the associative memory), ``outcomes`` (the deliveries
log), ``replay`` (the history for ``ctxgraph tune``) and ``backup`` (export
and import rows).
"""

from ctxgraph.graph.local.store import DEFAULT_PATH, LocalStore, default_path, discard_if_empty

__all__ = ["DEFAULT_PATH", "LocalStore", "default_path", "discard_if_empty"]
