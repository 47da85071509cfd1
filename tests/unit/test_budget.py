"""The limiter, with the seeds' numbers: 8,000 tokens; 50/30/20 with rollover;
1/(1+hours); block priorities 100/80/60/40; an error only when exact blocks alone
exceed the budget; chains keep their latest version; the budget is never exceeded."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ctxgraph.compute.budget import Block, BudgetExceededError, fit_budget, strategy_term
from ctxgraph.compute.compress import Level, Policy, reference, structural, summarize_text
from ctxgraph.compute.config import ContextConfig
from ctxgraph.compute.context import compute_context
from ctxgraph.compute.limits import limits_for
from ctxgraph.core.models import (
    Candidates,
    DependencyHandoff,
    FileEntry,
    KnowledgeHit,
    KnowledgeItem,
    RecentTask,
    Severity,
    Task,
    TaskStatus,
)
from ctxgraph.signals import TaskSignals

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SIG = TaskSignals(keywords=("jwt", "login"), domains=("auth",), files_mentioned=(), task_types=())
TASK = Task(id="t", name="Login", objective="JWT login", signals=SIG)


def block(bid: str, tokens: int, *, scope: str = "global", source: str = "memory", relevance: float = 1.0,
          policy: Policy = Policy.SUMMARIZABLE, small: int | None = None) -> Block:
    """A block whose full text costs ``tokens`` (summary: ``small``, reference: 1)."""
    sizes = {Level.FULL: tokens, Level.STRUCTURAL: tokens, Level.SUMMARY: small or max(1, tokens // 4),
             Level.REFERENCE: 1}
    return Block(id=bid, section="patterns", kind="pattern", scope=scope, source=source,  # type: ignore[arg-type]
                 policy=policy, relevance=relevance, tag_matches=(), importance=0.5, updated_at=None,
                 render=lambda level: level, fragment=lambda level: "x" * (4 * sizes[level]))


def ts(hours_ago: float) -> str:
    return (NOW - timedelta(hours=hours_ago)).isoformat().replace("+00:00", "Z")


# ----------------------------------------------------------------- budget numbers


def test_default_budget_is_8000_and_tiers_have_their_own() -> None:
    config = ContextConfig()
    assert config.budget_for("normal") == 8000
    assert (config.budget_for("easy"), config.budget_for("complex")) == (4000, 16000)
    assert ContextConfig(budget=1234).budget_for("complex") == 1234


def test_scope_split_50_30_20_with_rollover() -> None:
    blocks = [block("g", 100, scope="global"), block("t", 2500, scope="task"), block("p", 10, scope="path")]
    result = fit_budget(blocks, budget=10_000, frame_tokens=0, exact_names=[], config=ContextConfig())
    # global may use 5000 and uses 100: 4900 rolls over to task (3000 + 4900 = 7900), which
    # uses 2500: 5400 rolls over to path (2000 + 5400 = 7400)
    assert result.scope_allowed == {"global": 5000, "task": 7900, "path": 7400}
    assert result.scope_used == {"global": 100, "task": 2500, "path": 10}
    assert all(b.fate == "kept" for b in blocks)


def test_a_full_scope_compresses_then_drops_within_its_share() -> None:
    fixed = block("g", 5000, scope="global", policy=Policy.REFERENCE)
    fixed.fragment = lambda level: "x" * 20000  # 5000 tokens at any level
    t1, t2, t3 = block("t1", 2000, scope="task", relevance=3), block("t2", 2000, scope="task", relevance=2), \
        block("t3", 2000, scope="task", relevance=1)
    fit_budget([fixed, t1, t2, t3], budget=11_000, frame_tokens=0, exact_names=[], config=ContextConfig())
    # global uses its 5500 share but 500, which rolls over: task has 3300 + 500 = 3800.
    # t1 (2000) fits; t2 only as its 500-token summary; t3's summary too (1300 left -> 800)
    assert [(b.fate, b.level) for b in (fixed, t1, t2, t3)] == [
        ("kept", Level.REFERENCE), ("kept", Level.FULL), ("compressed", Level.SUMMARY),
        ("compressed", Level.SUMMARY)]


def test_greedy_fill_skips_what_does_not_fit_and_goes_on() -> None:
    big = block("big", 900, relevance=3, policy=Policy.REFERENCE)
    big.fragment = lambda level: "x" * 3600
    small = block("small", 50, relevance=1, policy=Policy.REFERENCE)
    small.fragment = lambda level: "x" * 200
    fit_budget([big, small], budget=1000, frame_tokens=0, exact_names=[], config=ContextConfig())
    assert (big.fate, big.reason) == ("dropped", "budget")  # 900 > 500 (global's half)
    assert small.fate == "kept"


def test_exact_alone_over_budget_is_an_error_naming_them() -> None:
    with pytest.raises(BudgetExceededError, match="need 500 tokens but the budget is 400: working memory"):
        fit_budget([], budget=400, frame_tokens=500, exact_names=["working memory"], config=ContextConfig())


def test_lowest_priority_degrades_first_100_80_60_40() -> None:
    config = ContextConfig()
    blocks = {src: block(src, 400, source=src, small=100) for src in ("task", "memory", "code", "docs")}
    # 1600 at full; 1300 fits only if one block (docs, the lowest) is summarized
    fit_budget(list(blocks.values()), budget=1300, frame_tokens=0, exact_names=[],
        config=config.model_copy(update={"scope_split": {"global": 1.0, "task": 0.0, "path": 0.0}}))
    assert {s: b.level for s, b in blocks.items()} == {
        "task": Level.FULL, "memory": Level.FULL, "code": Level.FULL, "docs": Level.SUMMARY}
    # tighter: docs and code summarized, memory and task untouched
    blocks = {src: block(src, 400, source=src, small=100) for src in ("task", "memory", "code", "docs")}
    fit_budget(list(blocks.values()), budget=1000, frame_tokens=0, exact_names=[],
        config=config.model_copy(update={"scope_split": {"global": 1.0, "task": 0.0, "path": 0.0}}))
    assert [blocks[s].level for s in ("task", "memory", "code", "docs")] == [
        Level.FULL, Level.FULL, Level.SUMMARY, Level.SUMMARY]
    assert blocks["docs"].fate == "compressed" and blocks["docs"].reason == "budget"


def test_exact_blocks_never_degrade() -> None:
    exact = block("e", 400, policy=Policy.EXACT)
    fit_budget([exact, block("m", 400, source="docs")], budget=500, frame_tokens=0, exact_names=[], config=ContextConfig())
    assert exact.level is Level.FULL


# -------------------------------------------------------------------- strategies


def test_balanced_is_importance_times_one_over_one_plus_hours() -> None:
    b = block("b", 1)
    b.importance = 1.0
    for hours, expected in ((0, 1.0), (1, 0.5), (3, 0.25), (24, 0.04)):
        b.updated_at = ts(hours)
        assert strategy_term(b, ContextConfig(), NOW) == pytest.approx(expected)
    b.updated_at = ts(1)
    assert strategy_term(b, ContextConfig(decay_hours=2.0), NOW) == pytest.approx(2 / 3)
    assert strategy_term(b, ContextConfig(strategy="important"), NOW) == 1.0
    assert strategy_term(b, ContextConfig(strategy="recent"), NOW) == pytest.approx(0.5)


def _k(kid: str, hours: float, importance: float, tags: tuple[str, ...] = ("jwt",)) -> KnowledgeItem:
    return KnowledgeItem(id=kid, kind="pattern", summary=f"pattern {kid}", tags=tags, importance=importance,
                         updated_at=ts(hours))


def test_strategies_order_ties_but_relevance_comes_first() -> None:
    hits = (
        KnowledgeHit(item=_k("old-important", 48, 1.0), matched_tags=("jwt",)),
        KnowledgeHit(item=_k("new-minor", 0.1, 0.2), matched_tags=("jwt",)),
        KnowledgeHit(item=_k("most-relevant", 500, 0.1, tags=("jwt", "login")), matched_tags=("jwt", "login")),
    )
    order = {}
    for strategy in ("recent", "important", "balanced"):
        ctx = compute_context(TASK, SIG, Candidates(keyword_hits=hits), limits_for("normal"), complexity="normal",
                              config=ContextConfig(strategy=strategy), now=NOW)  # type: ignore[arg-type]
        order[strategy] = [p.id for p in ctx.patterns_to_follow]
    assert order["recent"] == ["most-relevant", "new-minor", "old-important"]
    assert order["important"] == ["most-relevant", "old-important", "new-minor"]
    # balanced: 1.0/(1+48) = 0.020 < 0.2/(1+0.1) = 0.18
    assert order["balanced"] == ["most-relevant", "new-minor", "old-important"]


# -------------------------------------------------------------------------- chains


def test_latest_chain_version_wins_and_superseded_decisions_never_appear() -> None:
    v1 = KnowledgeItem(id="d1", kind="decision", summary="Use HS256", tags=("jwt",), chain_id="c", version=1)
    v2 = KnowledgeItem(id="d2", kind="decision", summary="Use RS256", tags=("jwt",), chain_id="c", version=2)
    old = KnowledgeItem(id="d0", kind="decision", summary="Sessions", tags=("jwt",), status="superseded")
    hits = tuple(KnowledgeHit(item=i, matched_tags=("jwt",)) for i in (v1, v2, old))
    ctx = compute_context(TASK, SIG, Candidates(keyword_hits=hits), limits_for("normal"), complexity="normal",
                          now=NOW, explain=True)
    assert [d.decision for d in ctx.relevant_decisions] == ["Use RS256"]
    reasons = {e.id: e.reason for e in ctx.explain or ()}
    assert reasons == {"d0": "superseded", "d1": "chain", "d2": ""}


# ------------------------------------------------------------------- compression


def test_structural_keeps_signatures_and_docstrings() -> None:
    source = '''"""Module doc."""
import os


def add(a: int,
        b: int) -> int:
    """Add two numbers."""
    total = a + b
    return total


class Box:
    """A box."""

    def open(self) -> None:
        os.remove("lid")
'''
    out = structural(source)
    assert '"""Module doc."""' in out and "import os" in out
    assert "def add(a: int,\n        b: int) -> int:" in out and '"""Add two numbers."""' in out
    assert "class Box:" in out and "    def open(self) -> None:" in out
    assert "total = a + b" not in out and "os.remove" not in out


def test_summarize_keeps_headings_first_paragraph_and_key_lines() -> None:
    text = "# Title\nFirst para line one.\nline two.\n\nFiller text here.\nYou must never do X.\n## Part\nmore filler"
    assert summarize_text(text) == "# Title\nFirst para line one.\nline two.\nYou must never do X.\n## Part"
    assert reference("first line\nsecond", "a.md") == "a.md (17 bytes): first line"


# ------------------------------------------------------------- property: budget


severities = st.sampled_from(list(Severity))
words = st.text(alphabet="abcdefghij klmnop認証", min_size=1, max_size=300)


@st.composite
def scenario(draw: st.DrawFn) -> tuple[Candidates, int, str]:
    n = draw(st.integers(0, 30))
    hits = tuple(
        KnowledgeHit(item=KnowledgeItem(
            id=f"k{i}", kind=draw(st.sampled_from(["pattern", "gotcha", "decision"])), summary=draw(words),
            tags=("jwt",), severity=draw(severities), chain_id=draw(st.sampled_from([None, "c1", "c2"])),
            version=draw(st.integers(1, 3)), importance=draw(st.floats(0, 1)), updated_at=ts(draw(st.integers(0, 99)))),
            matched_tags=tuple(draw(st.sets(st.sampled_from(["jwt", "login", "auth"]), min_size=1))))
        for i in range(n)
    )
    deps = tuple(
        DependencyHandoff(task=Task(id=f"d{i}", name=draw(words), status=TaskStatus.COMPLETED), summary=draw(words))
        for i in range(draw(st.integers(0, 5)))
    )
    files = tuple(FileEntry(path=f"src/jwt/f{i}.py", component="jwt", notes=draw(words))
                  for i in range(draw(st.integers(0, 15))))
    recent = tuple(RecentTask(id=f"r{i}", intent=draw(words), success=True, completed_at=ts(i))
                   for i in range(draw(st.integers(0, 5))))
    return (Candidates(keyword_hits=hits, dependencies=deps, context_map=files, recent_tasks=recent),
            draw(st.integers(50, 6000)), draw(st.sampled_from(["easy", "normal", "complex"])))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_rendered_context_never_exceeds_the_budget(case: tuple[Candidates, int, str]) -> None:
    candidates, budget, tier = case
    # A refused budget is one the never-compressed blocks really exceed: the
    # tokens the refusal names are over it, and that many are then enough, so
    # every example reaches the checks below.
    for _ in range(3):
        try:
            ctx = compute_context(TASK, SIG, candidates, limits_for(tier), complexity=tier,
                                  config=ContextConfig(budget=budget), now=NOW, explain=True)
            break
        except BudgetExceededError as exc:
            assert "never compressed" in str(exc) or "nothing optional" in str(exc)
            need = re.search(r"needs? (\d+) tokens", str(exc))
            assert need is not None and int(need.group(1)) > budget, str(exc)
            event("budget refused, then the tokens it named")
            budget = int(need.group(1))
    else:
        raise AssertionError(f"refused three times, lastly at {budget} tokens")
    event("within the budget drawn" if budget == case[1] else "within the budget the refusal named")
    assert ctx.tokens <= budget
    # exact blocks (working memory) are never altered
    for r in candidates.recent_tasks:
        assert f'{r.id}: "{" ".join(r.intent.split())}"' in ctx.markdown
    entries = ctx.explain or ()
    # the latest version of each chain wins
    by_chain: dict[str, list[KnowledgeItem]] = {}
    for hit in candidates.keyword_hits:
        if hit.item.chain_id:
            by_chain.setdefault(hit.item.chain_id, []).append(hit.item)
    chain_dropped = {e.id for e in entries if e.reason == "chain"}
    for items in by_chain.values():
        best = max(items, key=lambda i: (i.version, i.updated_at or ""))
        assert best.id not in chain_dropped
        assert {i.id for i in items} - {best.id} <= chain_dropped
    # a kept item never ranks below a dropped one of its section unless the reason is budget
    for section in {e.section for e in entries}:
        rows = [e for e in entries if e.section == section]
        kept = [e for e in rows if e.fate != "dropped"]
        for d in (e for e in rows if e.fate == "dropped" and e.reason == "cap"):
            for k in kept:
                assert (k.relevance, -k.type_priority, k.strategy_term) >= (d.relevance, -d.type_priority,
                                                                            d.strategy_term)
