"""Decisions over time (docs/decisions.md): what a handoff's ``supersedes``
names, resolved before anything is written, and the likely conflicts among
the decisions in force."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ctxgraph.compute.conflicts import Conflict, likely_conflicts
from ctxgraph.core.models import HandoffDoc
from ctxgraph.errors import InvalidDocumentError
from ctxgraph.graph.records import stable_id
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service.base import ServiceBase

#: How a ``supersedes`` entry names a decision by its id.
DECISION_ID_PREFIX = "decision:"


def decision_ref_id(ref: str) -> str:
    """The id a ``supersedes`` entry names: the entry itself when it is an id
    (``decision:`` and 16 hex digits), else the id of a decision saying that text
    (ids are content-addressed: ``stable_id``, case and spacing aside)."""
    ref = ref.strip()
    tail = ref[len(DECISION_ID_PREFIX):]
    if ref.startswith(DECISION_ID_PREFIX) and len(tail) == 16 and all(c in "0123456789abcdef" for c in tail):
        return ref
    return stable_id("decision", ref)


def resolve_supersedes(
    store: KnowledgeStore, docs: Sequence[tuple[str, HandoffDoc]]
) -> dict[str, tuple[str, str]]:
    """Every ``supersedes`` entry of ``docs`` ((source, handoff) pairs) as
    ``{entry: (decision id, its summary)}``: the decision stored, or stated by a
    handoff of the same batch. One read, before anything is written; an entry
    naming no known decision, or the decision itself, is an
    :class:`InvalidDocumentError` naming the source and the field."""
    refs = {ref: decision_ref_id(ref) for _, doc in docs for d in doc.decisions for ref in d.supersedes}
    if not refs:
        return {}
    in_batch = {stable_id("decision", d.decision): d.decision for _, doc in docs for d in doc.decisions}
    stored = {k.id: k.summary for k in store.get_knowledge(sorted(set(refs.values()))) if k.kind == "decision"}
    known = {**in_batch, **stored}
    for source, doc in docs:
        problems: list[tuple[str, str]] = []
        for i, d in enumerate(doc.decisions):
            own = stable_id("decision", d.decision)
            for j, ref in enumerate(d.supersedes):
                where = f"decisions[{i}].supersedes[{j}]"
                if refs[ref] == own:
                    problems.append((where, "a decision cannot supersede itself"))
                elif refs[ref] not in known:
                    problems.append((where, f"no decision {_shown(ref)} is stored or in this batch "
                                            "(name one by its id, decision:…, or by its exact text)"))
        if problems:
            raise InvalidDocumentError(source, problems[:20])
    return {ref: (rid, known[rid]) for ref, rid in refs.items()}


def _shown(ref: str) -> str:
    flat = " ".join(ref.split())
    return repr(flat if len(flat) <= 80 else flat[:77] + "...")


class DecisionsMixin(ServiceBase):
    """``ctxgraph conflicts``: the likely conflicts among the decisions in force."""

    def conflicts(self) -> list[Conflict]:
        """Pairs of decisions in force (not superseded) that share their subject
        tags but say different things (:func:`ctxgraph.compute.conflicts.likely_conflicts`),
        most tags shared first."""
        return likely_conflicts(self.store.decisions_in_force())


def replaced_summaries(refs: Sequence[str], resolved: Mapping[str, tuple[str, str]]) -> tuple[str, ...]:
    """The summaries of the decisions ``refs`` names, in their order, each once."""
    return tuple(dict.fromkeys(resolved[r][1] for r in refs if r in resolved))


__all__ = ["DECISION_ID_PREFIX", "DecisionsMixin", "decision_ref_id", "replaced_summaries", "resolve_supersedes"]
