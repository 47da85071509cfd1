"""Readers of what a project already holds, without an LLM: its git history
(:mod:`.git_log`, the commits as they are; :mod:`.history`, the commits as
finished tasks with their handoffs, after the noise rules of
:mod:`.history_rules`), its ADRs (:mod:`.adr`) and the notes in its code
(:mod:`.notes`).

A reader yields documents — the tasks, handoffs and knowledge a tasks file or
an agent's handoff would give — and writes nothing: the service writes them
through its bulk path (``ctxgraph.service.history``,
``ctxgraph.service.project_notes``). IO like :mod:`ctxgraph.memory`'s scan:
files are found with the memory's own selection
(:func:`ctxgraph.memory.scan.candidates`), so nothing ignored or secret is
read; never the service or the front ends.
"""
