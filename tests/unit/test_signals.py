"""Signal extraction on the real spaCy pipeline (no mocks)."""

from __future__ import annotations

import threading
import uuid
import warnings

import pytest
from pydantic import ValidationError

from ctxgraph.signals import (
    DEFAULT_DOMAINS,
    SignalExtractor,
    SignalsFallbackWarning,
    TaskSignals,
    extract_signals,
)

JWT_TASK = "Add JWT validation to the login endpoint in src/auth/login.ts and reject expired tokens."


@pytest.fixture(scope="module")
def ex() -> SignalExtractor:
    return SignalExtractor()


# ------------------------------------------------------------------ the model


def test_task_signals_is_frozen_and_strict() -> None:
    sig = TaskSignals(keywords=("jwt",), domains=("auth",), files_mentioned=(), task_types=())
    with pytest.raises(ValidationError):
        sig.keywords = ("x",)
    with pytest.raises(ValidationError):
        TaskSignals(keywords=(), domains=(), files_mentioned=(), task_types=(), extra=1)  # type: ignore[call-arg]


# ------------------------------------------------------------------- keywords


def test_keywords_of_a_jwt_login_sentence(ex: SignalExtractor) -> None:
    sig = ex.extract(JWT_TASK)
    assert sig.keywords == ("jwt", "validation", "login", "endpoint", "auth", "login.ts", "token")
    assert sig.domains == ("auth", "api")
    assert sig.files_mentioned == ("src/auth/login.ts",)
    assert sig.task_types == ("feature",)


def test_keywords_method_matches_extract(ex: SignalExtractor) -> None:
    assert ex.keywords(JWT_TASK) == list(ex.extract(JWT_TASK).keywords)


def test_verbs_and_adjectives_are_not_keywords(ex: SignalExtractor) -> None:
    keywords = ex.keywords(JWT_TASK)
    for word in ("add", "reject", "expired", "expire"):
        assert word not in keywords


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Verify the JWT before the handler runs", "jwt"),
        ("Mount the middleware in app.ts", "app.ts"),
        ("Ask for it with click.prompt in the command", "click.prompt"),
        ("Rename parse_token in the helpers", "parse_token"),
        ("The ContextService computes context", "contextservice"),
        ("Wrap every handler with requireAuth", "requireauth"),
        ("Call the `verify` helper first", "verify"),
        ("Reuse verify() from the helper module", "verify"),
        ("Support oauth2 providers", "oauth2"),
        ("Document the public APIs", "api"),
        ("Apply @pytest.fixture to the store", "pytest.fixture"),
    ],
)
def test_technical_tokens_are_kept(ex: SignalExtractor, text: str, expected: str) -> None:
    assert expected in ex.keywords(text)


def test_imperatives_read_as_nouns_are_not_keywords(ex: SignalExtractor) -> None:
    keywords = ex.keywords("Cache the keys.\nRefactor the store; Document the API")
    assert keywords == ["key", "store", "api"]
    assert ex.keywords("The cache keeps the keys")[:2] == ["cache", "key"]


def test_stopwords_punctuation_and_numbers_are_out(ex: SignalExtractor) -> None:
    keywords = ex.keywords("The cache of the server should be at least 100 MB, and it's all for them!")
    assert "cache" in keywords and "server" in keywords
    for word in ("the", "of", "and", "it", "all", "for", "them", "100", "!", ",", "'s"):
        assert word not in keywords
    assert all(len(k) >= 2 and any(c.isalpha() for c in k) for k in keywords)


def test_plurals_are_lemmatized(ex: SignalExtractor) -> None:
    keywords = ex.keywords("Fix the flaky tests for user sessions and stale caches.")
    assert keywords[:4] == ["test", "user", "session", "cache"]
    assert "tests" not in keywords and "sessions" not in keywords


def test_keywords_are_lowercase_deduplicated_in_order(ex: SignalExtractor) -> None:
    keywords = ex.keywords("Token storage: a Token, the TOKEN table and tokens in the Storage.")
    assert keywords == ["token", "storage", "table"]


def test_path_parts_become_keywords(ex: SignalExtractor) -> None:
    keywords = ex.keywords("Look at src/auth/login.ts")
    assert keywords[:3] == ["auth", "login.ts", "login"]
    assert "src" not in keywords


def test_urls_give_no_keywords_or_files(ex: SignalExtractor) -> None:
    sig = ex.extract("Read https://example.com/guide/setup.py and mail dev@example.com about it")
    assert sig.files_mentioned == ()
    assert not any("example" in k or "setup" in k for k in sig.keywords)


# -------------------------------------------------------------------- domains


@pytest.mark.parametrize(
    ("text", "domain"),
    [
        ("Document the new endpoint for orders", "api"),
        ("Store the refresh token safely", "auth"),
        ("Write the migration for the orders table", "database"),
        ("Align the button with the rest of the toolbar", "ui"),
        ("Raise the coverage of the billing code", "testing"),
    ],
)
def test_seed_domains(ex: SignalExtractor, text: str, domain: str) -> None:
    assert domain in ex.extract(text).domains


def test_seed_mapping_is_exactly_the_seeds() -> None:
    assert DEFAULT_DOMAINS["api"] == ("endpoint", "rest", "graphql", "route", "request")
    assert DEFAULT_DOMAINS["auth"] == ("login", "token", "jwt", "session", "password")
    assert DEFAULT_DOMAINS["database"] == ("query", "schema", "migration", "model", "record")
    assert DEFAULT_DOMAINS["ui"] == ("component", "button", "form", "page", "style")
    assert DEFAULT_DOMAINS["testing"] == ("test", "spec", "mock", "assert", "coverage")
    assert len(DEFAULT_DOMAINS) > 5
    for name, triggers in DEFAULT_DOMAINS.items():
        assert name == name.lower() and triggers
        assert all(t == t.lower().strip() and " " not in t for t in triggers)


def test_domain_name_as_keyword_turns_it_on(ex: SignalExtractor) -> None:
    assert "security" in ex.extract("Review the security of the upload handler").domains


def test_domains_from_compound_parts(ex: SignalExtractor) -> None:
    # login.ts -> login (auth); user_sessions -> session (auth); LoginForm -> form (ui)
    assert ex.extract("Open login.ts").domains == ("auth",)
    assert "auth" in ex.extract("Drop the user_sessions table").domains
    assert "ui" in ex.extract("Restyle LoginForm").domains


def test_domains_are_ordered_by_first_appearance(ex: SignalExtractor) -> None:
    assert ex.extract("The button calls the endpoint with a token").domains == ("ui", "api", "auth")


def test_verbs_do_not_trigger_domains(ex: SignalExtractor) -> None:
    assert "testing" not in ex.extract("We mock nothing here and query nobody").domains


def test_custom_mapping_replaces_the_default() -> None:
    custom = SignalExtractor(domains={"Billing": ["Invoice", " payment "], "auth": ["badge"]})
    assert custom.domains == {"billing": ("invoice", "payment"), "auth": ("badge",)}
    sig = custom.extract("Send the invoice after the login with a badge")
    assert sig.domains == ("billing", "auth")
    assert custom.extract("Check the JWT token").domains == ()


# ---------------------------------------------------------------------- files


def test_files_mentioned(ex: SignalExtractor) -> None:
    text = (
        "Touch src/auth/login.ts, core.py and docs/index.md:10-20; also ./a/b, "
        "pkg/util.go:42 and `tests/unit/test_x.py`. See https://github.com/o/r/blob/main/x.py, "
        "www.example.com/a.py, Node.js, e.g. v1.2.3 or read/write, then core.py again."
    )
    assert ex.extract(text).files_mentioned == (
        "src/auth/login.ts", "core.py", "docs/index.md", "a/b", "pkg/util.go", "tests/unit/test_x.py",
    )


# ----------------------------------------------------------------- task types


@pytest.mark.parametrize(
    ("text", "types"),
    [
        ("Fix the crash when the token expires", ("bugfix",)),
        ("Implement a refresh endpoint", ("feature",)),
        ("Rename the helper module", ("refactor",)),
        ("Move the settings loader and clean up", ("refactor",)),
        ("Raise test coverage for the store", ("test",)),
        ("Update the documentation of the CLI", ("docs",)),
        ("Add tests for the bug in the parser", ("feature", "test", "bugfix")),
        ("The parser handles unicode", ()),
        ("Look at src/fix/test_add.py", ()),
    ],
)
def test_task_types_are_inferred(ex: SignalExtractor, text: str, types: tuple[str, ...]) -> None:
    assert ex.extract(text).task_types == types


def test_given_task_type_wins(ex: SignalExtractor) -> None:
    assert ex.extract("Fix the login bug", task_type="Feature ").task_types == ("feature",)
    assert ex.extract("Fix the login bug", task_type="").task_types == ("bugfix",)


# ------------------------------------------------------------- normalize_tag


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("auth", "auth"), ("API", "api"), ("jwt", "jwt"), ("login.ts", "login.ts"),
        (" Tests ", "test"), ("sessions", "session"), ("APIs", "api"), ("status", "status"),
        ("class", "class"), ("`JWT`", "jwt"), ("error   handling", "error handling"),
        ("snake_case", "snake_case"), ("data", "data"),
    ],
)
def test_normalize_tag(ex: SignalExtractor, tag: str, expected: str) -> None:
    assert ex.normalize_tag(tag) == expected


def test_keywords_are_normalized_tags(ex: SignalExtractor) -> None:
    for keyword in ex.keywords(JWT_TASK + " Sessions and tests of the APIs."):
        assert ex.normalize_tag(keyword) == keyword


# ----------------------------------------------------------- batch, determinism


def test_extract_many_equals_extract(ex: SignalExtractor) -> None:
    texts = [JWT_TASK, "Raise test coverage", "", "Fix core.py", JWT_TASK]
    fresh = SignalExtractor()
    assert fresh.extract_many(texts) == [ex.extract(t) for t in texts]
    assert fresh.extract_many(texts, ["bugfix", None, None, None, "docs"])[0].task_types == ("bugfix",)
    with pytest.raises(ValueError):
        fresh.extract_many(texts, ["bugfix"])


def test_empty_text(ex: SignalExtractor) -> None:
    assert ex.extract("") == TaskSignals(keywords=(), domains=(), files_mentioned=(), task_types=())


def test_deterministic_across_extractors_and_threads() -> None:
    texts = [f"{JWT_TASK} Case {i}: the ContextService caches tokens in core.py." for i in range(20)]
    expected = [SignalExtractor().extract(t) for t in texts]
    results: list[list[TaskSignals]] = []

    def work() -> None:
        results.append([SignalExtractor().extract(t) for t in texts])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_module_level_convenience() -> None:
    assert extract_signals(JWT_TASK) == SignalExtractor().extract(JWT_TASK)
    assert extract_signals("Fix it", task_type="bugfix").task_types == ("bugfix",)


def test_pipeline_is_loaded_lazily_once_with_only_needed_pipes(ex: SignalExtractor) -> None:
    from ctxgraph.signals._pipeline import _load_spacy, get_pipeline

    pipeline = get_pipeline(ex.model)
    assert get_pipeline(ex.model) is pipeline is get_pipeline(SignalExtractor().model)
    assert not pipeline.fallback and not ex.fallback
    # spaCy's pipeline (a process with the snapshot has no nlp: test_signals_snapshot.py)
    nlp = pipeline.nlp if pipeline.snapshot is None else _load_spacy(ex.model).nlp
    assert nlp.pipe_names == ["tok2vec", "tagger"]
    for name in ("parser", "ner", "senter"):
        assert name not in nlp.component_names


def test_blas_threads_are_restored_after_a_run(ex: SignalExtractor) -> None:
    from ctxgraph.signals import _blas

    blas = _blas.find()
    if blas is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS this process can reach")
    before = blas.threads()
    with blas.single():
        assert blas.threads() == 1
        with blas.single():
            assert blas.threads() == 1
        assert blas.threads() == 1
    assert blas.threads() == before
    ex.extract_many([f"{JWT_TASK} {i}" for i in range(3)])
    assert blas.threads() == before


# ------------------------------------------------------------------ fallback


def test_fallback_to_blank_pipeline_warns_once() -> None:
    bogus = f"no_such_pipeline_{uuid.uuid4().hex}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = SignalExtractor(model=bogus)
        sig = first.extract("Add JWT validation to the login endpoint in src/auth/login.ts")
        second = SignalExtractor(model=bogus)
        again = second.extract("Write the migration and tests for the sessions table")
        second.normalize_tag("Tests")
    fallback = [w for w in caught if issubclass(w.category, SignalsFallbackWarning)]
    assert len(fallback) == 1
    assert bogus in str(fallback[0].message)
    assert first.fallback and second.fallback
    assert {"jwt", "validation", "login", "endpoint", "login.ts"} <= set(sig.keywords)
    assert "add" not in sig.keywords
    assert sig.domains[:2] == ("auth", "api")
    assert sig.files_mentioned == ("src/auth/login.ts",)
    assert {"migration", "test", "session", "table"} <= set(again.keywords)
    assert "the" not in again.keywords and "write" not in again.keywords
    assert second.normalize_tag("Tests") == "test"
