"""The evaluation protocol's arithmetic (ctxgraph.evaluation.protocol), on
hand-made inputs whose right answers are worked out in the comments."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ctxgraph.core.models import FileEntry
from ctxgraph.core.tokens import estimate_tokens
from ctxgraph.errors import InvalidDocumentError
from ctxgraph.evaluation.baselines import Bm25Files, file_documents, render_all, render_paths, tokenize
from ctxgraph.evaluation.dataset import HistoryLine, load_set
from ctxgraph.evaluation.protocol import (
    QueryOutcome,
    distinct,
    extract_paths,
    first_position,
    is_skipped,
    percentile,
    recall_at,
    summarize,
    truncate_to_budget,
)

TINY = Path(__file__).parents[1] / "data" / "eval_tiny"

A, B, C, D, E, F = (f"src/p/{n}.py" for n in "abcdef")


# ---------------------------------------------------------------- recall


def test_recall_at_k_counts_distinct_files_named() -> None:
    # Named A, A, B, C, A, D: the distinct files in order are A, B, C, D.
    named = [A, A, B, C, A, D]
    gold = [C, D, E]
    # first 2 distinct: A, B -> no gold file
    assert recall_at(named, gold, 2) == 0.0
    # first 3 distinct: A, B, C -> 1 of 3 gold
    assert recall_at(named, gold, 3) == pytest.approx(1 / 3)
    # first 5 distinct (only 4 exist): C and D -> 2 of 3; E is never named
    assert recall_at(named, gold, 5) == pytest.approx(2 / 3)
    assert recall_at(named, gold) == pytest.approx(2 / 3)


def test_recall_repeats_do_not_use_up_the_first_k() -> None:
    # Without dedupe the first 5 names would be A, A, A, A, A and miss B.
    assert recall_at([A, A, A, A, A, B], [B], 5) == 1.0
    assert recall_at([A, A, A, A, A, B], [B], 1) == 0.0


def test_recall_gold_given_twice_counts_once() -> None:
    assert recall_at([A], [A, A, B], 5) == 0.5


def test_recall_nothing_named_or_no_gold() -> None:
    assert recall_at([], [A], 5) == 0.0
    assert recall_at([A], [], 5) == 0.0


def test_distinct_keeps_first_occurrence_order() -> None:
    assert distinct([B, A, B, C, A]) == [B, A, C]


# --------------------------------------------------------------- skipped


def test_query_is_skipped_only_when_no_gold_file_is_in_the_map() -> None:
    context_map = [A, B]
    assert is_skipped(["docs/index.rst"], context_map)
    assert is_skipped(["docs/index.rst", C], context_map)
    assert not is_skipped(["docs/index.rst", B], context_map)  # partly in the map: scored
    assert not is_skipped([A], context_map)


# ------------------------------------------------------------ percentile


def test_percentile_nearest_rank() -> None:
    # sorted(values)[ceil(p/100 * n) - 1]
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.0       # ceil(2.0) = 2 -> 2nd smallest
    assert percentile([4.0, 1.0, 3.0, 2.0], 95) == 4.0       # ceil(3.8) = 4 -> the largest
    assert percentile([5.0, 1.0, 3.0], 50) == 3.0            # ceil(1.5) = 2 -> the median
    values = [float(v) for v in range(1, 21)]                # 1..20
    assert percentile(values, 95) == 19.0                    # ceil(19.0) = 19
    assert percentile(values, 50) == 10.0                    # ceil(10.0) = 10
    values.append(21.0)                                      # 21 values
    assert percentile(values, 95) == 20.0                    # ceil(19.95) = 20
    assert percentile([7.5], 50) == percentile([7.5], 95) == 7.5
    assert percentile([], 50) == 0.0


def test_percentile_refuses_out_of_range() -> None:
    with pytest.raises(ValueError):
        percentile([1.0], 0)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


# ------------------------------------------------------- path extraction


def test_paths_in_order_of_first_appearance() -> None:
    text = f"see `{C}` then {A}, again `{C}`; and {B}."
    assert extract_paths(text, [A, B, C, D]) == [C, A, B]


def test_order_follows_the_text_not_the_known_list() -> None:
    text = f"| `{B}` |\n| `{A}` |\n"
    assert extract_paths(text, [A, B]) == [B, A]
    assert extract_paths(text, [B, A, A]) == [B, A]


def test_only_whole_paths_count() -> None:
    text = "lib/src/p/a.py and src/p/a.py.orig and src/p/a.pyc and src/p/a.py/x and xsrc/p/a.py"
    assert first_position(text, A) is None
    assert extract_paths(text, [A]) == []
    # A sentence-ending dot, a backtick, a colon, a comma or a bracket close a path.
    for text in (f"edit {A}.", f"`{A}`", f"{A}:10", f"({A}, x)", f"{A}"):
        assert extract_paths(text, [A]) == [A], text


def test_a_path_inside_a_longer_known_path_is_not_named() -> None:
    short, long = "p/a.py", "src/p/a.py"
    text = f"first {long} later {short}"
    # `short` is named only where it stands alone, after `long`.
    assert extract_paths(text, [short, long]) == [long, short]
    assert first_position(text, short) == text.index(" later ") + len(" later ")
    assert extract_paths(f"only {long}", [short, long]) == [long]


# ---------------------------------------------------------------- budget


def test_truncate_to_budget_keeps_whole_leading_lines() -> None:
    text = "aaaa\n" * 10  # 50 characters, 13 tokens
    assert truncate_to_budget(text, None) == text
    assert truncate_to_budget(text, 13) == text
    # 10 tokens allow 40 characters: 8 whole lines of 5
    assert truncate_to_budget(text, 10) == "aaaa\n" * 8
    assert truncate_to_budget(text, 1) == ""  # one line is 2 tokens
    cut = truncate_to_budget("line one\nline two\n" * 30, 17)
    assert estimate_tokens(cut) <= 17 and cut.endswith("\n")


# ------------------------------------------------------------- summarize


def test_summarize_means_max_and_percentiles() -> None:
    outcomes = [
        # recall@5 1/2, recall@10 1/2, recall 1 (B is the 11th distinct file)
        QueryOutcome("q1", (A, "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", B), (A, B), 100, 10.0),
        # nothing named: all 0
        QueryOutcome("q2", (), (C,), 20, 30.0),
        # C then C again: 1 everywhere
        QueryOutcome("q3", (C, C, D), (C,), 60, 20.0),
    ]
    m = summarize(outcomes, skipped=2)
    assert m.recall_at_5 == pytest.approx((0.5 + 0 + 1) / 3)
    assert m.recall_at_10 == pytest.approx((0.5 + 0 + 1) / 3)
    assert m.recall == pytest.approx((1 + 0 + 1) / 3)
    assert m.tokens == pytest.approx(60.0)
    assert m.max_tokens == 100
    assert m.p50_ms == 20.0   # ceil(1.5) = 2nd of 10, 20, 30
    assert m.p95_ms == 30.0   # ceil(2.85) = 3rd
    assert m.skipped == 2
    assert set(m.as_dict()) == {"recall_at_5", "recall_at_10", "recall", "tokens", "max_tokens",
                                "p50_ms", "p95_ms", "skipped", "stale_at_5"}


def test_summarize_no_scored_queries() -> None:
    m = summarize([], skipped=3)
    assert (m.recall_at_5, m.recall, m.tokens, m.max_tokens, m.p95_ms, m.skipped) == (0.0, 0.0, 0.0, 0, 0.0, 3)


# ---------------------------------------------------------- the tiny set


def test_tiny_set_loads() -> None:
    s = load_set(TINY)
    assert s.name == "eval_tiny"
    assert (len(s.history), len(s.files), len(s.queries)) == (12, 8, 4)
    # context-map files first (map order), then history-only files by first appearance
    assert s.known_paths[8:] == ["src/tiny/old_lexer.py", "src/tiny/compat.py", "src/tiny/formatting.py"]
    assert [q.id for q in s.queries if is_skipped(q.gold_files, s.map_paths)] == ["q-3"]
    assert len(load_set(TINY, limit_queries=2).queries) == 2


def test_history_line_gives_a_handoff_document() -> None:
    line = HistoryLine.model_validate({
        "id": "t-1", "name": "Fix it", "objective": "Fix it\n\nmore", "completed_at": "2024-01-02T03:04:05+02:00",
        "handoff": {"summary": "Fix it", "files_modified": [{"path": "./src/a.py"}, {"path": "src/a.py"}]},
    })
    assert line.handoff_doc() == {"task_id": "t-1", "summary": "Fix it", "success": True,
                                  "completed_at": "2024-01-02T01:04:05Z",
                                  "files_modified": [{"path": "src/a.py"}]}
    assert line.task().status.value == "pending"  # the handoff completes it


def test_malformed_lines_name_the_line(tmp_path: Path) -> None:
    for name in ("history.jsonl", "context_map.jsonl", "queries.jsonl"):
        (tmp_path / name).write_text((TINY / name).read_text())
    lines = (TINY / "queries.jsonl").read_text().splitlines()
    (tmp_path / "queries.jsonl").write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    with pytest.raises(InvalidDocumentError, match=r"queries\.jsonl: invalid document: line 2: not valid JSON"):
        load_set(tmp_path)
    (tmp_path / "queries.jsonl").write_text(lines[0] + "\n" + '{"id": "q-9", "gold_files": []}\n')
    with pytest.raises(InvalidDocumentError, match=r"line 2: gold_files: "):
        load_set(tmp_path)


# ------------------------------------------------------------- baselines


def test_render_paths_and_its_tokens() -> None:
    text = render_paths(["src/tiny/lexer.py", "src/tiny/parser.py"])
    assert text == "### Code References\n- `src/tiny/lexer.py`\n- `src/tiny/parser.py`\n"
    assert estimate_tokens(text) == math.ceil((20 + 22 + 23) / 4) == 17
    assert render_paths([]) == "### Code References\nNo files found.\n"


def test_render_all_names_map_files_then_history() -> None:
    s = load_set(TINY)
    text = render_all(s.files, s.history)
    assert extract_paths(text, s.known_paths) == [*s.map_paths, "src/tiny/old_lexer.py", "src/tiny/compat.py",
                                                  "src/tiny/formatting.py"]
    assert "- t-03: Add output formatting — `src/tiny/formatting.py`, `src/tiny/printer.py`\n" in text


def test_bm25_tokens_and_documents() -> None:
    assert tokenize(["Fix the shell_completion.py for Zsh"]) == [["fix", "shell", "completion", "py", "zsh"]]
    files = [FileEntry(path="src/a.py", component="a", notes="alpha"), FileEntry(path="src/b.py", component="b")]
    history = [HistoryLine.model_validate({"id": "t", "name": "Tune beta",
                                           "handoff": {"files_modified": [{"path": "src/b.py"}]}})]
    assert file_documents(files, history) == ["src/a.py\na\nalpha", "src/b.py\nb\n\nTune beta"]
    ranker = Bm25Files(files, history)
    assert ranker.rank("beta tuning") == ["src/b.py"]
    assert ranker.rank("alpha") == ["src/a.py"]
    assert ranker.rank("the") == []          # only stop words: nothing scores
    assert ranker.rank("gamma") == []        # unknown words: nothing scores


def test_stale_share_counts_the_first_five_not_at_the_snapshot() -> None:
    from ctxgraph.evaluation.protocol import stale_share

    named = ["a.py", "gone.py", "a.py", "b.py", "old.py", "c.py", "late_gone.py"]
    assert stale_share(named, {"a.py", "b.py", "c.py"}) == pytest.approx(2 / 5)
    assert stale_share([], {"a.py"}) == 0.0
