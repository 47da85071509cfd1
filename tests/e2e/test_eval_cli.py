"""`ctxgraph eval DIR` on the hand-made set tests/data/eval_tiny, through
click's CliRunner on the command itself (it is registered in the CLI group
separately).

The tiny set: 12 history tasks, an 8-file context map in the order
__init__, lexer, parser, printer, cache, cli, errors, util (all under
src/tiny/), and 4 queries; history handoffs also touched three files the map
no longer has, first named in this order: old_lexer, compat, formatting.

Hand-computed answers (the context map's rule: keyword in component +2, in the path
+1, domain in the notes +1; ties by path):

q-1 "Fix lexer crash on empty input ... the source was empty", gold [lexer]
    keywords lexer, crash, input, source; domains parsing, errors.
    lexer 2+1 = 3; parser 0+0+1+1 = 2 (its notes say "parsing errors").
    seed names [lexer, parser]                     -> 1, 1, 1
    all names the map first: lexer is 2nd          -> 1, 1, 1
q-2 "Speed up the printer cache ...", gold [printer, formatting]
    keywords printer, cache, node; domain performance.
    cache 3, printer 3 -> by path: [cache, printer] -> 1/2, 1/2, 1/2
    all: printer 4th, formatting 11th               -> 1/2, 1/2, 1
q-3 gold [docs/index.rst], not in the map        -> skipped
q-4 "Improve error messages ... line number ... error message", gold [errors, cli]
    keywords error, message, line, number; domain errors.
    errors 2+1 = 3; parser 1 (notes) -> [errors, parser] -> 1/2, 1/2, 1/2
    all: cli 6th, errors 7th                        -> 0, 1, 1

seed: recall@5 = recall@10 = recall = (1 + 1/2 + 1/2) / 3 = 2/3.
all: recall@5 = (1 + 1/2 + 0) / 3 = 1/2; recall@10 = (1 + 1/2 + 1) / 3 = 5/6;
     recall = 1.
seed tokens: each list is the 20-character heading plus two lines of 22-24
characters: 65, 66, 66 characters -> 17 tokens each.
all tokens: the whole listing is 1,253 characters -> 314.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ctxgraph.cli._eval import eval_command
from ctxgraph.errors import UnknownTaskError
from ctxgraph.evaluation.dataset import load_set
from ctxgraph.evaluation.runner import run_eval, systems_of
from ctxgraph.service import ContextService

TINY = Path(__file__).parents[1] / "data" / "eval_tiny"
METRICS = {"recall_at_5", "recall_at_10", "recall", "tokens", "max_tokens", "p50_ms", "p95_ms", "skipped",
           "stale_at_5"}


def invoke(*args: str) -> Result:
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2
    except TypeError:
        runner = CliRunner()
    return runner.invoke(eval_command, list(args), catch_exceptions=False)


def run_json(*args: str) -> dict[str, Any]:
    result = invoke(*args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return run_json(str(TINY))


def test_json_shape(report: dict[str, Any]) -> None:
    assert list(report) == ["set", "queries", "skipped", "systems", "tuning"]
    assert (report["set"], report["queries"], report["skipped"]) == ("eval_tiny", 4, 1)
    assert list(report["systems"]) == ["ctxgraph", "ctxgraph+tuned", "bm25", "seed", "all"]
    # 12 history tasks are too few to learn from: the tuned row keeps the weights
    assert [f["adopted"] for f in report["tuning"]] == [False] * len(report["tuning"])
    assert report["systems"]["ctxgraph+tuned"]["recall_at_5"] == report["systems"]["ctxgraph"]["recall_at_5"]
    for name, figures in report["systems"].items():
        assert set(figures) == METRICS, name
        assert figures["skipped"] == 1
        for key in ("recall_at_5", "recall_at_10", "recall"):
            assert 0.0 <= figures[key] <= 1.0
        assert figures["recall_at_5"] <= figures["recall_at_10"] <= figures["recall"]
        assert 0 < figures["tokens"] <= figures["max_tokens"]
        assert 0.0 <= figures["p50_ms"] <= figures["p95_ms"]


def test_seed_figures_match_the_hand_computation(report: dict[str, Any]) -> None:
    seed = report["systems"]["seed"]
    assert seed["recall_at_5"] == pytest.approx(2 / 3, abs=1e-4)
    assert seed["recall_at_10"] == pytest.approx(2 / 3, abs=1e-4)
    assert seed["recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert (seed["tokens"], seed["max_tokens"]) == (17.0, 17)


def test_all_figures_match_the_hand_computation(report: dict[str, Any]) -> None:
    everything = report["systems"]["all"]
    assert everything["recall_at_5"] == pytest.approx(1 / 2, abs=1e-4)
    assert everything["recall_at_10"] == pytest.approx(5 / 6, abs=1e-4)
    assert everything["recall"] == 1.0
    assert (everything["tokens"], everything["max_tokens"]) == (314.0, 314)


def test_bm25_names_at_most_ten_files_with_a_positive_score(report: dict[str, Any]) -> None:
    bm25 = report["systems"]["bm25"]
    # ten paths of at most 24 characters plus the heading stay under 80 tokens
    assert bm25["max_tokens"] <= 80
    assert bm25["recall"] > 0


def test_budget_goes_to_ctxgraph_and_cuts_the_baselines() -> None:
    report = run_json(str(TINY), "--budget", "200")
    # ctxgraph's limiter fits its Markdown to 200 tokens itself
    assert report["systems"]["ctxgraph"]["max_tokens"] <= 200
    # the seed row's lists (17 tokens) are not cut
    seed = report["systems"]["seed"]
    assert (seed["recall"], seed["tokens"]) == (pytest.approx(2 / 3, abs=1e-4), 17.0)
    # "all" (1,253 characters) keeps its leading whole lines within 800
    # characters: up to the t-05 line, 771 characters (t-06's 89 more would
    # make 860) -> 193 tokens. Every map file and the three history-only
    # files (named by t-01..t-03) are still there: same recall as uncut.
    everything = report["systems"]["all"]
    assert (everything["tokens"], everything["max_tokens"]) == (193.0, 193)
    assert everything["recall_at_5"] == pytest.approx(1 / 2, abs=1e-4)
    assert everything["recall_at_10"] == pytest.approx(5 / 6, abs=1e-4)
    assert everything["recall"] == 1.0


def test_budget_below_ctxgraph_frame_is_one_line_error() -> None:
    # the working memory alone needs more than 12 tokens: the service refuses (exit 6)
    line = one_line_error(invoke(str(TINY), "--budget", "12"), 6)
    assert "budget is 12" in line


def test_complexity_and_limit_queries() -> None:
    report = run_json(str(TINY), "--limit-queries", "2", "--complexity", "easy")
    assert (report["queries"], report["skipped"]) == (2, 0)
    # q-1 and q-2 only: seed (1 + 1/2) / 2
    assert report["systems"]["seed"]["recall"] == pytest.approx(3 / 4, abs=1e-4)


def test_text_output_is_a_table() -> None:
    result = invoke(str(TINY))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("set: eval_tiny   queries: 4   skipped: 1")
    header = lines[2].split()
    assert header == ["system", "recall@5", "recall@10", "recall", "stale@5", "tokens", "max_tokens", "p50_ms",
                      "p95_ms"]
    rows = {line.split()[0]: line.split() for line in lines[3:]}
    assert list(rows) == list(systems_of(memory=False, tuned=True))
    assert rows["seed"][1:6] == ["0.667", "0.667", "0.667", "0.000", "17"]
    assert rows["all"][1:6] == ["0.500", "0.833", "1.000", "0.000", "314"]


def test_query_tasks_are_never_stored(tmp_path: Path) -> None:
    eval_set = load_set(TINY)
    with ContextService.open(tmp_path / "g.db") as svc:
        report = run_eval(svc, eval_set, keep_contexts=True)
        assert len(svc.list_tasks()) == 12
        for query in eval_set.queries:
            with pytest.raises(UnknownTaskError):
                svc.get_task(query.id)
        assert all(t.status.value == "completed" for t in svc.list_tasks())
    assert sorted(report.contexts) == ["q-1", "q-2", "q-4"]
    assert all(text.startswith("## Context (Computed)") for text in report.contexts.values())
    assert report.as_dict()["systems"]["seed"]["recall"] == pytest.approx(2 / 3, abs=1e-4)


# ------------------------------------------------------------------ errors


def one_line_error(result: Result, code: int) -> str:
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ctxgraph: error: ")
    return lines[0]


def test_missing_folder(tmp_path: Path) -> None:
    line = one_line_error(invoke(str(tmp_path / "nope")), 2)
    assert line.endswith("nope: no such folder")


def test_missing_files_in_the_folder(tmp_path: Path) -> None:
    (tmp_path / "history.jsonl").write_text((TINY / "history.jsonl").read_text())
    line = one_line_error(invoke(str(tmp_path)), 2)
    assert line.endswith("not an evaluation set: missing context_map.jsonl, queries.jsonl")


def test_malformed_jsonl_names_the_line(tmp_path: Path) -> None:
    for name in ("context_map.jsonl", "queries.jsonl"):
        (tmp_path / name).write_text((TINY / name).read_text())
    history = (TINY / "history.jsonl").read_text().splitlines()
    history[4] = history[4][:-3]  # line 5 cut short
    (tmp_path / "history.jsonl").write_text("\n".join(history) + "\n")
    line = one_line_error(invoke(str(tmp_path)), 2)
    assert "history.jsonl: invalid document: line 5: not valid JSON" in line

    history[4] = json.dumps({"id": "t-05", "handoff": {"files_modified": [{"nope": 1}]}})
    (tmp_path / "history.jsonl").write_text("\n".join(history) + "\n")
    line = one_line_error(invoke(str(tmp_path)), 2)
    assert "line 5: handoff.files_modified[0].path: Field required" in line


def test_bad_timestamp_in_history_is_one_line(tmp_path: Path) -> None:
    for name in ("context_map.jsonl", "queries.jsonl"):
        (tmp_path / name).write_text((TINY / name).read_text())
    history = (TINY / "history.jsonl").read_text().splitlines()
    row = json.loads(history[2])
    row["completed_at"] = "yesterday"
    history[2] = json.dumps(row)
    (tmp_path / "history.jsonl").write_text("\n".join(history) + "\n")
    line = one_line_error(invoke(str(tmp_path)), 2)
    assert "history.jsonl: invalid document: line 3: completed_at: " in line and "'yesterday'" in line
