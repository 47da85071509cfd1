"""The pipeline ctxgraph loads tokenizes and tags as ``spacy.load`` does: its
tokenizer is built once, from the package's serialized one (no default one
first), and must come out byte for byte the same."""

from __future__ import annotations

import warnings

import pytest

from ctxgraph.signals._extract import DEFAULT_MODEL
from ctxgraph.signals._pipeline import _EXCLUDE, _EntryPointsByGroup, _import_spacy, _load_spacy

TEXT = ("Don't re-run the OAuth2 token refresh (src/auth/jwt.ts) on every /api route; e.g. cache "
        "JWTs for 5min, see https://example.com/docs#tokens and RFC-7519's U.S. notes :-)")


def test_the_tokenizer_and_tags_are_those_of_spacy_load() -> None:
    pipeline = _load_spacy(DEFAULT_MODEL)  # (spaCy's, not its snapshot: tests/unit/test_signals_snapshot.py)
    if pipeline.fallback:
        pytest.skip(f"{DEFAULT_MODEL} is not installed")
    spacy = _import_spacy()
    plain = spacy.load(DEFAULT_MODEL, exclude=list(_EXCLUDE))
    assert pipeline.nlp.tokenizer.to_bytes(exclude=["vocab"]) == plain.tokenizer.to_bytes(exclude=["vocab"])
    with pipeline.running():
        ours = [(t.text, t.tag_, t.is_stop, t.like_num) for t in pipeline.nlp(TEXT)]
    with warnings.catch_warnings():
        # spacy.load's lemmatizer, without the excluded attribute_ruler, warns
        # that it found no POS (W108); lemmas are not compared here.
        warnings.filterwarnings("ignore", message=r"\[W108\]", category=UserWarning)
        theirs = [(t.text, t.tag_, t.is_stop, t.like_num) for t in plain(TEXT)]
    assert ours == theirs


def test_grouped_entry_points_answer_as_the_installed_ones() -> None:
    from importlib.metadata import entry_points

    installed = entry_points()
    grouped = _EntryPointsByGroup(installed)
    groups = installed.groups
    assert groups, "no entry points installed: nothing was compared"
    for group in [*sorted(groups), "spacy_factories", "no such group"]:
        assert grouped.select(group=group) == tuple(installed.select(group=group))


def test_stop_words_are_bm25s_english_ones_without_importing_bm25s() -> None:
    import subprocess
    import sys

    code = ("import sys; from ctxgraph.signals._terms import _stop_words, terms; "
            "print(terms('The FileStorage of the shell_completion'), sorted(_stop_words()) == sorted(set(__import__("
            "'bm25s.stopwords', fromlist=['x']).STOPWORDS_EN)) if 'bm25s' not in sys.modules else 'imported')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "['file', 'storage', 'shell', 'completion', 'filestorage'] True"
