"""Pure text helpers for signal extraction: regions, technical tokens, paths.

Nothing here touches spaCy; it is all regular expressions and small sets,
so it is deterministic and cheap.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

# ---------------------------------------------------------------- word lists

#: Generic words that carry no retrieval signal in task text. Most are
#: imperative verbs the tagger sometimes reads as nouns at a sentence start
#: ("Refactor the ...", "See ..."), or meta nouns of task writing.
NOISE_WORDS: frozenset[str] = frozenset(
    {
        "add", "fix", "refactor", "implement", "update", "see", "ensure", "make",
        "rename", "remove", "create", "delete", "write", "change", "improve", "check",
        "use", "todo", "etc", "thing", "stuff", "way", "lot", "kind", "sort",
        "bit", "issue", "problem", "task", "example", "e.g", "i.e", "nothing",
        "something", "anything", "everything", "sure", "need", "want", "ok",
    }
)

#: Common task verbs dropped by the blank-pipeline fallback, which has no
#: part-of-speech tags to tell verbs from nouns.
FALLBACK_VERBS: frozenset[str] = frozenset(
    {
        "add", "adds", "allow", "allows", "apply", "avoid", "break", "call", "change",
        "check", "clean", "create", "creates", "delete", "document", "drop", "expose",
        "extract", "fail", "fails", "find", "fix", "fixes", "get", "gets", "give",
        "handle", "handles", "implement", "implements", "improve", "include", "keep",
        "let", "load", "make", "makes", "move", "need", "needs", "pass", "passes",
        "prevent", "read", "reads", "reject", "remove", "rename", "replace", "return",
        "returns", "run", "runs", "save", "set", "show", "skip", "split", "start",
        "stop", "store", "support", "take", "tell", "try", "turn", "update", "updates",
        "use", "uses", "validate", "verify", "want", "work", "works", "write", "writes",
    }
)

#: Folder names too generic to be keywords (they still appear in paths).
GENERIC_DIRS: frozenset[str] = frozenset(
    {".", "..", "~", "src", "lib", "pkg", "internal", "source", "sources"}
)

#: First folders that make a two-part, extension-less ``a/b`` count as a path.
KNOWN_DIRS: frozenset[str] = frozenset(
    {
        "src", "lib", "libs", "test", "tests", "spec", "specs", "doc", "docs", "app",
        "apps", "pkg", "packages", "cmd", "internal", "scripts", "bin", "config",
        "configs", "include", "examples", "benchmarks", "tools", "web", "public",
        "static", "assets", "templates", "migrations", "fixtures", "build", "dist",
        "vendor", "node_modules", ".github", ".ci", "ctxgraph", "etc", "var", "usr",
        "home", "tmp",
    }
)

#: File extensions that make a bare dotted word (``core.py``) a file name.
FILE_EXTENSIONS: frozenset[str] = frozenset(
    {
        "py", "pyi", "pyx", "pxd", "ipynb", "ts", "tsx", "js", "jsx", "mjs", "cjs",
        "vue", "svelte", "json", "jsonl", "yaml", "yml", "toml", "ini", "cfg", "conf",
        "env", "md", "rst", "txt", "adoc", "html", "htm", "css", "scss", "sass", "less",
        "go", "mod", "sum", "rs", "java", "kt", "kts", "scala", "groovy", "gradle",
        "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "fs", "swift", "m", "mm",
        "rb", "php", "pl", "lua", "r", "jl", "dart", "ex", "exs", "erl", "hs", "clj",
        "sh", "bash", "zsh", "fish", "ps1", "bat", "sql", "cypher", "cql", "graphql",
        "gql", "proto", "xml", "csv", "tsv", "parquet", "lock", "log", "j2", "jinja",
        "tmpl", "tpl", "svg", "png", "jpg", "jpeg", "gif", "pdf", "zip", "gz", "tar",
        "whl", "tf", "tfvars", "hcl", "dockerfile", "mk", "cmake", "patch", "diff",
    }
)

#: Library names that look like file names (``Node.js``) but are not.
NOT_FILES: frozenset[str] = frozenset(
    {
        "node.js", "next.js", "nuxt.js", "vue.js", "react.js", "express.js",
        "three.js", "d3.js", "chart.js", "angular.js", "ember.js", "backbone.js",
        "socket.io", "asp.net",
    }
)

#: Extension-less file names that are always files.
BARE_FILES: frozenset[str] = frozenset(
    {"Makefile", "Dockerfile", "Jenkinsfile", "Procfile", "Gemfile", "Rakefile",
     "Vagrantfile", "Justfile", "Containerfile"}
)

#: Top-level domains that mark ``host.tld/...`` as a web address, not a path.
_WEB_TLDS = ("com", "org", "net", "io", "dev", "ai", "co", "edu", "gov", "app", "me", "info")

# ----------------------------------------------------------------- patterns

_CHUNK = re.compile(r"[^\s`'\"<>()\[\]{},;|]+")
_BACKTICKS = re.compile(r"`([^`\n]+)`")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\(\)")
_IDENT = re.compile(r"[A-Za-z_][\w\-]*(?:\.[A-Za-z_][\w\-]*)*")
_PATH_CHARS = re.compile(r"[\w.~@+\-/]+")
_LINE_SUFFIX = re.compile(r"(?::\d+(?:[-:]\d+)*|#L\d+(?:-L?\d+)?)$")
_FILE_NAME = re.compile(r"(\.?[\w@+\-]+(?:\.[\w@+\-]+)*)\.([A-Za-z0-9]{1,12})")
_DOTFILE = re.compile(r"\.[a-z][a-z0-9_.\-]*")
_HAS_EXT = re.compile(r"[^.]\.[A-Za-z0-9]{1,12}$")
_WEB_HOST = re.compile(r"[\w\-]+(?:\.[\w\-]+)*\.(?:" + "|".join(_WEB_TLDS) + r")", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
_HAS_LETTER = re.compile(r"[^\W\d_]")
_KEYWORD_SHAPE = re.compile(r"[^\W][\w.+#\-]*")

_ACRONYM_PLURAL = re.compile(r"([A-Z]{2,}[A-Z0-9]*)s")
_ACRONYM = re.compile(r"[A-Z][A-Z0-9]*[A-Z][A-Z0-9]*")
_MIXED_ALNUM = re.compile(r"[A-Za-z]+[0-9][A-Za-z0-9]*")
_SNAKE = re.compile(r"\w*[A-Za-z0-9]_\w*|_+[A-Za-z]\w*")
_CAMEL = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL_HINT = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_DOTTED = re.compile(r"[A-Za-z_][\w\-]*(?:\.[A-Za-z_][\w\-]*)+")
_PART_SPLIT = re.compile(r"[._/\-]+")
_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_WORD = re.compile(r"(?<![\w.@$])[A-Za-z]+(?!\w|\.\w)")
_FALLBACK_TOKEN = re.compile(r"[^\W_][\w.+#\-]*|_+\w+")

# ------------------------------------------------------------ technical tokens


def technical(text: str) -> str | None:
    """The keyword form of a technical token, or None for an ordinary word.

    Technical: ALLCAPS acronyms (``JWT`` -> ``jwt``, ``APIs`` -> ``api``),
    letters with digits (``oauth2``, ``S3``), ``snake_case``,
    ``camelCase``/``PascalCase`` and dotted names (``click.prompt``,
    ``login.ts``). The form is kept, only lower-cased.
    """
    text = text.lstrip("@$")  # decorators, shell variables
    if len(text) < 2:
        return None
    if text.isalpha() and (text.islower() or (text[0].isupper() and text[1:].islower())):
        return None  # the common case: an ordinary word
    if m := _ACRONYM_PLURAL.fullmatch(text):
        return m.group(1).lower()
    if (
        _ACRONYM.fullmatch(text)
        or _MIXED_ALNUM.fullmatch(text)
        or (_SNAKE.fullmatch(text) and _HAS_LETTER.search(text))
        or (_CAMEL.fullmatch(text) and _CAMEL_HINT.search(text))
    ):
        return text.lower()
    if _DOTTED.fullmatch(text) and any(len(p) > 1 for p in text.split(".")):
        return text.lower()
    return None


def split_parts(text: str) -> list[str]:
    """Lower-case parts of a compound name: ``requireAuth`` -> require, auth;
    ``user_sessions.py`` -> user, sessions, py (plus their cheap singulars)."""
    out: list[str] = []
    for piece in _PART_SPLIT.split(text):
        for part in _CAMEL_PARTS.findall(piece) or [piece]:
            low = part.lower()
            if len(low) > 1:
                out.append(low)
                single = cheap_singular(low)
                if single != low:
                    out.append(single)
    return out


def cheap_singular(word: str) -> str:
    """A dictionary-free plural strip for lower-case words (``tests`` -> ``test``,
    ``queries`` -> ``query``); words ending in ss/us/is are left alone."""
    if len(word) <= 3 or not word.endswith("s") or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


def keyword_ok(word: str, stop_words: frozenset[str] | set[str]) -> bool:
    """Length >= 2, at least one letter, a keyword's shape, no stop/noise word."""
    return (
        len(word) >= 2
        and word not in stop_words
        and word not in NOISE_WORDS
        and _KEYWORD_SHAPE.fullmatch(word) is not None
        and _HAS_LETTER.search(word) is not None
    )


# --------------------------------------------------------------------- regions


@dataclass
class Regions:
    """What a raw-text scan found before tokenizing.

    ``mask[i]`` is 1 where character ``i`` belongs to a URL, a path or a
    backtick span: tokens starting there are not looked at again.
    ``technical`` holds (offset, original text) of backtick identifiers and
    ``name()`` calls; ``paths`` holds (offset, path as mentioned).
    """

    mask: bytearray
    paths: list[tuple[int, str]] = field(default_factory=list)
    technical: list[tuple[int, str]] = field(default_factory=list)


def _cover(mask: bytearray, start: int, end: int) -> None:
    mask[start:end] = b"\x01" * (end - start)


def _clean_chunk(chunk: str) -> tuple[int, str]:
    """Strip emphasis and trailing punctuation; returns (left offset, core)."""
    left = len(chunk) - len(chunk.lstrip("*"))
    core = chunk[left:].rstrip("*.,:;!?")
    return left, core


def path_of(core: str) -> str | None:
    """The path a cleaned chunk mentions (line suffix and leading ``./``
    removed), or None when it is not a path."""
    core = _LINE_SUFFIX.sub("", core)
    if not core or not _PATH_CHARS.fullmatch(core):
        return None
    if "/" in core:
        parts = [p for p in core.split("/") if p]
        if not parts or not any(_HAS_LETTER.search(p) for p in parts):
            return None
        explicit = core.startswith(("/", "./", "../", "~/"))
        if not explicit and _WEB_HOST.fullmatch(parts[0]):
            return None
        if not (
            explicit
            or _HAS_EXT.search(parts[-1])
            or len(parts) >= 3
            or (core.endswith("/") and len(parts[0]) > 1)
            or (len(parts) == 2 and parts[0].lower() in KNOWN_DIRS)
        ):
            return None
        path = core[2:] if core.startswith("./") else core
        return path.rstrip("/") if len(path) > 1 else path
    if core in BARE_FILES or _DOTFILE.fullmatch(core):
        return core
    m = _FILE_NAME.fullmatch(core)
    if (
        m
        and (m.group(2).islower() or m.group(2).isupper())
        and m.group(2).lower() in FILE_EXTENSIONS
        and core.lower() not in NOT_FILES
        and _HAS_LETTER.search(m.group(1))
    ):
        return core
    return None


def scan(text: str) -> Regions:
    """Find URLs (skipped), file paths, backtick identifiers and ``name()`` calls."""
    regions = Regions(mask=bytearray(len(text)))
    mask = regions.mask
    for m in _CHUNK.finditer(text):
        chunk = m.group()
        if "/" not in chunk and "." not in chunk and "@" not in chunk and chunk not in BARE_FILES:
            continue
        left, core = _clean_chunk(chunk)
        if (
            "://" in chunk
            or chunk.lower().startswith(("www.", "mailto:"))
            or _EMAIL.fullmatch(core)
        ):
            _cover(mask, m.start(), m.end())  # a URL or e-mail address: no signals
            continue
        path = path_of(core)
        if path is not None:
            start = m.start() + left
            regions.paths.append((start, path))
            _cover(mask, start, start + len(core))
    for m in _BACKTICKS.finditer(text):
        base = m.start(1)
        for ident in _IDENT.finditer(m.group(1)):
            if not mask[base + ident.start()]:
                regions.technical.append((base + ident.start(), ident.group()))
        _cover(mask, m.start(), m.end())
    for m in _CALL.finditer(text):
        if not mask[m.start()]:
            regions.technical.append((m.start(), m.group(1)))
            _cover(mask, m.start(), m.end())
    regions.technical.sort()
    return regions


def path_keywords(path: str) -> Iterator[tuple[str, bool]]:
    """Keyword candidates from a path: its folders (generic ones out), its file
    name and the file name's stem. Yields (text, is_file_name)."""
    parts = [p for p in path.split("/") if p]
    for folder in parts[:-1]:
        if folder.lower() not in GENERIC_DIRS:
            yield folder, False
    if not parts:
        return
    last = parts[-1]
    if _HAS_EXT.search(last):
        yield last, True
        stem = last.rsplit(".", 1)[0]
        if stem:
            yield stem, False
    elif last.lower() not in GENERIC_DIRS:
        yield last, False


def fallback_tokens(text: str, mask: bytearray) -> Iterator[tuple[int, str]]:
    """A regex tokenizer for the blank pipeline: words and technical tokens."""
    for m in _FALLBACK_TOKEN.finditer(text):
        if not mask[m.start()]:
            token = m.group().rstrip(".-")
            if token:
                yield m.start(), token


# ------------------------------------------------------------------ task types

_TASK_TYPE_WORDS: dict[str, str] = {}
for _type, _words in (
    ("bugfix", "fix fixes fixed fixing bug bugs bugfix hotfix regression crash crashes broken "
               "leak leaks leaked leaking vulnerability defect"),
    ("feature", "add adds added adding implement implements implemented implementing "
                "create creates created creating introduce introduces introduced feature"),
    ("refactor", "refactor refactors refactored refactoring rename renames renamed renaming "
                 "move moves moved moving clean cleans cleaned cleaning cleanup restructure "
                 "reorganize simplify"),
    ("test", "test tests tested testing unittest unittests pytest coverage"),
    ("docs", "doc docs document documents documented documenting documentation readme "
             "docstring docstrings changelog"),
):
    for _w in _words.split():
        _TASK_TYPE_WORDS[_w] = _type


def infer_task_types(text: str, mask: bytearray) -> list[str]:
    """Task types from plain words (not inside paths, URLs or backticks), in
    order of first appearance: fix/bug/leak -> bugfix, add/implement/create ->
    feature, refactor/rename/move/clean -> refactor, test -> test, doc -> docs."""
    found: dict[str, None] = {}
    for m in _WORD.finditer(text):
        if mask[m.start()]:
            continue
        kind = _TASK_TYPE_WORDS.get(m.group().lower())
        if kind is not None:
            found.setdefault(kind)
    return list(found)
