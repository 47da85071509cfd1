"""How each kind of candidate becomes a budget :class:`Block`: the item at each
compression level (built on first use) and the Markdown fragment its tokens are
estimated from. Pure."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from ctxgraph.compute.budget import Block
from ctxgraph.compute.code_memory import Snippet, excerpt
from ctxgraph.compute.compress import Level, Policy, first_sentence
from ctxgraph.compute.freshness import Freshness
from ctxgraph.compute.output import (
    BlockingQuestion,
    CodeRef,
    DecisionRef,
    FileRef,
    PatternRef,
    PriorWork,
    RelatedTask,
    WarningRef,
)
from ctxgraph.compute.relevance import DEPENDENCY_BONUS
from ctxgraph.compute.render import code, code_cell, escape_cell, escape_start
from ctxgraph.core.models import DependencyHandoff, KnowledgeItem, Severity, TaskHit

# --------------------------------------------------------------- level renders

M = TypeVar("M", bound=BaseModel)


def _once(model: type[M], **fields: Any) -> Callable[[], M]:
    """A factory that builds ``model(**fields)`` on first call and then reuses it."""
    built: list[M] = []

    def make() -> M:
        if not built:
            built.append(model(**fields))
        return built[0]
    return make


def _short(text: str, level: Level) -> str:
    if level is Level.SUMMARY:
        return first_sentence(text, 160)
    if level is Level.REFERENCE:
        return first_sentence(text, 60)
    return text


def _pattern(make: Callable[[], PatternRef]) -> Callable[[Level], PatternRef]:
    """The item at each level; built on first use (most candidates are never shown)."""
    def at(level: Level) -> PatternRef:
        ref = make()
        if level is Level.FULL:
            return ref
        keep_loc = level is Level.SUMMARY
        return ref.model_copy(update={"pattern": _short(ref.pattern, level), "level": level.value,
                                      "location": ref.location if keep_loc else None})
    return at


def _warning(make: Callable[[], WarningRef]) -> Callable[[Level], WarningRef]:
    """The item at each level; built on first use (most candidates are never shown)."""
    def at(level: Level) -> WarningRef:
        ref = make()
        if level is Level.FULL:
            return ref
        return ref.model_copy(update={"issue": _short(ref.issue, level), "level": level.value})
    return at


def _decision(make: Callable[[], DecisionRef]) -> Callable[[Level], DecisionRef]:
    """The item at each level; built on first use (most candidates are never shown)."""
    def at(level: Level) -> DecisionRef:
        ref = make()
        if level is Level.FULL:
            return ref
        rationale = first_sentence(ref.rationale, 100) if ref.rationale and level is Level.SUMMARY else None
        replaces = tuple(first_sentence(r, 60) for r in ref.replaces)
        return ref.model_copy(update={"decision": _short(ref.decision, level), "rationale": rationale,
                                      "replaces": replaces, "level": level.value})
    return at


def _prior(work: PriorWork) -> Callable[[Level], PriorWork]:
    def at(level: Level) -> PriorWork:
        if level is Level.FULL:
            return work
        if level is Level.SUMMARY:
            files = tuple(FileRef(file=f.file, stale=f.stale) for f in work.files_created)
            return work.model_copy(update={"summary": first_sentence(work.summary, 160),
                                           "files_created": files, "level": level.value})
        return work.model_copy(update={"summary": "", "files_created": (), "level": level.value})
    return at


def _code(ref: CodeRef) -> Callable[[Level], CodeRef]:
    def at(level: Level) -> CodeRef:
        if level is Level.FULL:
            return ref
        notes = first_sentence(ref.notes, 80) if level is Level.SUMMARY else ""
        return ref.model_copy(update={"notes": notes, "level": level.value})
    return at


def _snippet(snip: Snippet) -> Callable[[Level], Snippet]:
    def at(level: Level) -> Snippet:
        if level is Level.FULL:
            return snip
        text = excerpt(snip.text, 80).split("\n", 1)[0] if level is Level.SUMMARY else ""
        return snip.model_copy(update={"text": text, "level": level.value})
    return at


def _related(ref: RelatedTask) -> Callable[[Level], RelatedTask]:
    def at(level: Level) -> RelatedTask:
        if level is Level.FULL:
            return ref
        return ref.model_copy(update={"intent": _short(ref.intent, level), "level": level.value})
    return at


def _same(item: BlockingQuestion) -> Callable[[Level], BlockingQuestion]:
    return lambda level: item


# Markdown fragments for token estimates (the rendered template is measured at the end).
# A fragment escapes what the template escapes, with the same functions
# (compute.render): escape_start where the template's ``inline`` filter begins
# a line or a list item, code spans for file names and snippet lines, escaped
# ``|`` in table cells. It keeps the text's white space (the template folds
# it), so an ordinary text's estimate is the length it always was; an absent
# value counts as the "None" it always did.


def frag_pattern(p: PatternRef) -> str:
    return f"- **{p.pattern}** (see: {code(str(p.location))}) — from {p.from_task} {p.stale or ''}\n"


def frag_warning(w: WarningRef) -> str:
    return f"- ⚠️ **{w.severity.value}**: {w.issue} — from {w.from_task}\n"


def frag_decision(d: DecisionRef) -> str:
    replaces = f" (replaces: {'; '.join(d.replaces)})" if d.replaces else ""
    return f"- {escape_start(d.decision)} — {d.rationale} (from {d.from_task}){replaces}\n"


def frag_prior(w: PriorWork) -> str:
    files = "".join(f"- {code(f.file)}: {f.reason} {f.stale or ''}\n" for f in w.files_created)
    head = "\n**Files Created:**\n" if files else ""
    return f"\n#### {w.task} ({w.task_id})\n{escape_start(w.summary)}\n{head}{files}"


def frag_code(r: CodeRef) -> str:
    return f"| {code_cell(r.file)} | {escape_cell(r.component)} | {escape_cell(r.notes)} |\n"


def frag_snippet(s: Snippet) -> str:
    body = "".join(f"   {code(line)}\n" for line in s.text.splitlines())
    return f"1. {code(s.path)} lines {s.start_line}-{s.end_line} (similarity 0.00) {s.stale or ''}\n{body}"


def frag_related(r: RelatedTask) -> str:
    return f"- {escape_start(r.id)}: {r.intent}\n"


def frag_question(q: BlockingQuestion) -> str:
    return f"- **{q.question}** ({q.from_task})\n  - Context: {q.context}\n  - Recommendation: {q.recommendation}\n"


# ----------------------------------------------------------------- block makers
# ``common`` holds the Block fields the pipeline sets for a knowledge item (id,
# kind, scope, source, policy, relevance, tag matches, importance, updated_at);
# ``origin`` is ``from_task=<dependency id>`` for knowledge a dependency brought.


def pattern_block(k: KnowledgeItem, rel: float, common: Mapping[str, Any], **origin: Any) -> Block:
    """A pattern (or a kind added by hand: adr, plan, module_memory, changelog)."""
    make = _once(PatternRef, id=k.id, pattern=k.summary, location=k.location, relevance=rel, **origin)
    return Block(section="patterns", render=_pattern(make), fragment=frag_pattern, **common)


def warning_block(k: KnowledgeItem, rel: float, common: Mapping[str, Any], **origin: Any) -> Block:
    """A gotcha; one without a severity counts as medium."""
    make = _once(WarningRef, id=k.id, issue=k.summary, severity=k.severity or Severity.MEDIUM, relevance=rel,
                 **origin)
    return Block(section="warnings", render=_warning(make), fragment=frag_warning, **common)


def decision_block(k: KnowledgeItem, rel: float, common: Mapping[str, Any], **origin: Any) -> Block:
    make = _once(DecisionRef, id=k.id, decision=k.summary, rationale=k.rationale, relevance=rel,
                 replaces=k.replaces, **origin)
    return Block(section="decisions", render=_decision(make), fragment=frag_decision, **common)


def question_block(k: KnowledgeItem, common: Mapping[str, Any], from_task: str) -> Block:
    """An open question from a dependency: exact, never compressed."""
    q = BlockingQuestion(id=k.id, question=k.summary, context=k.context,
                         recommendation=k.recommendation, from_task=from_task)
    return Block(section="blocking_questions", render=_same(q), fragment=frag_question,
                 **{**common, "policy": Policy.EXACT, "source": "task"})


def prior_block(dep: DependencyHandoff, fresh: Freshness | None = None) -> Block:
    """A completed dependency's handoff: its summary and the files to read next
    (else the files it created); with ``fresh``, as the files' code anchors
    have them now (deleted ones left out, renamed ones at their new path,
    changed ones marked)."""
    files = dep.files_to_read or dep.files_created
    refs: list[FileRef] = []
    for f in files:
        gone, path, stale = fresh.task_file(dep.task.id, f.file) if fresh else (False, f.file, None)
        if not gone:
            refs.append(FileRef(file=path, reason=f.reason, stale=stale))
    work = PriorWork(task_id=dep.task.id, task=dep.task.intent,
                     summary=dep.summary or dep.task.outcome_summary or "",
                     files_created=tuple(refs))
    return Block(id=f"prior:{dep.task.id}", section="prior_work", kind="dependency", scope="task",
                 source="task", policy=Policy.SUMMARIZABLE, relevance=DEPENDENCY_BONUS,
                 tag_matches=(), importance=1.0, updated_at=dep.task.completed_at,
                 render=_prior(work), fragment=frag_prior)


def snippet_block(snip: Snippet, rel: float) -> Block:
    """A chunk the associative memory found."""
    return Block(id=f"chunk:{snip.path}:{snip.start_line}", section="codebase_context", kind="code_snippet",
                 scope="path", source="code", policy=Policy.SUMMARIZABLE, relevance=rel, tag_matches=(),
                 importance=0.5, updated_at=None, render=_snippet(snip), fragment=frag_snippet)


def code_block(ref: CodeRef, features: Mapping[str, float] | None = None) -> Block:
    """A code reference; ``features``: its ranking features (compute.features), when the history ranked it."""
    return Block(id=f"file:{ref.file}", section="code_references", kind="code_reference", scope="path",
                 source="code", policy=Policy.SUMMARIZABLE, relevance=float(ref.relevance), tag_matches=(),
                 importance=0.5, updated_at=None, render=_code(ref), fragment=frag_code,
                 features=dict(features or {}))


def related_block(h: TaskHit, rel: float) -> Block:
    """A completed task sharing tags with this one (not a dependency)."""
    rt = RelatedTask(id=h.task.id, intent=h.task.intent, summary=h.task.outcome_summary, relevance=rel)
    return Block(id=f"task:{h.task.id}", section="related_tasks", kind="related_task", scope="task",
                 source="docs", policy=Policy.SUMMARIZABLE, relevance=rel, tag_matches=h.matched_tags,
                 importance=0.5, updated_at=h.task.completed_at, render=_related(rt), fragment=frag_related)
