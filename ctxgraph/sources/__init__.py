"""Readers of what a project already holds — its ADRs, the notes in its code
(and, beside them, its git history) — each yielding the documents a handoff or
a tasks file yields, for the service to write through its bulk path. IO like
:mod:`ctxgraph.memory`'s scan: files are found with the memory's own selection
(:func:`ctxgraph.memory.scan.candidates`), so nothing ignored or secret is read."""
