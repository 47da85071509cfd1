"""The pure rules of docs/decisions.md: likely conflicts, the merge of a
superseded decision, concurrent work's overlap."""

from __future__ import annotations

from itertools import permutations
from typing import Any

from ctxgraph.compute.concurrent import concurrent_work, expected_files
from ctxgraph.compute.conflicts import conflict_of, likely_conflicts, words
from ctxgraph.core.models import ConcurrentTask, KnowledgeItem
from ctxgraph.graph.handoff_batch import merge_knowledge


def decision(i: str, summary: str, tags: str, **extra: Any) -> KnowledgeItem:
    return KnowledgeItem(id=f"decision:{i}", kind="decision", summary=summary, tags=tuple(tags.split()),
                         status="active", **extra)


HS = decision("a", "Sign JWT with HS256", "jwt signing auth token hs256")
RS = decision("b", "Sign JWT with RS256", "jwt signing auth token rs256")


def test_the_conflict_rule() -> None:
    found = conflict_of(RS, HS)
    assert found is not None and (found.first_id, found.second_id) == (HS.id, RS.id)
    assert found.shared_tags == ("auth", "jwt", "signing", "token") and found.tag_similarity == round(4 / 6, 4)
    assert conflict_of(HS, RS.model_copy(update={"status": "superseded"})) is None  # not in force
    assert conflict_of(HS, decision("c", "Sign JWT with HS256!", "jwt signing auth token hs256 x")) is None  # same
    assert conflict_of(HS, decision("d", "Use JWT", "jwt auth")) is None  # 2 shared tags
    assert conflict_of(HS, decision("e", "Cache JWT keys", "jwt signing auth a b c d e f g")) is None  # 0.25
    gotcha = HS.model_copy(update={"id": "gotcha:x", "kind": "gotcha"})
    assert likely_conflicts([HS, RS, gotcha]) == [found]
    assert words("Keep it (in memory), not 'localStorage'/cookies.") == {
        "keep", "it", "in", "memory", "not", "localstorage", "cookies"}


def test_superseded_is_sticky_in_any_merge_order() -> None:
    def version(at: str, **extra: Any) -> dict[str, Any]:
        return {"id": "decision:a", "summary": "x", "status": "active", "tags": ["t"], "created_at": at,
                "updated_at": at, "content_hash": at, **extra}

    versions = [version("2026-01-01"), version("2026-02-01", status="superseded", valid_from="2026-01-01",
                                               valid_until="2026-02-01"),
                version("2026-03-01", replaces=["y"]), version("2026-01-15", valid_until="2026-04-01",
                                                             status="superseded")]
    merged = set()
    for order in permutations(versions):
        out: dict[str, Any] | None = None
        for v in order:
            out = merge_knowledge(out, v)
        assert out is not None
        merged.add(repr(sorted(out.items())))
    (only,) = merged
    assert "('status', 'superseded')" in only and "('valid_until', '2026-02-01')" in only
    assert "('replaces', ['y'])" in only and "('updated_at', '2026-03-01')" in only


def test_concurrent_overlap() -> None:
    others = [ConcurrentTask(id="t-1", intent="a", mentioned=("jwt.ts",)),
              ConcurrentTask(id="t-2", intent="b", delivered=("x.ts", "y.ts", "z.ts", "src/auth/jwt.ts")),
              ConcurrentTask(id="t-3", intent="c", delivered=("src/auth/jwt.ts",))]
    own = expected_files((), ("src/auth/jwt.ts", "src/app.ts"))
    assert [(w.task_id, w.files) for w in concurrent_work(own, others)] == [
        ("t-1", ("src/auth/jwt.ts",)), ("t-3", ("src/auth/jwt.ts",))]  # t-2: its 4th file is background
    assert concurrent_work(("src/auth/notjwt.ts",), others) == ()


def test_tags_on_many_decisions_only_stop_pairing(monkeypatch: Any) -> None:
    from ctxgraph.compute import conflicts

    monkeypatch.setattr(conflicts, "PAIRING_TAG_CAP", 2)
    crowd = [decision(str(i), f"Unrelated {i}", f"jwt auth other{i}") for i in range(3)]  # jwt, auth: capped
    found = likely_conflicts([HS, RS, *crowd])
    assert [(c.first_id, c.second_id) for c in found] == [(HS.id, RS.id)]  # via signing and token, 4 shared


def test_the_help_and_the_docs_state_the_rule_s_constants() -> None:
    from pathlib import Path

    from ctxgraph import cypher
    from ctxgraph.cli._conflicts import conflicts_command
    from ctxgraph.compute.conflicts import MIN_SHARED_TAGS, TAG_SIMILARITY_MIN, TEXT_NEAR_DUPLICATE

    help_text = " ".join((conflicts_command.help or "").split())
    assert f"at least {MIN_SHARED_TAGS} tags with a Jaccard similarity of their tags of at least " \
           f"{TAG_SIMILARITY_MIN}" in help_text and f"under {TEXT_NEAR_DUPLICATE}" in help_text
    page = " ".join((Path(__file__).parents[2] / "docs" / "decisions.md").read_text(encoding="utf-8").split())
    assert f"at least **{MIN_SHARED_TAGS}** tags" in page and f"at least **{TAG_SIMILARITY_MIN}**" in page
    assert f"under **{TEXT_NEAR_DUPLICATE}**" in page
    query = cypher.load_analyst("decision_conflicts")
    assert f"size(shared) >= {MIN_SHARED_TAGS}" in query and f"tag_similarity >= {TAG_SIMILARITY_MIN}" in query
    assert f"text_similarity < {TEXT_NEAR_DUPLICATE}" in query
