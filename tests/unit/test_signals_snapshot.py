"""The signals' snapshot (``ctxgraph/signals/_tagger.py``): spaCy's tokenizer
and tagger without spaCy in the process. Its tokens, tags and signals are
spaCy's on texts that reach every rule (special cases across tokens,
whitespace runs, URLs, norms from the lexeme table, reserved symbols);
the first load writes the snapshot, later ones use it, a damaged one is
replaced.
``scripts/signals_snapshot_check.py`` compares them on the evaluation sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgraph.signals import _pipeline, _tagger
from ctxgraph.signals._extract import DEFAULT_MODEL, SignalExtractor

TEXTS = [
    "Don't re-run the OAuth2 token refresh (src/auth/jwt.ts) on every /api route; e.g. cache "
    "JWTs for 5min, see https://example.com/docs#tokens and RFC-7519's U.S. notes :-)",
    "Recognise cygwin platform; preserve the behaviour of `prompt_suffix`\n\n  - X. and _optparse",
    "Added __version__ attribute (a.m.) and (U.S.)\tfoo  bar   baz\r\nit's 5pm, I'm done:)",
    "  leading spaces, trailing ones  ",
    "Fix Zsh completions with colons (#2846)\n\nCo-authored-by: Andreas <andreas@backx.org>",
    "ünïcödé — “quotes” … 10,000$ and €5; C++/C# vs. node.js@v18 — 'single' \"double\" 🚀deploy 👍",
    "",
    " ",
    "\n",
]


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory: pytest.TempPathFactory) -> tuple[_pipeline.Pipeline, _pipeline.Pipeline]:
    spacy_pipeline = _pipeline._load_spacy(DEFAULT_MODEL)
    if spacy_pipeline.fallback:
        pytest.skip(f"{DEFAULT_MODEL} is not installed")
    path = tmp_path_factory.mktemp("snapshot") / "model.snapshot"
    _tagger.export(spacy_pipeline.nlp, spacy_pipeline.tables(), path)
    return spacy_pipeline, _pipeline.Pipeline.from_snapshot(_tagger.Snapshot.load(path), DEFAULT_MODEL)


@pytest.mark.parametrize("text", TEXTS)
def test_tokens_tags_and_signals_are_spacys(pipelines: tuple[_pipeline.Pipeline, _pipeline.Pipeline],
                                            text: str) -> None:
    spacy_pipeline, snapshot = pipelines
    ours = snapshot.tagged([text])[0]
    assert ours == spacy_pipeline.tagged([text])[0]
    assert [(t.idx, len(t.text)) for t in spacy_pipeline.nlp(text)] == [(o, n) for o, n, _ in ours]
    ex = SignalExtractor()
    assert ex._signals(snapshot, text, ours, None) == ex._signals(spacy_pipeline, text, ours, None)
    assert snapshot.stop_words == spacy_pipeline.stop_words and snapshot.verbs == spacy_pipeline.verbs
    for word in ("tests", "apis", "statuses", "data", "jwts", "indices"):
        assert snapshot.noun_lemma(word) == spacy_pipeline.noun_lemma(word)


def test_texts_tagged_together_are_tagged_as_spacys_batch(
        pipelines: tuple[_pipeline.Pipeline, _pipeline.Pipeline]) -> None:
    spacy_pipeline, snapshot = pipelines
    texts = [*TEXTS, *TEXTS[::-1]] * 5
    assert snapshot.tagged(texts) == spacy_pipeline.tagged(texts)
    assert snapshot.snapshot is not None
    assert snapshot.snapshot.tag(texts, batch=3) == [snapshot.tagged([text])[0] for text in texts]


def test_hashes_are_spacys() -> None:
    strings = pytest.importorskip("spacy.strings")
    for text in ("", "a", "hello", "12345678", "123456789", "ünïcödé — x", "a" * 40):
        assert _tagger.hash_string(text) == strings.hash_string(text)


def test_the_first_load_writes_the_snapshot_and_later_loads_use_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(A process with the snapshot imports no spaCy: test_cli_imports.py.)"""
    if _tagger.snapshot_path(DEFAULT_MODEL) is None:
        pytest.skip(f"{DEFAULT_MODEL} is not installed")
    monkeypatch.setenv("CTXGRAPH_MODEL_CACHE", str(tmp_path))
    monkeypatch.delenv("CTXGRAPH_SIGNALS_SNAPSHOT", raising=False)
    text = ["Add JWT login to src/auth/login.ts: the tokens expire"]
    first = _pipeline._load(DEFAULT_MODEL)
    assert first.snapshot is None
    written = list((tmp_path / "signals").glob("*.snapshot"))
    assert len(written) == 1
    second = _pipeline._load(DEFAULT_MODEL)
    assert second.snapshot is not None and second.tagged(text) == first.tagged(text)
    # Switched off: spaCy.
    monkeypatch.setenv("CTXGRAPH_SIGNALS_SNAPSHOT", "0")
    assert _pipeline._load(DEFAULT_MODEL).snapshot is None
    monkeypatch.delenv("CTXGRAPH_SIGNALS_SNAPSHOT")
    # A damaged snapshot is not used: spaCy, and a good one written over it.
    written[0].write_bytes(b"not a snapshot")
    assert _pipeline._load(DEFAULT_MODEL).snapshot is None
    again = _pipeline._load(DEFAULT_MODEL)
    assert again.snapshot is not None and again.tagged(text) == first.tagged(text)


def test_compiled_programs_give_the_same_patterns_and_another_engines_are_compiled() -> None:
    import re

    from ctxgraph.signals import _tokenizer

    rules = {"prefix": r"^(?:\(|§|a(?P<x>b))", "suffix": r"(?<=[0-9])km$", "infix": r"[\u00e9-\u0fff]+|--",
             "token_match": None, "url_match": r"(?u)^https?://\S+$"}
    cache = _tokenizer.compiled_programs(rules)
    for name, text in rules.items():
        if text is None:
            continue
        loaded = _tokenizer._load_regex(text, cache["programs"][name])
        plain = re.compile(text)
        assert loaded is not plain  # from the program, not re's own cache
        assert (loaded.pattern, loaded.flags, loaded.groupindex) == (plain.pattern, plain.flags, plain.groupindex)
        for probe in ("ab(", "(x", "§1", "5km", "km", "aé--b", "https://x.org/a b", "https://x.org/a"):
            assert [m.span() for m in loaded.finditer(probe)] == [m.span() for m in plain.finditer(probe)]
    # A program that does not fit (another engine's, or damaged) is not used: the pattern is compiled.
    assert _tokenizer._load_regex("a+", (0, [1, 2, 3], 0, {}, ())).pattern == "a+"
    tokenizer = _tokenizer.RuleTokenizer({**rules, "faster_heuristics": True, "specials": {},
                                          "compiled": {**cache, "engine": "another"}})
    assert tokenizer("(ab 5km") == [("(", None, False), ("ab", None, True), ("5", None, False), ("km", None, False)]
