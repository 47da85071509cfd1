"""Readers of what a project already holds, without an LLM: its git history
(:mod:`.git_log`, the commits as they are; :mod:`.history`, the commits as
finished tasks with their handoffs, after the noise rules of
:mod:`.history_rules`).

A reader yields documents — the tasks and handoffs a tasks file or an
agent's handoff would give — and writes nothing: the service writes them
through its bulk path (``ctxgraph.service.history``). This package sits
beside ``memory/`` (IO, no store writes of its own): it may import ``core``,
``files`` and ``errors``, never the service or the front ends.
"""
