"""The pure compute pipeline: the specified numbers, with no store and no IO."""

from __future__ import annotations

from typing import Any

from ctxgraph.compute.context import compute_context
from ctxgraph.compute.limits import TIERS, limits_for
from ctxgraph.compute.map_score import map_score
from ctxgraph.compute.output import ComputedContext
from ctxgraph.compute.relevance import filter_context_map, merge_hits, relevance
from ctxgraph.core.models import (
    Blocker,
    Candidates,
    Complexity,
    DependencyHandoff,
    FileEntry,
    KnowledgeHit,
    KnowledgeItem,
    ReadNext,
    RecentTask,
    Severity,
    Task,
    TaskHit,
    TaskStatus,
)
from ctxgraph.core.rarity import tag_weight, tag_weights, weighted
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.signals import TaskSignals

SIG = TaskSignals(keywords=("jwt", "login", "token"), domains=("auth",),
                  files_mentioned=("src/auth/login.ts",), task_types=("feature",))
TASK = Task(id="t-new", name="Add refresh tokens", objective="Rotate JWT on login", signals=SIG)


def k(kind: str, n: int, tags: tuple[str, ...] = ("jwt",), **kw: object) -> KnowledgeItem:
    return KnowledgeItem(id=f"{kind}-{n:02d}", kind=kind, summary=f"{kind} {n}", tags=tags,  # type: ignore[arg-type]
                         updated_at=f"2026-01-{n + 1:02d}T00:00:00Z", **kw)  # type: ignore[arg-type]


def hit(item: KnowledgeItem, *tags: str) -> KnowledgeHit:
    return KnowledgeHit(item=item, matched_tags=tags or item.tags)


def run(candidates: Candidates, complexity: str = "normal", task: Task = TASK, **kw: Any) -> ComputedContext:
    return compute_context(task, SIG, candidates, limits_for(complexity), complexity=complexity, **kw)


# ------------------------------------------------------------------- the tiers


def test_tiers_are_the_seeds_table() -> None:
    table = {c.value: (lim.patterns, lim.gotchas, lim.code_refs, lim.prior_tasks) for c, lim in TIERS.items()}
    assert table == {"easy": (3, 2, 5, 2), "normal": (5, 3, 10, 4), "complex": (10, 5, 20, 8)}


def test_tiers_cap_each_section() -> None:
    patterns = [hit(k("pattern", i)) for i in range(12)]
    gotchas = [hit(k("gotcha", i, severity=Severity.HIGH)) for i in range(12)]
    files = tuple(FileEntry(path=f"src/jwt/f{i:02d}.ts", component="jwt") for i in range(25))
    deps = tuple(
        DependencyHandoff(task=Task(id=f"d{i}", name=f"dep {i}", status=TaskStatus.COMPLETED), summary="s")
        for i in range(10)
    )
    cands = Candidates(keyword_hits=tuple(patterns + gotchas), context_map=files, dependencies=deps)
    for tier, (p, g, c, t) in {"easy": (3, 2, 5, 2), "normal": (5, 3, 10, 4), "complex": (10, 5, 10, 8)}.items():
        ctx = run(cands, tier)
        # code refs: the context-map filter keeps the top 10 before the tier cap applies
        assert (len(ctx.patterns_to_follow), len(ctx.warnings), len(ctx.code_references),
                len(ctx.prior_work)) == (p, g, c, t), tier
    assert run(cands, "easy").computed.dropped_by_limits["patterns"] == 9


# ------------------------------------------------------------- phase 2: knowledge


def test_relevance_weights_keywords_over_domains() -> None:
    assert relevance(["jwt", "login"], SIG) == 2.0
    assert relevance(["auth"], SIG) == 0.5
    assert relevance(["jwt", "auth", "other"], SIG) == 1.5


def test_tag_weight_falls_with_the_tag_degree() -> None:
    assert tag_weight(1, 10_000) == 1.0 and tag_weight(5, 0) == 1.0  # unique tag; nothing known
    weights = [tag_weight(df, 10_000) for df in (2, 4, 100, 1_000, 10_000)]
    assert weights == sorted(weights, reverse=True) and 0 < weights[-1] < 0.1
    assert tag_weight(50, 10) == tag_weight(50, 50)  # a degree above the total counts as the total


def test_the_tag_queries_weights_leave_out_unknown_and_capped_tags() -> None:
    dfs = {"api": 5_000, "cookie": 3, "quote": 1}
    assert weighted(["cookie", "ghost", "api", "cookie", "quote"], dfs, 10_000, max_df=1_000) == [
        ("cookie", tag_weight(3, 10_000)), ("quote", 1.0)]
    assert [t for t, _ in weighted(["api", "cookie"], dfs, 10_000)] == ["api", "cookie"]  # no cap


def test_relevance_weights_each_tag_by_its_rarity() -> None:
    weights = {"jwt": 0.5, "auth": 0.2}
    assert relevance(["jwt", "login"], SIG, weights) == 1.5  # login: no degree known, weight 1
    assert relevance(["auth"], SIG, weights) == 0.1


def test_two_rare_tags_outrank_several_common_ones() -> None:
    sig = SIG.model_copy(update={"keywords": ("a", "b", "c", "d", "rare1", "rare2")})
    weights = tag_weights([("a", 900), ("b", 800), ("c", 700), ("d", 600), ("rare1", 4), ("rare2", 4)], 10_000)
    common, planted = k("pattern", 1, ("a", "b", "c", "d")), k("pattern", 2, ("rare1", "rare2"))
    merged = merge_hits([hit(common, "a", "b", "c", "d"), hit(planted, "rare1", "rare2")], [], sig, weights)
    assert [i.id for i, _ in merged] == ["pattern-02", "pattern-01"]
    assert [i.id for i, _ in merge_hits([hit(common, "a", "b", "c", "d"), hit(planted, "rare1", "rare2")],
                                        [], sig)] == ["pattern-01", "pattern-02"]  # counting tags


def test_compute_weights_knowledge_by_the_degrees_the_store_returned() -> None:
    common, rare = k("pattern", 1, ("jwt", "login")), k("pattern", 2, ("token",))
    cands = Candidates(keyword_hits=(hit(common, "jwt", "login"), hit(rare, "token")),
                       tag_df=(("jwt", 5_000), ("login", 4_000), ("token", 2)), tagged_total=10_000)
    assert [p.id for p in run(cands).patterns_to_follow] == ["pattern-02", "pattern-01"]


def test_merge_dedupes_and_sorts_by_relevance() -> None:
    a, b, c = k("pattern", 1), k("pattern", 2), k("pattern", 3)
    merged = merge_hits([hit(a, "jwt"), hit(b, "jwt", "login")], [hit(a, "auth"), hit(c, "auth")], SIG)
    assert [(i.id, r) for i, r in merged] == [("pattern-02", 2.0), ("pattern-01", 1.5), ("pattern-03", 0.5)]


def test_equal_relevance_prefers_recent_then_id() -> None:
    old, new = k("pattern", 1), k("pattern", 5)
    merged = merge_hits([hit(old), hit(new)], [], SIG)
    assert [i.id for i, _ in merged] == ["pattern-05", "pattern-01"]


def test_knowledge_is_categorized_and_superseded_decisions_dropped() -> None:
    cands = Candidates(keyword_hits=(
        hit(k("pattern", 1)), hit(k("gotcha", 2, severity=Severity.LOW)),
        hit(k("decision", 3, rationale="why", status="active")),
        hit(k("decision", 4, status="superseded")),
    ))
    ctx = run(cands)
    assert [p.pattern for p in ctx.patterns_to_follow] == ["pattern 1"]
    # knowledge-graph gotchas keep every severity; only dependency gotchas drop `low`
    assert [(w.issue, w.severity) for w in ctx.warnings] == [("gotcha 2", Severity.LOW)]
    assert [(d.decision, d.rationale) for d in ctx.relevant_decisions] == [("decision 3", "why")]
    assert ctx.computed.knowledge_nodes_matched == 3


# ----------------------------------------------------------- phase 3: dependencies


def _dep(tid: str, status: TaskStatus, *knowledge: KnowledgeItem) -> DependencyHandoff:
    return DependencyHandoff(
        task=Task(id=tid, name=f"Task {tid}", status=status), summary=f"{tid} summary",
        files_to_read=(ReadNext(file=f"src/{tid}.ts", reason="reuse"),), knowledge=knowledge,
    )


def test_only_completed_dependencies_contribute() -> None:
    cands = Candidates(dependencies=(
        _dep("done", TaskStatus.COMPLETED, k("pattern", 1)),
        _dep("pending", TaskStatus.PENDING, k("pattern", 2)),
        _dep("failed", TaskStatus.FAILED, k("pattern", 3)),
        _dep("blocked", TaskStatus.BLOCKED, k("pattern", 4)),
    ))
    ctx = run(cands)
    assert [w.task_id for w in ctx.prior_work] == ["done"]
    assert ctx.prior_work[0].files_created[0].file == "src/done.ts"
    assert [p.pattern for p in ctx.patterns_to_follow] == ["pattern 1"]
    assert ctx.patterns_to_follow[0].from_task == "done"
    assert ctx.computed.dependency_count == 1
    assert ctx.computed.dependencies_skipped == ("pending", "failed", "blocked")


def test_dependency_gotchas_drop_low_and_questions_keep_blocking_only() -> None:
    cands = Candidates(dependencies=(_dep(
        "d", TaskStatus.COMPLETED,
        k("gotcha", 1, severity=Severity.LOW), k("gotcha", 2, severity=Severity.MEDIUM),
        k("gotcha", 3, severity=Severity.CRITICAL),
        k("open_question", 4, blocking=True, context="ctx", recommendation="rec"),
        k("open_question", 5, blocking=False),
    ),))
    ctx = run(cands)
    assert sorted(w.issue for w in ctx.warnings) == ["gotcha 2", "gotcha 3"]
    assert [(q.question, q.context, q.recommendation) for q in ctx.blocking_questions] == [
        ("open_question 4", "ctx", "rec")]
    assert ctx.computed.warnings_inherited == 2


# ------------------------------------------------------------ phase 4: context map


def test_file_scores_follow_the_seed() -> None:
    sig = TaskSignals(keywords=("auth", "login"), domains=("api",),
                      files_mentioned=("auth/login.ts",), task_types=())
    # component "auth" contains "auth" (+2); location contains auth (+1) and login (+1);
    # notes contain "api" (+1); location contains the mentioned file (+3)
    entry = FileEntry(path="src/auth/login.ts", component="auth", notes="REST API login handler")
    assert map_score(entry, sig) == 2 + 1 + 1 + 1 + 3
    assert map_score(FileEntry(path="src/db/pool.ts", component="db", notes=""), sig) == 0
    assert map_score(FileEntry(path="docs/x.md", component="docs", notes="the api"), sig) == 1


def test_context_map_keeps_positive_scores_top_ten() -> None:
    entries = [FileEntry(path=f"src/jwt/{i:02d}.ts", component="x") for i in range(15)]
    entries.append(FileEntry(path="src/auth/login.ts", component="auth"))
    entries.append(FileEntry(path="src/other.ts", component="other"))
    refs = filter_context_map(entries, SIG)
    assert len(refs) == 10
    assert refs[0].file == "src/auth/login.ts"
    assert refs[0].relevance == 1 + 3  # "login" in location, mentioned file (component "auth" is a domain)
    assert "src/other.ts" not in [r.file for r in refs]


def test_a_code_note_is_shown_for_a_leading_file_alone() -> None:
    near = k("gotcha", 1, scope="path", location="src/auth/login.ts:3-4", severity=Severity.HIGH)
    far = k("gotcha", 2, scope="path", location="src/billing/tax.ts:9", severity=Severity.HIGH)
    plain = k("gotcha", 3, severity=Severity.HIGH)
    files = (FileEntry(path="src/auth/login.ts", component="auth"), FileEntry(path="src/billing/tax.ts",
                                                                               component="billing"))
    ctx = run(Candidates(keyword_hits=(hit(near), hit(far), hit(plain)), context_map=files), explain=True)
    assert {w.id for w in ctx.warnings} == {"gotcha-01", "gotcha-03"}  # tax.ts scores 0: not a file shown
    assert [f.file for f in ctx.code_references] == ["src/auth/login.ts"]
    dropped = {e.id: e.reason for e in ctx.explain or () if e.fate == "dropped"}
    assert dropped["gotcha-02"] == "off-files"
    # a context naming no file keeps every note: it displaces nothing there
    bare = run(Candidates(keyword_hits=(hit(near), hit(far))))
    assert {w.id for w in bare.warnings} == {"gotcha-01", "gotcha-02"}


# ------------------------------------------------------------- working memory


def test_working_memory_is_included_and_honours_the_toggle() -> None:
    cands = Candidates(
        recent_tasks=(RecentTask(id="t1", intent="Did a thing", success=True,
                                 completed_at="2026-01-01T00:00:00Z"),),
        active_blockers=(Blocker(id="t9", reason="keys missing", since="2026-01-02T00:00:00Z"),),
    )
    ctx = run(cands)
    assert "## Recent Task History" in ctx.markdown
    assert '1. t1: "Did a thing" (completed: 2026-01-01T00:00:00Z, ✓ success)' in ctx.markdown
    assert '- t9: "keys missing" (blocked: 2026-01-02T00:00:00Z)' in ctx.markdown
    off = run(cands, task=TASK.model_copy(update={"requires_context": False}))
    assert "Recent Task History" not in off.markdown
    assert off.recent_tasks == () and off.active_blockers == ()


def test_related_tasks_exclude_self_and_dependencies() -> None:
    def th(tid: str, *tags: str) -> TaskHit:
        return TaskHit(task=Task(id=tid, name=f"n {tid}", status=TaskStatus.COMPLETED), matched_tags=tags)

    cands = Candidates(related=(th("t-new", "jwt"), th("dep", "jwt"), th("a", "jwt"), th("b", "jwt", "login")),
                       dependencies=(_dep("dep", TaskStatus.COMPLETED),))
    ctx = run(cands)
    assert [r.id for r in ctx.related_tasks] == ["b", "a"]


# ------------------------------------------------------------------ rendering


def test_empty_sections_use_the_seeds_wording() -> None:
    ctx = run(Candidates())
    md = ctx.markdown
    assert md.startswith("## Context (Computed)\n")
    assert "No specific patterns identified for this task." in md
    assert "No known gotchas for this task area." in md
    assert "Explore the codebase as needed. No specific references pre-identified." in md
    assert "### Prior Work" not in md and "### Open Questions" not in md
    assert "## Context Debug" not in md
    assert ctx.tokens == estimate_tokens(md)


def test_debug_section() -> None:
    md = run(Candidates(context_map_total=7), debug=True).markdown
    assert "## Context Debug" in md
    assert "- Keywords: jwt, login, token" in md
    assert "- Total entries: 7" in md


def test_table_cells_are_escaped() -> None:
    cands = Candidates(context_map=(FileEntry(path="src/auth/login.ts", component="auth",
                                              notes="a | b\nc"),))
    md = run(cands).markdown
    assert "| `src/auth/login.ts` | auth | a \\| b c |" in md


def test_user_template_replaces_the_default() -> None:
    ctx = run(Candidates(), template="Task {{ ctx.task_id }}: {{ ctx.warnings | length }} warnings")
    assert ctx.markdown == "Task t-new: 0 warnings\n"


def test_complexity_tier_enum_accepts_names() -> None:
    assert limits_for("easy") == TIERS[Complexity.EASY]


# ------------------------------------------------------------------ estimator


def test_token_estimate_latin_and_cjk() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("認証トークンを更新する") == 4  # 11 runes / 3, rounded up


def test_an_exact_tokenizer_can_be_plugged_in() -> None:
    from ctxgraph.core.tokens import use_tokenizer

    use_tokenizer(lambda text: len(text.split()))
    try:
        assert estimate_tokens("three plain words") == 3
    finally:
        use_tokenizer(None)
    assert estimate_tokens("three plain words") == 5


# ------------------------------------------------ the just-in-time file check


class _Tree:
    """A work tree as the context asks about it (compute.freshness.FileCheck):
    the files named ``gone`` are not there; the paths asked, in turn."""

    def __init__(self, *gone: str) -> None:
        self.missing, self.asked = set(gone), []  # type: list[str]

    def gone(self, path: str) -> tuple[bool, tuple[()]]:
        self.asked.append(path)
        return path in self.missing, ()


def test_the_context_asks_only_about_the_files_it_may_show() -> None:
    from ctxgraph.compute.limits import CONTEXT_MAP_TOP
    from ctxgraph.core.models import FileEvidence, HistoryEvidence

    history = HistoryEvidence(n_tasks=40, tasks=(), files=tuple(
        FileEvidence(entry=FileEntry(path=f"src/jwt/f{i:02d}.ts", component="jwt"), touches=40 - i)
        for i in range(30)))
    cands = Candidates(history=history)

    def shown(ctx: ComputedContext) -> list[str]:
        return [r.file for r in ctx.code_references]

    plain, tree = run(cands), _Tree()
    assert shown(run(cands, files=tree)) == shown(plain) == [f"src/jwt/f{i:02d}.ts" for i in range(CONTEXT_MAP_TOP)]
    assert tree.asked == shown(plain)  # not the 20 ranked below the cut
    # a file gone among them is left out (explained) and the next one up takes its place
    tree = _Tree("src/jwt/f03.ts")
    ctx = run(cands, files=tree, explain=True)
    assert shown(ctx) == [p for p in shown(plain) if p != "src/jwt/f03.ts"] + [f"src/jwt/f{CONTEXT_MAP_TOP:02d}.ts"]
    assert len(tree.asked) == CONTEXT_MAP_TOP + 1
    assert any("f03.ts" in str(e) and "not in the work tree" in str(e) for e in ctx.explain or ())


# ------------------------------------------------------- escaping (estimates)


def test_the_fragments_of_ordinary_text_are_what_they_always_were() -> None:
    """The limiter's estimates of ordinary items do not move with the escaping
    (docs/concepts.md, step 9): a fragment keeps the text's white space, and a
    file name without backticks is the one-backtick span it always was."""
    from ctxgraph.compute.blocks import frag_code, frag_decision, frag_pattern, frag_prior, frag_related, frag_snippet
    from ctxgraph.compute.code_memory import Snippet
    from ctxgraph.compute.output import CodeRef, DecisionRef, FileRef, PatternRef, PriorWork, RelatedTask

    assert frag_pattern(PatternRef(id="p", pattern="Use x\n\nalways", location="src/a.ts:1-3", relevance=1,
                                   from_task="t1")) == "- **Use x\n\nalways** (see: `src/a.ts:1-3`) — from t1 \n"
    assert frag_pattern(PatternRef(id="p", pattern="P", relevance=1)) == "- **P** (see: `None`) — from None \n"
    assert frag_decision(DecisionRef(id="d", decision="2.0 ships\nnow", relevance=1)) == (
        "- 2.0 ships\nnow — None (from None)\n")
    assert frag_prior(PriorWork(task_id="t1", task="Login", summary="Done.\nAll of it.",
                                files_created=(FileRef(file="src/a.ts", reason="why"),))) == (
        "\n#### Login (t1)\nDone.\nAll of it.\n\n**Files Created:**\n- `src/a.ts`: why \n")
    assert frag_code(CodeRef(file="src/a.ts", component="auth", notes="n", relevance=1)) == "| `src/a.ts` | auth | n |\n"
    assert frag_snippet(Snippet(path="src/a.py", start_line=1, end_line=2, text="def f(x):\nreturn 1", score=1)) == (
        "1. `src/a.py` lines 1-2 (similarity 0.00) \n   `def f(x):`\n   `return 1`\n")
    assert frag_related(RelatedTask(id="t2", intent="- a list?", relevance=1)) == "- t2: - a list?\n"


def test_the_fragments_count_the_escapes_the_template_adds() -> None:
    from ctxgraph.compute.blocks import frag_code, frag_decision, frag_snippet
    from ctxgraph.compute.code_memory import Snippet
    from ctxgraph.compute.output import CodeRef, DecisionRef

    assert frag_decision(DecisionRef(id="d", decision="# x", relevance=1)).startswith("- \\# x — ")
    assert frag_code(CodeRef(file="a|b`c", component="x|y", notes="", relevance=1)) == "| `` a\\|b`c `` | x\\|y |  |\n"
    assert frag_snippet(Snippet(path="p", start_line=1, end_line=1, text="a ``b``", score=1)).endswith(
        "\n   ``` a ``b`` ```\n")


def test_a_snippet_line_is_a_code_span_with_a_safe_fence() -> None:
    from ctxgraph.compute.code_memory import Snippet
    from ctxgraph.compute.render import render

    snippet = Snippet(path="src/a.py", start_line=1, end_line=3, similarity=0.5, score=1,
                      text="def f(x):\nsee `g`\nlike ``nargs``")
    md = render(run(Candidates()).model_copy(update={"codebase_context": (snippet,)}))
    assert ("### Relevant Codebase Context\n1. `src/a.py` lines 1-3 (similarity 0.50)\n"
            "   `def f(x):`\n   `` see `g` ``\n   ``` like ``nargs`` ```\n") in md
