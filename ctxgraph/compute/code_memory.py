"""The associative (code) memory at context time: fusion and snippets. Pure.

Three ranked lists are fused by reciprocal rank fusion (Cormack, Clarke and
Büttcher, 2009): an item's score is the sum, over the lists it is in, of
``1 / (k + rank)`` (``k`` = ``memory_rrf_k``, 60 by default; ranks from 1):

1. the graph's code references — the files ranked from the history's evidence
   and the tag and full-text candidates (:func:`ctxgraph.compute.ranking.rank_files`);
2. the files of the nearest chunks to the task's intent (cosine similarity of
   all-MiniLM-L6-v2 vectors), each file at the rank of its best chunk;
3. the files of the best full-text chunks (BM25 over the chunk's path and
   text terms), likewise.

A memory hit counts only over its threshold (``memory_min_similarity`` for a
cosine, ``memory_min_bm25`` for a BM25 score). The fused files are the code
references.

**What the history backs keeps its place** (:func:`kept`). With k = 60 a file
in both memory lists outscores the graph's first file whatever the evidence
behind it, and two weak code matches of a terse task ("tests", "fix typo")
then push down files the history knows well. So when the graph's files were
ranked from the history's evidence (they come with their scores) and the
history holds a finished task closer in meaning to this one than any chunk of
code is — the nearest task's cosine exceeds the best vector hit's by at least
``memory_graph_margin`` (0.1; the same model embeds the task for both) — the
graph files scoring at least ``memory_graph_keep`` (0.7) times its best
file's score lead the fused list, in the graph's order, and the memory's
files fuse with the rest. Otherwise (no history scores, the context map's
own scores; no neighbour by embedding; code as close as the history or closer, as
where the history is thin) the lists fuse as a whole. The share is
dimensionless, so it means the same whatever the scores' scale. A kept
file's fused score is 1 + 1/(k + its graph rank) (the others' stay under 1),
so the order survives wherever the score ranks; a share over 1 keeps nothing.

The snippets are the first fused files' best chunks (a chunk ranked the same
way: its vector rank, its full-text rank, and its file's rank among the
graph's code references), taken while the next file has a confident one
(cosine at least ``memory_snippet_similarity``, or BM25 at least
``memory_snippet_bm25``), at most ``memory_snippets`` of them and
``memory_max_bytes`` of text; a snippet shows the chunk's signatures (code)
or first lines, cut to ``memory_snippet_chars``. A chunk whose file changed
since it was indexed comes as the recall placed it in the file as it is now
(:func:`ctxgraph.memory.recall.check`); one whose text is no longer there
ranks after the others in its lists and its snippet is marked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from ctxgraph.compute.config import ContextConfig
from ctxgraph.compute.freshness import MEMORY_MARK
from ctxgraph.core.models import MemoryHit, MemoryRecall


class Snippet(BaseModel):
    """A chunk of code injected into the context ("Relevant codebase context")."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")
    level: str = "full"
    path: str
    start_line: int
    end_line: int
    text: str
    #: cosine similarity to the task's intent, when the chunk was a vector match
    similarity: float | None = None
    #: BM25 score, when the chunk was a full-text match
    bm25: float | None = None
    #: the fused (reciprocal rank) score the snippets are ordered by
    score: float
    #: :data:`ctxgraph.compute.freshness.MEMORY_MARK` when its file no longer
    #: holds the indexed text (the lines shown are those in its place now)
    stale: str | None = None


@dataclass
class Fusion:
    #: (path, fused score, the file's rank in each list it is in), best first
    files: list[tuple[str, float, dict[str, int]]] = field(default_factory=list)
    snippets: list[Snippet] = field(default_factory=list)


def memory_found(lists: dict[str, int]) -> str:
    """A code reference's note when the memory found its file (``lists``: the
    fused lists that hold it): by the meaning of its code, by its words, or both."""
    how = [w for name, w in (("vector", "meaning"), ("text", "words")) if name in lists]
    return f"found by {' and '.join(how)}" if how else ""


def passing(recall: MemoryRecall, config: ContextConfig) -> tuple[list[MemoryHit], list[MemoryHit]]:
    """The hits over their thresholds, re-ranked from 1 in each list; a hit
    whose file no longer holds its indexed text (``changed``) after the others:
    its score was earned by text that is gone."""
    vec = sorted((h for h in recall.by_vector if h.score >= config.memory_min_similarity), key=lambda h: h.changed)
    txt = sorted((h for h in recall.by_text if h.score >= config.memory_min_bm25), key=lambda h: h.changed)
    return ([h.model_copy(update={"rank": n}) for n, h in enumerate(vec, start=1)],
            [h.model_copy(update={"rank": n}) for n, h in enumerate(txt, start=1)])


def _file_ranks(hits: Sequence[MemoryHit]) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for h in hits:
        ranks.setdefault(h.chunk.path, len(ranks) + 1)
    return ranks


_DEF = re.compile(r"^\s*(?:async\s+def|def|class)\s+\w")
_SPACE = re.compile(r"\s+")


def signatures(text: str) -> list[str]:
    """The ``def``/``class`` signatures of Python code, one line each (a
    signature over several lines joined), in order."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if _DEF.match(lines[i]):
            parts = [lines[i].strip()]
            while not parts[-1].endswith(":") and i + 1 < len(lines) and len(parts) < 16:
                i += 1
                parts.append(lines[i].strip())
            one = _SPACE.sub(" ", " ".join(parts)).replace("( ", "(").replace(", )", ")").replace(" )", ")")
            out.append(one)
        i += 1
    return out


def excerpt(text: str, limit: int) -> str:
    """What a snippet shows of a chunk: its signatures when it has some (code),
    else its first lines, blank lines out; cut to ``limit`` characters (at a
    line end when one is past half of it)."""
    lines = signatures(text) or [line.strip() for line in text.splitlines() if line.strip()]
    out = "\n".join(lines)
    if len(out) <= limit:
        return out
    cut = out.rfind("\n", 0, limit)
    return out[:cut] if cut > limit // 2 else out[:limit - 1].rstrip() + "…"


def kept(graph_files: Sequence[str], graph_scores: Sequence[float] | None, ratio: float) -> list[str]:
    """The leading graph files the history backs: those scoring at least
    ``ratio`` times the best score (none without scores or with a non-positive best)."""
    if not graph_scores or not graph_files or graph_scores[0] <= 0:
        return []
    if len(graph_scores) != len(graph_files):
        raise ValueError("graph_scores must give one score per graph file")
    bar = ratio * graph_scores[0]
    out: list[str] = []
    for path, score in zip(graph_files, graph_scores, strict=True):
        if score < bar:
            break
        if path not in out:
            out.append(path)
    return out


def history_leads(history_similarity: float | None, recall: MemoryRecall, config: ContextConfig) -> bool:
    """Whether the history's nearest finished task is closer to the task than
    the code's nearest chunk, by ``memory_graph_margin`` at least (cosines of
    the same task vector); never without a neighbour by embedding."""
    if history_similarity is None:
        return False
    code = max((h.score for h in recall.by_vector), default=0.0)
    return history_similarity - code >= config.memory_graph_margin


def fuse(graph_files: Sequence[str], recall: MemoryRecall, config: ContextConfig,
         graph_scores: Sequence[float] | None = None, history_similarity: float | None = None) -> Fusion:
    """The fused file ranking and the snippets (see the module's docstring).
    ``graph_scores``: the graph files' scores, best first (one per file), when
    they were ranked from the history's evidence; ``history_similarity``: the
    cosine of the finished task nearest to this one by embedding."""
    k = config.memory_rrf_k
    vec, txt = passing(recall, config)
    lists = {"graph": {f: n for n, f in enumerate(dict.fromkeys(graph_files), start=1)},
             "vector": _file_ranks(vec), "text": _file_ranks(txt)}
    scores: dict[str, float] = {}
    parts: dict[str, dict[str, int]] = {}
    for name, ranks in lists.items():
        for path, rank in ranks.items():
            scores[path] = scores.get(path, 0.0) + 1.0 / (k + rank)
            parts.setdefault(path, {})[name] = rank
    # Files the history backs keep their places ahead of the fusion: one tier
    # up, in the graph's order (a file's reciprocal-rank score is under 1).
    lead = kept(graph_files, graph_scores, config.memory_graph_keep) if history_leads(
        history_similarity, recall, config) else []
    for path in lead:
        scores[path] = 1.0 + 1.0 / (k + lists["graph"][path])
    files = sorted(((p, s, parts[p]) for p, s in scores.items()), key=lambda x: (-x[1], x[0]))

    chunk_scores: dict[tuple[str, int], float] = {}
    found: dict[tuple[str, int], tuple[MemoryHit, float | None, float | None]] = {}
    for hits, is_vector in ((vec, True), (txt, False)):
        for h in hits:
            key = (h.chunk.path, h.chunk.start_line)
            chunk_scores[key] = chunk_scores.get(key, 0.0) + 1.0 / (k + h.rank)
            _, sim, bm = found.get(key, (h, None, None))
            found[key] = (h, h.score if is_vector else sim, bm if is_vector else h.score)
    for key in chunk_scores:
        graph_rank = lists["graph"].get(key[0])
        if graph_rank is not None:
            chunk_scores[key] += 1.0 / (k + graph_rank)
    # Snippets lead the file list, so they are its first files, in order: the
    # best fused file's most relevant chunk, then the next file's, until a file
    # has no confident chunk (the rest stay code references, unreordered).
    best: dict[str, tuple[str, int]] = {}
    for key in sorted(chunk_scores, key=lambda c: (-chunk_scores[c], c)):
        best.setdefault(key[0], key)
    snippets: list[Snippet] = []
    used = 0
    for path, _, _ in files:
        if len(snippets) >= config.memory_snippets or path not in best:
            break
        key = best[path]
        hit, sim, bm = found[key]
        confident = (sim is not None and sim >= config.memory_snippet_similarity) or (
            bm is not None and bm >= config.memory_snippet_bm25)
        text = excerpt(hit.chunk.text, config.memory_snippet_chars)
        size = len(text.encode("utf-8"))
        if not confident or used + size > config.memory_max_bytes:
            break
        used += size
        snippets.append(Snippet(path=hit.chunk.path, start_line=hit.chunk.start_line,
                                end_line=hit.chunk.end_line, text=text, similarity=sim, bm25=bm,
                                score=round(chunk_scores[key], 6), stale=MEMORY_MARK if hit.changed else None))
    return Fusion(files=files, snippets=snippets)
