"""The pipeline's ``tok2vec`` and ``tagger`` as numpy, from exported weights.

What ``SignalExtractor`` uses of spaCy is the tokenizer, the tagger's
fine-grained tags and a few tables. Importing spaCy (with thinc) and loading
its pipeline cost ~600 ms of CPU a process — most of a ``ctxgraph task
add``. So once spaCy has loaded a pipeline, :func:`export` writes what runs
on text into the model cache: the tokenizer's rules (``_tokenizer``), the
tagger's network (the embedding tables, maxout and layer-norm weights of
``tok2vec``, the softmax of ``tagger``) and the tables (lexeme norms, stop
words, noun lemmas, verbs). A later process loads that (:class:`Snapshot`,
~25 ms of CPU) instead of spaCy and computes the same tags, 64 texts a
pass as ``nlp.pipe`` does.

The network is the one spaCy 3.8's ``en_core_web_*`` pipelines describe
(``spacy.Tok2Vec.v2`` with ``MultiHashEmbed.v2`` and
``MaxoutWindowEncoder.v2``, ``spacy.Tagger.v2``), done as thinc does it:

- features per token: the 64-bit ids (spaCy's ``StringStore.add``: a
  reserved symbol's id, else MurmurHash64A, seed 1, of the UTF-8 string) of
  its norm (a special case's, else the lexeme table's, else spaCy's base
  norms, else lower case), first character, last three characters and
  shape, whether a space follows, whether it is whitespace;
- each feature hashed again (thinc's 128-bit MurmurHash3 of the 8 bytes,
  the layer's seed) to four rows of its table, summed (``HashEmbed``);
- the six concatenated, maxout (3 pieces) and layer norm;
- four residual blocks of window-1 maxout and layer norm, over the texts'
  tokens in one array with four zero rows before, between and after them
  (``with_array(pad=4)``);
- the tagger's linear layer; the tag is the highest score.

An architecture the export does not recognise is not exported (spaCy keeps
running). The snapshot's file name holds a fingerprint of the pipeline
package's files, spaCy's, Python's and numpy's versions and this module's
``VERSION``, so another pipeline or a changed export makes a new one.
``scripts/signals_snapshot_check.py`` compares it with spaCy on a folder of
task texts.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ctxgraph.files import atomic_write, cache_root
from ctxgraph.signals._tokenizer import RuleTokenizer, Token, export_rules

#: Bump when the exported data or its use changes.
VERSION = 4
_M64 = 0xC6A4A7935BD1E995
_MASK64 = (1 << 64) - 1
_MAX_HASHES = 200_000
_FEATURES = ("NORM", "PREFIX", "SUFFIX", "SHAPE", "SPACY", "IS_SPACE")


def hash_string(text: str) -> int:
    """spaCy's string hash: MurmurHash64A of the UTF-8 bytes, seed 1."""
    data = text.encode("utf8")
    length = len(data)
    h = (1 ^ (length * _M64)) & _MASK64
    end = length - (length & 7)
    for i in range(0, end, 8):
        k = (int.from_bytes(data[i:i + 8], "little") * _M64) & _MASK64
        k ^= k >> 47
        k = (k * _M64) & _MASK64
        h = ((h ^ k) * _M64) & _MASK64
    if length & 7:
        h = ((h ^ int.from_bytes(data[end:], "little")) * _M64) & _MASK64
    h ^= h >> 47
    h = (h * _M64) & _MASK64
    return h ^ (h >> 47)


def _fmix64(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xFF51AFD7ED558CCD)
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xC4CEB9FE1A85EC53)
    out: np.ndarray = h ^ (h >> np.uint64(33))
    return out


def hash_ids(ids: np.ndarray, seed: int) -> np.ndarray:
    """thinc's ``NumpyOps.hash`` (``MurmurHash3_x86_128_uint64``, which is
    MurmurHash3_x64_128 of the 8 bytes): four uint32 columns per id."""
    h1 = np.ascontiguousarray(ids, dtype=np.uint64) * np.uint64(0x87C37B91114253D5)
    h1 = (h1 << np.uint64(31)) | (h1 >> np.uint64(33))
    h1 = h1 * np.uint64(0x4CF5AD432745937F)
    h1 = h1 ^ np.uint64(seed) ^ np.uint64(8)
    h2 = np.full(h1.shape, seed ^ 8, dtype=np.uint64)
    h1 = h1 + h2
    h2 = h2 + h1
    h1, h2 = _fmix64(h1), _fmix64(h2)
    h1 = h1 + h2
    h2 = h2 + h1
    low = np.uint64(0xFFFFFFFF)
    return np.stack([h1 & low, h1 >> np.uint64(32), h2 & low, h2 >> np.uint64(32)], axis=1).astype(np.uint32)


def word_shape(text: str) -> str:
    """spaCy's ``word_shape`` (``spacy.lang.lex_attrs``)."""
    if len(text) >= 100:
        return "LONG"
    shape = []
    last = ""
    seq = 0
    for char in text:
        if char.isalpha():
            shape_char = "X" if char.isupper() else "x"
        elif char.isdigit():
            shape_char = "d"
        else:
            shape_char = char
        if shape_char == last:
            seq += 1
        else:
            seq = 0
            last = shape_char
        if seq < 4:
            shape.append(shape_char)
    return "".join(shape)


# ----------------------------------------------------------------- the export


def _param(model: Any, name: str) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(model.get_param(name), dtype=np.float32))


def _layers(model: Any, name: str) -> list[Any]:
    return [node for node in model.walk() if node.name == name]


def export_network(nlp: Any) -> dict[str, Any]:
    """The weights of ``tok2vec`` and ``tagger``; ValueError for an architecture
    other than the one this module computes."""
    tok2vec = nlp.get_pipe("tok2vec").model
    tagger = nlp.get_pipe("tagger")
    features = [node for node in tok2vec.walk() if node.name == "extract_features"]
    if len(features) != 1 or [str(c) for c in features[0].attrs["columns"]] != list(_FEATURES):
        raise ValueError("tok2vec's features are not the ones this export computes")
    embeds = _layers(tok2vec, "hashembed")
    maxouts = _layers(tok2vec, "maxout")
    norms = _layers(tok2vec, "layernorm")
    windows = _layers(tok2vec, "expand_window")
    softmax = _layers(tagger.model, "softmax")
    padded = [node for node in tok2vec.walk() if node.name.startswith("with_array(residual")]
    if (len(embeds) != len(_FEATURES) or len(maxouts) != len(norms) or len(maxouts) != len(windows) + 1
            or len(softmax) != 1 or any(w.attrs["window_size"] != 1 for w in windows)
            or len(padded) != 1 or padded[0].attrs["pad"] < len(windows)
            or sum(n.name.startswith("residual(") and n.name.count("residual(") == 1 for n in tok2vec.walk())
            != len(windows)
            or _param(maxouts[0], "W").shape[2] != len(embeds) * _param(maxouts[0], "W").shape[0]):
        raise ValueError("tok2vec is not a MultiHashEmbed + MaxoutWindowEncoder network")
    return {
        "embed": [(_param(e, "E"), int(e.attrs["seed"])) for e in embeds],
        "maxout": [(_param(m, "W"), _param(m, "b")) for m in maxouts],
        "norm": [(_param(n, "G"), _param(n, "b")) for n in norms],
        "pad": int(padded[0].attrs["pad"]),
        "softmax": (_param(softmax[0], "W"), _param(softmax[0], "b")),
        "labels": [str(label) for label in tagger.labels],
    }


def fingerprint(model: str) -> str | None:
    """A digest of the installed pipeline package's files and of spaCy's
    (names, sizes, times), Python's and numpy's versions and :data:`VERSION`;
    None when either package is not found."""
    import importlib.util

    spec = importlib.util.find_spec(model)
    spacy = importlib.util.find_spec("spacy")
    if spec is None or not spec.submodule_search_locations or spacy is None or spacy.origin is None:
        return None
    digest = hashlib.sha256(f"{VERSION}|{sys.version_info[:2]}|{np.__version__}".encode())
    spacy_dir = Path(spacy.origin).parent
    for name in ("about.py", "tokenizer.pyx", "vocab.pyx"):
        file = spacy_dir / name
        if file.is_file():
            digest.update(f"{name}|{file.stat().st_size}|{file.stat().st_mtime_ns}".encode())
    for root in spec.submodule_search_locations:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                stat = os.stat(os.path.join(folder, name))
                digest.update(f"{os.path.relpath(os.path.join(folder, name), root)}|{stat.st_size}|"
                              f"{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def snapshot_path(model: str) -> Path | None:
    """Where the snapshot of the installed ``model`` is kept (see the module's doc)."""
    found = fingerprint(model)
    return None if found is None else cache_root() / "signals" / f"{model}.{VERSION}.{found}.snapshot"


def export(nlp: Any, tables: dict[str, Any], path: Path) -> None:
    """Write the snapshot of ``nlp`` (its tokenizer, network and ``tables``) to
    ``path``, whole or not at all."""
    network = export_network(nlp)
    data = {
        "version": VERSION,
        "rules": export_rules(nlp.tokenizer),
        # (keyed by the id of the word: a Table hashes its keys)
        "lexeme_norm": {int(k): str(v) for k, v in nlp.vocab.lookups.get_table("lexeme_norm", {}).items()},
        "base_norms": _base_norms(),
        "symbols": _symbols(),
        "tables": tables,
        "labels": network["labels"],
        "pad": network["pad"],
        "seeds": [seed for _, seed in network["embed"]],
    }
    arrays: list[np.ndarray] = [table for table, _ in network["embed"]]
    for (w, b), (g, nb) in zip(network["maxout"], network["norm"], strict=True):
        arrays += [w, b, g, nb]
    arrays += list(network["softmax"])
    data["arrays"] = [(a.shape, a.tobytes()) for a in arrays]
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as out:
        marshal.dump(data, out)


def _symbols() -> dict[str, int]:
    """spaCy's reserved symbols: their ids stand for their hashes (``StringStore.add``)."""
    from spacy.symbols import IDS

    return {str(k): int(v) for k, v in IDS.items()}


def _base_norms() -> dict[str, str]:
    from spacy.lang.norm_exceptions import BASE_NORMS

    return {str(k): str(v) for k, v in BASE_NORMS.items()}


# --------------------------------------------------------------- the snapshot


class Snapshot:
    """A pipeline's tokenizer and tagger without spaCy (see the module's doc)."""

    def __init__(self, data: dict[str, Any]) -> None:
        if data.get("version") != VERSION:
            raise ValueError("snapshot of another version")
        arrays = [np.frombuffer(raw, dtype=np.float32).reshape(shape) for shape, raw in data["arrays"]]
        n_embed = len(data["seeds"])
        self._embed = list(zip(arrays[:n_embed], data["seeds"], strict=True))
        rest = arrays[n_embed:]
        self._layers = [tuple(rest[i:i + 4]) for i in range(0, len(rest) - 2, 4)]
        self._softmax = (rest[-2], rest[-1])
        self._pad = int(data["pad"])
        self.labels: list[str] = list(data["labels"])
        self.tables: dict[str, Any] = data["tables"]
        self._norms: dict[int, str] = data["lexeme_norm"]
        self._base_norms: dict[str, str] = data["base_norms"]
        self.tokenizer = RuleTokenizer(data["rules"])
        # spaCy's reserved symbols ("X", "_", "NOUN", ...) stand for their hashes.
        self._symbols: dict[str, int] = data["symbols"]
        self._hashes: dict[str, int] = dict(self._symbols)

    @classmethod
    def load(cls, path: Path) -> Snapshot:
        # (marshal.load on the file object reads it piece by piece: ~10x slower)
        return cls(marshal.loads(path.read_bytes()))

    def _hash(self, text: str) -> int:
        found = self._hashes.get(text)
        if found is None:
            if len(self._hashes) > _MAX_HASHES:  # a long-running process: memoized, not kept forever
                self._hashes = dict(self._symbols)
            found = self._hashes[text] = hash_string(text)
        return found

    def _norm(self, orth: str) -> str:
        found = self._norms.get(self._hash(orth))
        if found is None:
            found = self._base_norms.get(orth)
        return orth.lower() if found is None else found

    def tag(self, texts: list[str], batch: int = 64) -> list[list[tuple[int, int, str]]]:
        """(offset, length, fine-grained tag) of each token of each text; the
        texts run through the network ``batch`` at a time (as ``nlp.pipe``)."""
        docs = [self.tokenizer(text) for text in texts]
        out: list[list[tuple[int, int, str]]] = []
        labels = self.labels
        for start in range(0, len(docs), batch):
            chunk = docs[start:start + batch]
            rows = [self._features(tokens) for tokens in chunk if tokens]
            best = iter(self._forward(rows)) if rows else iter(())
            for tokens in chunk:
                if not tokens:
                    out.append([])
                    continue
                tags = next(best).tolist()
                offset = 0
                tagged = []
                for (orth, _, space), tag in zip(tokens, tags, strict=True):
                    tagged.append((offset, len(orth), labels[tag]))
                    offset += len(orth) + space
                out.append(tagged)
        return out

    def _features(self, tokens: list[Token]) -> np.ndarray:
        """The six feature columns of a text's tokens (spaCy's ``doc.to_array``)."""
        hashed = self._hash
        return np.array([(hashed(norm if norm is not None else self._norm(orth)), hashed(orth[0]), hashed(orth[-3:]),
                          hashed(word_shape(orth)), int(space), int(orth.isspace()))
                         for orth, norm, space in tokens], dtype=np.uint64)

    def _forward(self, docs: list[np.ndarray]) -> list[np.ndarray]:
        """The best tag's index per token, for each doc's feature rows. The docs
        run together as thinc's ``with_array(pad=...)`` runs them: one array,
        ``pad`` zero rows before, between and after them."""
        rows = np.concatenate(docs)
        parts = []
        for column, (table, seed) in enumerate(self._embed):
            keys = hash_ids(rows[:, column], seed) % np.uint32(table.shape[0])
            parts.append(table[keys[:, 0]] + table[keys[:, 1]] + table[keys[:, 2]] + table[keys[:, 3]])
        embedded = _maxout_norm(np.concatenate(parts, axis=1), *self._layers[0])
        width = embedded.shape[1]
        pad = np.zeros((self._pad, width), dtype=np.float32)
        pieces = [pad]
        spans = []
        at, row = self._pad, 0
        for doc in docs:
            pieces += [embedded[row:row + len(doc)], pad]
            spans.append((at, at + len(doc)))
            at += len(doc) + self._pad
            row += len(doc)
        x = np.concatenate(pieces)
        edge = np.zeros((1, width), dtype=np.float32)
        for layer in self._layers[1:]:
            window = np.concatenate([np.concatenate([edge, x[:-1]]), x, np.concatenate([x[1:], edge])], axis=1)
            x = x + _maxout_norm(window, *layer)
        x = np.concatenate([x[a:b] for a, b in spans])
        weights, bias = self._softmax
        scores = np.dot(x, weights.T)
        scores += bias
        best = scores.argmax(axis=1)
        return np.split(best, np.cumsum([len(doc) for doc in docs])[:-1])


def _maxout_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, g: np.ndarray, nb: np.ndarray) -> np.ndarray:
    """thinc's ``maxout >> layernorm``."""
    n_out, pieces, n_in = w.shape
    y = np.dot(x, w.reshape(n_out * pieces, n_in).T)
    y += b.reshape(n_out * pieces)
    pieces_of = y.reshape(len(y), n_out, pieces)
    best = pieces_of[:, :, 0]
    for piece in range(1, pieces):
        best = np.maximum(best, pieces_of[:, :, piece])
    mu = best.mean(axis=1, keepdims=True)
    var = best.var(axis=1, keepdims=True) + 1e-08
    out = (best - mu) * var ** (-1.0 / 2.0)
    scaled: np.ndarray = out * g
    scaled += nb
    return scaled
