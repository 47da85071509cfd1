"""Context outcomes: a delivered context as a record, scored by its task's handoff. Pure.

:func:`delivery` turns a computed context into what is recorded of it (see
:mod:`ctxgraph.outcomes.records`):

* **items** per section, ranked from 1 in the order the context shows them:
  knowledge ids (patterns, warnings, decisions, blocking questions), task ids
  (prior work, related tasks), file paths (snippets, code references); each
  with its tokens as the limiter measures an item (its Markdown fragment);
* **files**: every file the context names, each once, in order of first
  appearance in the default template — pattern locations, the prior work's
  files, the snippets' files, the code references (the files ``ctxgraph eval``
  reads from the rendered text, in the same order);
* **sections**: the tokens of each part of the rendered Markdown, split at its
  ``##``/``###`` headings (text before the first heading, and headings of a
  custom template this module does not know, count as ``other``).

:func:`score_delivery` measures a delivery against the handoff of its task:

* ``changed``: the distinct files the handoff created or modified;
* ``hit5`` / ``hit10``: how many of them are among the first 5 / 10 delivered files;
* an item is **used** when the handoff touched its files or its tags: a file
  item when the file is among the changed files; a knowledge item when its
  ``location`` is, or when it shares a tag with the knowledge the handoff
  discovered (its patterns', gotchas', decisions' and questions' tags); a task
  (prior work, related task) when a file its own handoff created or modified
  is among the changed files, or when it shares a tag with that knowledge.
  The task's own tags are not used: they are what the context was retrieved
  by, so nearly every item would match them;
* ``wasted``: per section, the tokens of the items not used.

:func:`summarize` adds up the scored deliveries of a window for ``ctxgraph outcomes``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from ctxgraph.compute.blocks import (
    frag_code,
    frag_decision,
    frag_pattern,
    frag_prior,
    frag_question,
    frag_related,
    frag_snippet,
    frag_warning,
)
from ctxgraph.compute.output import ComputedContext
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.outcomes.records import (
    FILE_SECTIONS,
    ITEM_SECTIONS,
    KNOWLEDGE_SECTIONS,
    DeliveredItem,
    Delivery,
    DeliveryScore,
    SectionScore,
)

#: The default template's headings and the section each one opens.
HEADINGS: dict[str, str] = {
    "Context (Computed)": "other",
    "Patterns to Follow": "patterns",
    "Warnings": "warnings",
    "Relevant Decisions": "decisions",
    "Prior Work": "prior_work",
    "Relevant Codebase Context": "codebase_context",
    "Code References": "code_references",
    "Concurrent Work": "concurrent_work",
    "Open Questions (Blocking)": "blocking_questions",
    "Related Tasks": "related_tasks",
    "Recent Task History": "recent_tasks",
    "Active Blockers": "active_blockers",
    "Context Debug": "debug",
}

#: An item's sources of evidence for "used": (files, tags).
Evidence = tuple[Iterable[str], Iterable[str]]


def section_tokens(markdown: str) -> dict[str, int]:
    """Tokens of each section of rendered Markdown (split at ``##``/``###`` headings)."""
    parts: dict[str, list[str]] = {}
    current = "other"
    for line in markdown.splitlines(keepends=True):
        if line.startswith(("## ", "### ")):
            current = HEADINGS.get(line.lstrip("#").strip(), "other")
        parts.setdefault(current, []).append(line)
    return {name: estimate_tokens("".join(lines)) for name, lines in sorted(parts.items())}


def delivery(ctx: ComputedContext, *, delivery_id: str, at: str) -> Delivery:
    """What is recorded of ``ctx``, delivered at ``at`` (see the module's docstring)."""
    items: list[DeliveredItem] = []

    def add(section: str, entries: Iterable[tuple[str, str]]) -> None:
        for rank, (item_id, text) in enumerate(entries, start=1):
            items.append(DeliveredItem(section=section, id=item_id, rank=rank, tokens=estimate_tokens(text)))

    # Each item's tokens as the limiter measured its block (its Markdown fragment).
    add("patterns", ((p.id, frag_pattern(p)) for p in ctx.patterns_to_follow))
    add("warnings", ((w.id, frag_warning(w)) for w in ctx.warnings))
    add("decisions", ((d.id, frag_decision(d)) for d in ctx.relevant_decisions))
    add("prior_work", ((w.task_id, frag_prior(w)) for w in ctx.prior_work))
    add("codebase_context", ((s.path, frag_snippet(s)) for s in ctx.codebase_context))
    add("code_references", ((r.file, frag_code(r)) for r in ctx.code_references))
    add("blocking_questions", ((q.id, frag_question(q)) for q in ctx.blocking_questions))
    add("related_tasks", ((r.id, frag_related(r)) for r in ctx.related_tasks))
    files = dict.fromkeys([
        *(p.location for p in ctx.patterns_to_follow if p.location),
        *(f.file for w in ctx.prior_work for f in w.files_created),
        *(s.path for s in ctx.codebase_context),
        *(r.file for r in ctx.code_references),
    ])
    return Delivery(id=delivery_id, task_id=ctx.task_id, at=at, tokens=ctx.tokens,
                    sections=section_tokens(ctx.markdown), items=tuple(items), files=tuple(files))


def score_delivery(
    record: Delivery,
    *,
    handoff: str,
    changed: Iterable[str],
    handoff_tags: Iterable[str],
    knowledge: Mapping[str, Evidence],
    tasks: Mapping[str, Evidence],
) -> DeliveryScore:
    """``record`` scored against a handoff (content hash ``handoff``) that created or
    modified ``changed`` and discovered knowledge tagged ``handoff_tags``;
    ``knowledge`` and ``tasks`` give each delivered knowledge item and task its
    files and tags (an item missing from them — deleted since — counts by its id alone)."""
    changed_set = set(changed)
    tags = set(handoff_tags)
    sections: dict[str, SectionScore] = {}
    used_items: list[str] = []
    for item in record.items:
        if item.section in FILE_SECTIONS:
            used = item.id in changed_set
        else:
            files, item_tags = (knowledge if item.section in KNOWLEDGE_SECTIONS else tasks).get(item.id, ((), ()))
            used = not changed_set.isdisjoint(files) or not tags.isdisjoint(item_tags)
        if used:
            used_items.append(f"{item.section}:{item.id}")
        was = sections.get(item.section, SectionScore())
        sections[item.section] = SectionScore(
            delivered=was.delivered + 1, used=was.used + used, tokens=was.tokens + item.tokens,
            wasted=was.wasted + (0 if used else item.tokens))
    return DeliveryScore(
        handoff=handoff, changed=len(changed_set), files=len(record.files),
        hit5=sum(1 for f in record.files[:5] if f in changed_set),
        hit10=sum(1 for f in record.files[:10] if f in changed_set),
        items=len(record.items), used=len(used_items), wasted=sum(s.wasted for s in sections.values()),
        sections={name: sections[name] for name in ITEM_SECTIONS if name in sections},
        used_items=tuple(used_items),
    )


# ----------------------------------------------------------------- the report


class SectionOutcome(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")
    section: str
    delivered: int
    used: int
    used_share: float
    tokens: int
    wasted: int
    wasted_per_delivery: float


class OutcomeReport(BaseModel):
    """The outcomes of the deliveries of a window (``ctxgraph outcomes``)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")
    since: str | None = None
    last: int | None = None
    #: deliveries in the window: all, scored by a handoff, waiting for one, unreadable (skipped)
    deliveries: int = 0
    scored: int = 0
    unscored: int = 0
    unreadable: int = 0
    tasks: int = 0
    first_at: str | None = None
    last_at: str | None = None
    #: scored deliveries whose handoff changed at least one file (the files' figures are over these)
    with_changes: int = 0
    #: mean share of the changed files among the first 5 / 10 delivered files (recall@k)
    recall5: float = 0.0
    recall10: float = 0.0
    #: share of those deliveries with at least one changed file among the first 5 / 10
    hit_rate5: float = 0.0
    hit_rate10: float = 0.0
    #: over every scored delivery: items delivered and used, tokens of items and wasted
    items: int = 0
    items_used: int = 0
    used_share: float = 0.0
    item_tokens: int = 0
    wasted_tokens: int = 0
    sections: tuple[SectionOutcome, ...] = ()


def _share(part: float, whole: float) -> float:
    return round(part / whole, 4) if whole else 0.0


def summarize(
    deliveries: Sequence[tuple[Delivery, DeliveryScore | None]], *, unreadable: int = 0,
    since: str | None = None, last: int | None = None,
) -> OutcomeReport:
    """The figures of ``deliveries`` (oldest first; unreadable ones counted only)."""
    scored = [(d, s) for d, s in deliveries if s is not None]
    changing = [s for _, s in scored if s.changed]
    totals: dict[str, list[int]] = {}
    for _, s in scored:
        for name, part in s.sections.items():
            row = totals.setdefault(name, [0, 0, 0, 0])
            row[0] += part.delivered
            row[1] += part.used
            row[2] += part.tokens
            row[3] += part.wasted
    n = len(scored)
    sections = tuple(
        SectionOutcome(section=name, delivered=d, used=u, used_share=_share(u, d), tokens=t, wasted=w,
                       wasted_per_delivery=round(w / n, 1) if n else 0.0)
        for name in ITEM_SECTIONS if name in totals for d, u, t, w in [totals[name]]
    )
    items = sum(s.items for _, s in scored)
    used = sum(s.used for _, s in scored)
    return OutcomeReport(
        since=since, last=last, deliveries=len(deliveries) + unreadable, scored=n,
        unscored=len(deliveries) - n, unreadable=unreadable, tasks=len({d.task_id for d, _ in deliveries}),
        first_at=deliveries[0][0].at if deliveries else None, last_at=deliveries[-1][0].at if deliveries else None,
        with_changes=len(changing),
        recall5=_share(sum(s.hit5 / s.changed for s in changing), len(changing)),
        recall10=_share(sum(s.hit10 / s.changed for s in changing), len(changing)),
        hit_rate5=_share(sum(1 for s in changing if s.hit5), len(changing)),
        hit_rate10=_share(sum(1 for s in changing if s.hit10), len(changing)),
        items=items, items_used=used, used_share=_share(used, items),
        item_tokens=sum(s.tokens for s in sections), wasted_tokens=sum(s.wasted for s in sections),
        sections=sections,
    )
