"""The noise rules of the history import: which commits are not tasks worth
ranking, and which files of a kept commit say nothing about it. Each rule has
a name (what ``ctxgraph history explain`` and the import's summary say) and
is measured on the five development repositories (docs/history.md,
``benchmarks/history_rules.py``).

File rules drop a file from a commit (the commit stays when files remain):

- ``secret``: a file the memory's index never opens for its name (a dotenv
  file, a key, a credential store: :mod:`ctxgraph.memory.secrets`), so that
  not even its name reaches a context;
- ``lock``: a dependency lock file (``poetry.lock``, ``uv.lock``,
  ``package-lock.json``, ``requirements/*.txt`` compiled by pip-tools, ...);
- ``vendored``: a file under a folder of copied third-party code
  (``vendor/``, ``_vendor/``, ``third_party/``, ``node_modules/``, ...);
- ``generated``: a build output or a generated file (``*.min.js``,
  ``*.map``, ``*_pb2.py``, ``__pycache__/``, ``*.egg-info/``, Sphinx's
  ``_build/``, ...).

Commit rules skip the whole commit, the first that applies naming it
(merges never reach them: ``git log --no-merges``):

- ``revert``: a revert (``Revert "..."``, or a message whose body starts
  with "This reverts commit ...");
  it becomes a gotcha naming what was reverted and why
  (:mod:`ctxgraph.sources.reverts`);
- ``release``: a release or a version bump (``Release 1.2.3``, ``Bump
  version``, ``v1.2.3``, ``start version 2.0.1``, ...) that changes no
  version file (``__version__.py``, ``_version.py``, ``VERSION``, ...): one
  that does is a task, the precedent of the next release, which changes the
  same file (the rules below then apply to it, ``changelog-only`` aside);
- ``dependency-bump``: a dependency update (``Bump pytest from 6.2.4 to
  6.2.5``, ``[pre-commit.ci] pre-commit autoupdate``, ...);
- ``changelog-only``: every file left is a changelog or a version file;
- ``mass-change``: more than :data:`MASS_CHANGE` files left (a
  reformatting, a licence header everywhere, a tree moved), or, with folders,
  more than :data:`MASS_CHANGE_IN_PATHS` under them;
- ``no-files``: no file left (an empty commit, or only files dropped above).

An import given folders (``ctxgraph history import --path``, ``[history]
paths``) drops, last, the files of a kept commit that are not under any of
them at the tip (``outside-paths``), and skips a commit left with none
(``outside-paths`` again): the history of one package of a larger
repository.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctxgraph.memory.secrets import DEFAULT
from ctxgraph.sources.git_log import Change, Commit, body_of

#: A commit with more files than this (after the file rules) is a mass change.
#: Chosen on the five development repositories (docs/history.md): 1-2 % of
#: their commits, whose files are gold files of later queries at a fifth of
#: the rate of the commits kept.
MASS_CHANGE = 40
#: With folders (``--path``), a kept commit with more files under them than
#: this is a mass change too: the package's own files, without the tests,
#: docs and changelog a whole commit counts. Measured with ``ctxgraph eval
#: --repo`` on the five development sets (docs/history.md): recall at five
#: files +0.014 on werkzeug and +0.009 on flask, click and requests
#: unchanged, rich -0.002; the same 8 over whole commits costs flask 0.025.
MASS_CHANGE_IN_PATHS = 8

#: Every rule, in the order they are tried, with what it says in a summary.
RULES: dict[str, str] = {
    "secret": "a secret file (by its name)",
    "lock": "a dependency lock file",
    "vendored": "a file under a folder of copied third-party code",
    "generated": "a build output or a generated file",
    "revert": "a revert (it becomes a gotcha: what was reverted, and why)",
    "release": "a release or a version bump",
    "dependency-bump": "a dependency update",
    "changelog-only": "only changelog or version files",
    "mass-change": f"more than {MASS_CHANGE} files (with folders: more than {MASS_CHANGE_IN_PATHS} under them)",
    "no-files": "no file left",
    "outside-paths": "no file under the import's folders (--path)",
}
FILE_RULES = ("secret", "lock", "vendored", "generated", "outside-paths")

_LOCK_NAMES = frozenset({
    "poetry.lock", "uv.lock", "pdm.lock", "pipfile.lock", "package-lock.json", "npm-shrinkwrap.json",
    "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "cargo.lock", "gemfile.lock", "composer.lock", "go.sum",
    "flake.lock", "podfile.lock", "mix.lock", "pubspec.lock", "packages.lock.json", "gradle.lockfile",
    "conda-lock.yml", "pixi.lock",
})
_VENDOR_DIRS = frozenset({"vendor", "vendored", "_vendor", "third_party", "third-party", "thirdparty",
                          "node_modules", "bower_components"})
_GENERATED_DIRS = frozenset({"__pycache__", "_build", ".ipynb_checkpoints", ".mypy_cache", ".pytest_cache",
                             ".tox", ".nox"})
_GENERATED_SUFFIXES = (".min.js", ".min.css", ".js.map", ".css.map", ".map", "_pb2.py", "_pb2_grpc.py",
                       "_pb2.pyi", ".pyc", ".pyo", ".so", ".dll", ".dylib", ".class", ".o")
_CHANGELOG = re.compile(r"(?i)^(changes|changelog|change_log|history|news|releases?|release[-_]notes|whatsnew)"
                        r"(\.(rst|md|txt|markdown))?$")
_VERSION_FILE = re.compile(r"(?i)^(_{0,2}version_{0,2}|_{0,2}about_{0,2})(\.(py|txt|json))?$")

_REVERT_SUBJECT = re.compile(r"(?ix)^\s*(revert(\([^)]*\))?:\s|revert(s|ed)?\s+[\"'`]"
                             r"|revert(s|ed|ing)?\s+(commit\s+)?[0-9a-f]{7,64}\b)")
_REVERTS = re.compile(r"\s*this reverts commit ([0-9a-f]{7,64})", re.IGNORECASE)
_VERSION = r"v?\d+(\.\d+)+([._-]?(a|b|rc|dev|post|alpha|beta|final)\.?\d*)*"
_RELEASE = re.compile(
    r"(?ix)^\s*(\[?release\]?:?\s*)?("
    rf"{_VERSION}(\s+(release|released|history|final))?[.!]?"  # "v1.2.3", "2.0 release"
    rf"|(release[sd]?|releasing|tag(ged|ging)?|prepar(e|ed|ing))\b.{{0,40}}({_VERSION}|\brelease\b).*"
    r"|(bump(ed|s|ing)?|set|update[sd]?|upgrade[sd]?|increment(ed)?|change[sd]?)\s+(the\s+)?"
    r"((package|project|library|dev|development)\s+)?version\b.*"  # "Bump version number to 1.0"
    rf"|bump(ed|s)?\s+to\s+({_VERSION}|(the\s+)?(next\s+)?dev(elopment)?(\s+version)?)\b.*"
    rf"|version\s+(bump(ed)?\b|{_VERSION}).*"  # "version bump", "Version 4.1"
    rf"|this\s+is\s+version\s+{_VERSION}.*"
    r"|(new|next|start|begin)\s+(version|release)\b.*|back\s+to\s+dev(elopment)?\b.*"
    r"|bump(\s+\[skip ci\])?"
    r")\s*$")
_DEPENDENCY = re.compile(
    r"(?ix)^\s*(\[pre-commit\.ci\]|pre-commit\s+autoupdate"
    r"|(build\(deps(-dev)?\)|chore\(deps(-dev)?\)):"
    r"|bump(s|ed)?\s+\S+\s+from\s+\S+\s+to\s+\S+"
    r"|bump(s|ed)?\s+the\s+\S+\s+group\b"
    r"|update\s+(dependency|dependencies|requirements|pinned\s+dependencies)\b)")


@dataclass(frozen=True)
class Verdict:
    """What the rules make of one commit: ``rule`` names the commit rule that
    skips it (None: kept), ``kept`` its files left, ``dropped`` (path, file
    rule) for each file dropped; ``reverts`` the commit a revert names ("": none)."""

    rule: str | None
    kept: tuple[Change, ...]
    dropped: tuple[tuple[str, str], ...] = ()
    reverts: str = ""

    @property
    def skipped(self) -> bool:
        return self.rule is not None


@functools.lru_cache(maxsize=65_536)
def file_rule(path: str) -> str | None:
    """The file rule that drops ``path`` (None: kept). (Cached: a history names
    the same paths again and again.)"""
    if DEFAULT.secret_file(path) is not None:
        return "secret"
    parts = path.lower().split("/")
    name = parts[-1]
    if name in _LOCK_NAMES or (len(parts) > 1 and parts[-2] == "requirements" and name.endswith(".txt")):
        return "lock"
    folders = parts[:-1]
    if any(p in _VENDOR_DIRS for p in folders):
        return "vendored"
    if any(p in _GENERATED_DIRS or p.endswith(".egg-info") for p in folders) or name.endswith(_GENERATED_SUFFIXES):
        return "generated"
    return None


def is_changelog_or_version(path: str) -> bool:
    name = posixpath.basename(path)
    return bool(_CHANGELOG.match(name) or _VERSION_FILE.match(name))


def is_version_file(path: str) -> bool:
    return bool(_VERSION_FILE.match(posixpath.basename(path)))


def commit_rule(subject: str, message: str, kept: Sequence[Change], *, mass_change: int = MASS_CHANGE) -> str | None:
    """The commit rule that skips a commit with this ``subject``, ``message``
    and files ``kept`` after the file rules (None: a task)."""
    if _REVERT_SUBJECT.match(subject) or _REVERTS.match(body_of(message)):
        return "revert"
    release = bool(_RELEASE.match(subject))
    if release and not any(is_version_file(c.path) for c in kept):
        return "release"
    if not release and _DEPENDENCY.match(subject):
        return "dependency-bump"
    if not kept:
        return "no-files"
    if not release and all(is_changelog_or_version(c.path) for c in kept):
        return "changelog-only"
    if len(kept) > mass_change:
        return "mass-change"
    return None


def judge(commit: Commit, *, mass_change: int = MASS_CHANGE) -> Verdict:
    """Apply every rule to ``commit``."""
    kept: list[Change] = []
    dropped: list[tuple[str, str]] = []
    for change in commit.changes:
        rule = file_rule(change.path)
        if rule is None:
            kept.append(change)
        else:
            dropped.append((change.path, rule))
    subject = commit.subject
    rule = commit_rule(subject, commit.message, kept, mass_change=mass_change)
    reverted = _REVERTS.search(commit.message) if rule == "revert" else None
    return Verdict(rule=rule, kept=tuple(kept), dropped=tuple(dropped),
                   reverts=reverted.group(1).lower() if reverted else "")


def under(path: str, folders: Sequence[str]) -> bool:
    """Whether ``path`` is in one of ``folders`` (each ending in ``/``)."""
    return path.startswith(tuple(folders))


def in_paths(verdict: Verdict, files: tuple[tuple[str, str], ...], folders: Sequence[str], *,
             mass_change: int = MASS_CHANGE_IN_PATHS) -> tuple[Verdict, tuple[tuple[str, str], ...]]:
    """A kept commit's verdict and files (status, path at the tip) with the
    files outside ``folders`` dropped; skipped as ``outside-paths`` when none
    is left, as ``mass-change`` when more than ``mass_change`` are."""
    inside = tuple(f for f in files if under(f[1], folders))
    rule = None if inside else "outside-paths"
    if len(inside) > mass_change:
        rule = "mass-change"
    if len(inside) == len(files) and rule is None:
        return verdict, files
    dropped = verdict.dropped + tuple((path, "outside-paths") for _, path in files if not under(path, folders))
    kept = tuple(c for c, f in zip(verdict.kept, files, strict=True) if under(f[1], folders))
    return Verdict(rule=rule, kept=kept, dropped=dropped, reverts=verdict.reverts), inside


__all__ = [
    "FILE_RULES",
    "MASS_CHANGE",
    "MASS_CHANGE_IN_PATHS",
    "RULES",
    "Verdict",
    "commit_rule",
    "file_rule",
    "in_paths",
    "is_changelog_or_version",
    "is_version_file",
    "judge",
    "under",
]
