"""Graph-aware ranking of code references. Pure.

The context map scores a file by the words of its path, component and notes
(:mod:`ctxgraph.compute.map_score`). The history knows more: which finished tasks resemble this one and
which files they changed. Five pieces of evidence, fused per file:

- **votes** — BM25 of the query's full-text terms against every finished
  task's terms (the store's full-text index scores it: Lucene on Neo4j,
  :mod:`ctxgraph.core.bm25` on the embedded store, the same numbers); the
  :data:`NEIGHBOURS` most similar tasks
  vote for the files their handoffs touched, each vote its similarity
  relative to the best one, divided by the square root of how many files the
  task touched (a commit touching 30 files says little about each);
- **text** — BM25 of the query against one document per file: its own terms
  plus the terms of every finished task that touched it (what a file "is
  about", as its history describes it), scored by the store's full-text index
  for the files it ranks best (``core.evidence.FILE_TOP``), scaled to the best
  vote;
- **prior** — how often the file changes: log(1 + touches) / log(1 + tasks);
- **seed** (the settings' name for it) — the context map's own score
  (:func:`~ctxgraph.compute.map_score.map_score`: component +2, location +1,
  domain in notes +1, mentioned file +3);
- **dense** — when finished tasks have vectors of their texts
  (``ctxgraph embed-tasks``; all-MiniLM-L6-v2) and the query was embedded,
  the :data:`~ctxgraph.core.evidence.DENSE_VOTERS` tasks nearest to it by
  cosine vote as the neighbours by full text do (relative to the nearest,
  divided by the square root of the files touched). They find the tasks that
  say the same thing in other words.

Only files of the context map are ranked when one was loaded; files known
only from handoffs count when there is none. A file gone from the map whose
path without its extension is now a folder of mapped files — a module turned
into a package, ``pkg/data.py`` into ``pkg/data/*.py`` — passes each vote on
(:func:`route`): to the package files whose names the voting task and the
query both mention (``headers`` -> ``pkg/data/headers.py``), else to the file
that kept the module's name (``datastructures.py`` ->
``datastructures/structures.py``), else to every file of the package, divided
by the square root of how many it reaches. Its text is not passed on: it
would make every file of the package look alike.

Each piece is a ranking feature, one module of :mod:`ctxgraph.compute.features`
with its formula and default weights; this module gathers the evidence they
read once per query (:func:`evidence_of`) and adds them up, weighed, in the
features' order: by default
``score = votes + 2 x text + 0.2 x prior + 0.3 x seed``; with neighbours by
embedding ``votes + 3 x text + 0.2 x prior + 0.3 x seed + 3 x dense``
(:data:`DEFAULT_WEIGHTS`, chosen on the click and werkzeug evaluation sets;
``[ranking.full_text]`` and ``[ranking.dense]`` in the settings override them,
one weight per feature, and ``ctxgraph tune`` fits them on a project's own
history: :mod:`ctxgraph.compute.tune`). The store returns the text scores and
the bounded evidence (``ctxgraph.core.evidence``); every other number is
computed here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from ctxgraph.compute.features import Feature, QueryEvidence, features
from ctxgraph.core.evidence import DENSE_VOTERS, VOTERS, best_first
from ctxgraph.core.models import FileEntry, HistoryEvidence
from ctxgraph.core.paths import successors
from ctxgraph.signals import TaskSignals, path_terms

NEIGHBOURS = VOTERS


def heirs(path: str, successors_: Sequence[str]) -> tuple[str, ...]:
    """The files of a module's package that kept its name: those whose name
    (without extension, three characters at least) is part of the module's
    (``pkg/datastructures.py`` -> ``pkg/datastructures/structures.py``);
    ``__init__`` never counts."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    found = []
    for succ in successors_:
        name = succ.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if name != "__init__" and len(name) >= 3 and name in stem:
            found.append(succ)
    return tuple(found)


def route(path: str, successors_: Sequence[str], matched: Iterable[str]) -> tuple[str, ...]:
    """Where a vote for a module gone from the map goes among the files of the
    package it became: the files whose names the voting task and the query
    share a term with (``headers`` -> ``pkg/data/headers.py``), else the heirs
    (:func:`heirs`), else every file of the package."""
    said = set(matched)
    named = tuple(s for s in successors_ if said.intersection(_name_terms(s)))
    return named or heirs(path, successors_) or tuple(successors_)


def _name_terms(path: str) -> list[str]:
    return [t for t in path_terms(path.rsplit("/", 1)[-1]) if t != "init"]


def _vote(votes: dict[str, float], voters: Sequence[tuple[float, tuple[str, ...], Iterable[str]]],
          files: Mapping[str, object], moved: Mapping[str, tuple[str, ...]]) -> None:
    """Add each voter's vote (its score relative to the best one's) to the files
    it touched, divided by the square root of how many; a moved module's vote
    goes to its package's files (:func:`route`), divided again by the square
    root of how many it reaches."""
    if not voters or voters[0][0] <= 0:
        return
    top = voters[0][0]
    for score, touched_all, matched in voters:
        touched = [p for p in touched_all if p in files or p in moved]
        for path in touched:
            vote = (score / top) / math.sqrt(len(touched))
            if path in files:
                votes[path] += vote
            else:
                reached = route(path, moved[path], matched)
                for successor in reached:
                    votes[successor] += vote / math.sqrt(len(reached))


class _Weights(BaseModel):
    """The base of :class:`PartWeights`: a weight per ranking feature."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> float: ...


def _part_weights() -> type[_Weights]:
    fields: dict[str, Any] = {f.name: (float, Field(default=f.weight, ge=0)) for f in features()}
    model: type[_Weights] = create_model("PartWeights", __base__=_Weights, __module__=__name__, **fields)
    model.__doc__ = ("How the score parts of a file add up: one weight per ranking feature "
                     "(ctxgraph.compute.features; see the module's docstring).")
    return model


if TYPE_CHECKING:
    PartWeights = _Weights
else:
    PartWeights = _part_weights()


def weight_of(weights: _Weights, one: Feature, *, embedded: bool = False) -> float:
    """A feature's weight in ``weights``; its default for a feature registered
    after the weights' model was made (a test's)."""
    found = weights.__dict__.get(one.name)
    if found is None:
        return one.dense_weight if embedded else one.weight
    return float(found)


def _dense_defaults() -> _Weights:
    """The weights of a history with neighbours by embedding, by default."""
    return PartWeights(**{f.name: f.dense_weight for f in features() if f.name in PartWeights.model_fields})


class RankingWeights(BaseModel):
    """One set of weights for a history ranked by full text alone, one for a
    history with neighbours by embedding."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    full_text: PartWeights = PartWeights()
    dense: PartWeights = _dense_defaults()

    @model_validator(mode="before")
    @classmethod
    def _merge_defaults(cls, value: object) -> object:
        # a settings file may name only some weights of a set; the rest keep that set's defaults
        if isinstance(value, dict):
            out = dict(value)
            for name, default in (("full_text", PartWeights()), ("dense", _dense_defaults())):
                if isinstance(out.get(name), dict):
                    out[name] = {**default.model_dump(), **out[name]}
            return out
        return value

    def for_history(self, embedded: bool) -> _Weights:
        """The set that ranks a history with (or without) neighbours by embedding."""
        return self.dense if embedded else self.full_text


#: The weights when the settings hold none (``ctxgraph tune`` writes them).
DEFAULT_WEIGHTS = RankingWeights()


def evidence_of(history: HistoryEvidence, signals: TaskSignals) -> QueryEvidence:
    """What the history says of the query's rankable files, once for every feature."""
    # A loaded context map is the authority on which files exist: files known only
    # from handoffs (perhaps deleted since) are ranked only when there is no map.
    mapped = [f for f in history.files if f.in_map]
    has_map = bool(mapped) if history.mapped is None else history.mapped
    files = {f.entry.path: f for f in (mapped if has_map else history.files)}
    similar = best_first(history.tasks)[:NEIGHBOURS]
    near = history.neighbours[:DENSE_VOTERS]
    gone = {p for t in similar for p in t.files if p not in files}
    gone.update(p for n in near for p in n.files if p not in files)
    moved = successors(gone, sorted(files)) if has_map else {}
    votes: dict[str, float] = defaultdict(float)
    _vote(votes, [(t.score, t.files, t.matched) for t in similar], files, moved)
    dense: dict[str, float] = defaultdict(float)
    _vote(dense, [(n.score, n.files, n.matched) for n in near], files, moved)
    # BM25 of the query against each file's document (own terms + the terms of
    # the tasks that touched it), as the store's full-text index scored it.
    text = {p: f.text for p, f in files.items() if f.text > 0}
    return QueryEvidence(
        signals=signals, files=files, paths=tuple(sorted(files)), votes=votes, dense=dense, embedded=bool(near),
        text=text,
        best_vote=max(votes.values(), default=0.0) or 1.0, best_text=max(text.values(), default=0.0) or 1.0,
        log_n=QueryEvidence.log_tasks(history.n_tasks), n_tasks=history.n_tasks)


def file_parts(history: HistoryEvidence, signals: TaskSignals) -> list[tuple[FileEntry, dict[str, float]]]:
    """Every rankable file with its score parts, one per ranking feature
    (path order); a feature absent for the query (``dense`` without neighbours
    by embedding) is not there."""
    ev = evidence_of(history, signals)
    columns = [(one.name, values) for one in features() if (values := one.compute(ev)) is not None]
    return [(ev.files[path].entry, {name: values[path] for name, values in columns}) for path in ev.paths]


def _weighed(weights: RankingWeights, embedded: bool) -> tuple[tuple[str, float], ...]:
    """(feature, weight) in the features' order, from the set for the kind of history."""
    w = weights.for_history(embedded)
    return tuple((one.name, weight_of(w, one, embedded=embedded)) for one in features())


def _sum(parts: Mapping[str, float], weighed: Sequence[tuple[str, float]]) -> float:
    total = 0.0
    for name, weight in weighed:
        total += weight * parts.get(name, 0.0)
    return round(total, 6)


def combine(parts: Mapping[str, float], weights: RankingWeights = DEFAULT_WEIGHTS, *, embedded: bool) -> float:
    """A file's score: its parts weighed by the set for its kind of history
    (``embedded``: with neighbours by embedding), added in the features' order."""
    return _sum(parts, _weighed(weights, embedded))


def rank_files(history: HistoryEvidence, signals: TaskSignals, weights: RankingWeights = DEFAULT_WEIGHTS,
               ) -> list[tuple[FileEntry, float, dict[str, float]]]:
    """Context-map files with a positive fused score, best first (path breaks ties),
    each with its score parts."""
    weighed = _weighed(weights, bool(history.neighbours[:DENSE_VOTERS]))
    ranked = []
    for entry, parts in file_parts(history, signals):
        total = _sum(parts, weighed)
        if total > 0:
            ranked.append((entry, total, parts))
    ranked.sort(key=lambda r: (-r[1], r[0].path))
    return ranked


__all__: Sequence[str] = (
    "DEFAULT_WEIGHTS",
    "NEIGHBOURS",
    "PartWeights",
    "RankingWeights",
    "combine",
    "evidence_of",
    "file_parts",
    "heirs",
    "rank_files",
    "route",
    "weight_of",
)
