"""What a revert's gotcha says (ctxgraph.sources.reverts)."""

from __future__ import annotations

import pytest

from ctxgraph.signals import TaskSignals
from ctxgraph.sources.reverts import revert_id, revert_item, revert_text, reverted_commit, reverted_subject, why


@pytest.mark.parametrize(("subject", "reverted"), [
    ('Revert "Use the new cache"', "Use the new cache"),
    ("Revert 'Use the new cache'", "Use the new cache"),
    ("revert: use the new cache", "use the new cache"),
    ("Revert(core): drop py3.8", "drop py3.8"),
    ("Revert 1a2b3c4d", None),
    ("Revert commit 1a2b3c4d5e6f", None),
    ("Reverting the cache", None),
])
def test_the_subject_says_what_was_reverted(subject: str, reverted: str | None) -> None:
    assert reverted_subject(subject) == reverted


def test_why_is_the_body_without_gits_sentence() -> None:
    sha = "e0771a94e5dab7ff815a051fac811859d1a7d1f5"
    assert why(f'Revert "X"\n\nThis reverts commit {sha}.') == ""
    assert why(f'Revert "X"\n\nThis reverts commit {sha}.\n\nIt broke\nthe session tests.') == (
        "It broke the session tests.")
    assert why(f"Revert 'X'\n\nThis reverts commit {sha}, reversing\nchanges made to {sha}.") == ""


def test_the_gotcha_names_both_commits_and_its_file() -> None:
    text = revert_text("Use the new cache", "e0771a94e5aa", "f620bd7d6c11", "Revert\n\nIt broke sessions.")
    assert text == 'Reverted: "Use the new cache" (c-e0771a94e5, reverted by c-f620bd7d6c): It broke sessions.'
    assert revert_text("X", "", "f620bd7d6c11", "Revert X") == 'Reverted: "X" (reverted by c-f620bd7d6c)'
    item = revert_item("F620BD7D6C11", text, [("D", "src/cache.py"), ("M", "src/auth/session_store.py")],
                       TaskSignals(keywords=("cache",), domains=("performance",)), str.lower, "2024-01-01T00:00:00Z")
    assert (item.id, item.scope, item.location, item.severity.value) == (
        revert_id("f620bd7d6c11"), "path", "src/auth/session_store.py", "medium")
    assert item.tags == ("cache", "performance", "auth", "session", "store", "session_store")
    gone = revert_item("f620bd7d6c11", text, [("D", "src/cache.py")], TaskSignals(), str.lower, "2024-01-01T00:00:00Z")
    assert (gone.scope, gone.location) == ("global", None)


def test_a_revert_of_a_revert_and_a_revert_by_sha() -> None:
    assert reverted_commit("Revert 60ef759") == "60ef759"
    assert reverted_commit("Revert commit 60EF759D0E") == "60ef759d0e"
    assert reverted_commit('Revert "Move fcntl"') == ""
    text = revert_text('Revert "Merge Stable"', "8bc9127107aa", "e252437313bb", "x")
    assert text == 'Reverted the revert of "Merge Stable" (c-8bc9127107, reverted by c-e252437313)'
