"""How the associative memory's files fuse with the graph's (ctxgraph.compute.code_memory.fuse). Pure.

The rule under test: graph files the history backs (a score at least
``memory_graph_keep`` times the best one's) keep their places ahead of the
reciprocal rank fusion when the nearest finished task is closer to the task
than the best code chunk (by ``memory_graph_margin``); else the plain fusion.
"""

from __future__ import annotations

import pytest

from ctxgraph.compute.code_memory import fuse, history_leads, kept
from ctxgraph.compute.config import ContextConfig
from ctxgraph.compute.context import compute_context
from ctxgraph.compute.limits import limits_for
from ctxgraph.core.models import (
    Candidates,
    FileEntry,
    FileEvidence,
    HistoryEvidence,
    MemoryChunk,
    MemoryHit,
    MemoryRecall,
    NeighbourEvidence,
    Task,
    TaskEvidence,
)
from ctxgraph.signals import TaskSignals


def hit(path: str, score: float, rank: int, line: int = 1) -> MemoryHit:
    chunk = MemoryChunk(path=path, start_line=line, end_line=line + 9, text="def f():\n    pass\n", text_hash="h",
                        token_estimate=5, file_sha256="s")
    return MemoryHit(chunk=chunk, score=score, rank=rank)


#: Both memory lists agree on m.py (a file the graph ranks nowhere) and on g2.py.
RECALL = MemoryRecall(project="p", by_vector=(hit("m.py", 0.45, 1), hit("g2.py", 0.4, 2)),
                      by_text=(hit("m.py", 6.0, 1), hit("g2.py", 5.0, 2)))
GRAPH = ["g1.py", "g2.py", "g3.py", "g4.py"]
CONFIG = ContextConfig()
#: the nearest finished task's cosine: 0.6 against the best chunk's 0.45
NEAR = 0.6


def names(files: list[tuple[str, float, dict[str, int]]]) -> list[str]:
    return [f[0] for f in files]


def test_kept_is_the_prefix_scoring_at_least_the_share_of_the_best() -> None:
    assert kept(GRAPH, [10.0, 7.0, 6.9, 1.0], 0.7) == ["g1.py", "g2.py"]
    assert kept(GRAPH, [10.0, 9.0, 8.0, 7.5], 0.7) == GRAPH
    # a score under the bar ends the prefix (the list is best first)
    assert kept(GRAPH, [10.0, 5.0, 9.0, 9.0], 0.7) == ["g1.py"]
    assert kept(GRAPH, [10.0, 7.0, 6.9, 1.0], 1.5) == []  # over 1: nothing kept
    assert kept(GRAPH, None, 0.7) == [] and kept(GRAPH, [], 0.7) == []
    assert kept(GRAPH, [0.0, 0.0, 0.0, 0.0], 0.7) == []  # no evidence, nothing to keep
    with pytest.raises(ValueError, match="one score per graph file"):
        kept(GRAPH, [1.0], 0.7)


def test_without_scores_the_fusion_is_plain_reciprocal_rank() -> None:
    fusion = fuse(GRAPH, RECALL, CONFIG)
    # g2.py: 1/62 (graph) + 1/62 + 1/62; m.py: 1/61 + 1/61; g1.py: 1/61
    assert names(fusion.files) == ["g2.py", "m.py", "g1.py", "g3.py", "g4.py"]
    assert all(score < 1 for _, score, _ in fusion.files)


def test_files_the_history_backs_lead_in_the_graphs_order() -> None:
    fusion = fuse(GRAPH, RECALL, CONFIG, [10.0, 7.5, 2.0, 1.0], NEAR)
    # g1.py and g2.py score >= 0.7 x 10: they lead, g1.py first though the memory
    # prefers g2.py; m.py (both memory lists) then outranks the weakly backed g3.py.
    assert names(fusion.files) == ["g1.py", "g2.py", "m.py", "g3.py", "g4.py"]
    scores = [score for _, score, _ in fusion.files]
    assert scores == sorted(scores, reverse=True)  # the order survives wherever the score ranks
    assert scores[0] == pytest.approx(1 + 1 / 61) and scores[1] == pytest.approx(1 + 1 / 62)
    assert scores[2] < 1
    assert fusion.files[1][2] == {"graph": 2, "vector": 2, "text": 2}  # the lists a file is in, as before


def test_the_graph_leads_only_when_the_history_is_closer_than_the_code() -> None:
    assert history_leads(0.6, RECALL, CONFIG)  # 0.6 - 0.45 >= 0.1
    assert not history_leads(0.5, RECALL, CONFIG)  # 0.05: the code is nearly as close
    assert not history_leads(None, RECALL, CONFIG)  # no neighbour by embedding
    assert history_leads(0.5, RECALL, CONFIG.model_copy(update={"memory_graph_margin": 0.0}))
    # full-text hits alone (no vector search): any neighbour at the margin leads
    assert history_leads(0.1, MemoryRecall(project="p", by_text=RECALL.by_text), CONFIG)
    plain = names(fuse(GRAPH, RECALL, CONFIG).files)
    assert names(fuse(GRAPH, RECALL, CONFIG, [10.0, 7.5, 2.0, 1.0], 0.5).files) == plain
    assert names(fuse(GRAPH, RECALL, CONFIG, [10.0, 7.5, 2.0, 1.0]).files) == plain
    assert names(fuse(GRAPH, RECALL, CONFIG, [10.0, 7.5, 2.0, 1.0], NEAR).files) != plain


def test_a_graph_with_one_clear_winner_keeps_only_it() -> None:
    fusion = fuse(GRAPH, RECALL, CONFIG, [10.0, 3.0, 2.0, 1.0], NEAR)
    # g1.py alone is kept; g2.py (graph and both memory lists) then leads the rest
    assert names(fusion.files) == ["g1.py", "g2.py", "m.py", "g3.py", "g4.py"]
    assert fusion.files[1][1] < 1
    # with the rule off (a share over 1) the memory's agreement leads again
    off = fuse(GRAPH, RECALL, CONFIG.model_copy(update={"memory_graph_keep": 1.01}), [10.0, 3.0, 2.0, 1.0], NEAR)
    assert names(off.files) == names(fuse(GRAPH, RECALL, CONFIG).files)


def test_snippets_follow_the_fused_order() -> None:
    strong = MemoryRecall(project="p", by_vector=(hit("m.py", 0.8, 1), hit("g1.py", 0.6, 2)))
    # g1.py is kept and has a confident chunk: its snippet comes first
    assert [s.path for s in fuse(GRAPH, strong, CONFIG, [10.0, 1.0, 1.0, 1.0], 0.95).snippets] == ["g1.py", "m.py"]
    # a kept file with no chunk (g2.py) ends the snippets: they are the fused list's first files
    assert [s.path for s in fuse(GRAPH, strong, CONFIG, [10.0, 9.0, 1.0, 1.0], 0.95).snippets] == ["g1.py"]
    assert fuse(["g2.py", *GRAPH], strong, CONFIG, [10.0, 10.0, 1.0, 1.0, 1.0], 0.95).snippets == []


def _candidates(memory: MemoryRecall, *, history: bool, near: float = 0.9) -> Candidates:
    entries = tuple(FileEntry(path=p, component=p.removesuffix(".py")) for p in ("g1.py", "g2.py", "m.py"))
    if not history:
        return Candidates(context_map=entries, memory=memory)
    # one similar finished task touched g1.py: the history backs it alone
    tasks = (TaskEvidence(id="t1", score=5.0, completed_at="2026-01-01T00:00:00Z", matched=("parse",),
                          files=("g1.py",)),)
    files = tuple(FileEvidence(entry=e, touches=1 if e.path == "g1.py" else 0) for e in entries)
    neighbours = (NeighbourEvidence(id="t1", score=near, completed_at="2026-01-01T00:00:00Z", matched=(),
                                    files=("g1.py",)),)
    return Candidates(context_map=entries, memory=memory,
                      history=HistoryEvidence(n_tasks=1, tasks=tasks, files=files, neighbours=neighbours))


def test_the_context_keeps_the_history_backed_file_first() -> None:
    memory = MemoryRecall(project="p", by_vector=(hit("m.py", 0.45, 1),), by_text=(hit("m.py", 6.0, 1),))
    task = Task(id="t-new", name="fix parse", objective="fix parse")
    sig = TaskSignals(keywords=("parse",))

    def refs(candidates: Candidates) -> list[str]:
        ctx = compute_context(task, sig, candidates, limits_for("normal"), complexity="normal", config=CONFIG)
        return [r.file for r in ctx.code_references]

    assert refs(_candidates(memory, history=True))[0] == "g1.py"
    # the nearest finished task no closer than the code: the memory's file leads
    assert refs(_candidates(memory, history=True, near=0.5))[0] == "m.py"
    # the context map's own scores (no history) carries no evidence: the memory's file leads
    assert refs(_candidates(memory, history=False))[0] == "m.py"
