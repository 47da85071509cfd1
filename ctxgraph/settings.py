"""Project settings: ``ctxgraph.toml``, else ``[tool.ctxgraph]`` in ``pyproject.toml``.

Read in the shell (CLI, ``ContextService.open``), never at import::

    # ctxgraph.toml (or [tool.ctxgraph] in pyproject.toml; same keys)
    strategy = "balanced"          # recent | important | balanced
    decay_hours = 1.0              # balanced: importance / (1 + hours / decay_hours)
    budget = 8000                  # overrides the tier budgets below
    [tier_budgets]
    easy = 4000
    [type_priority]                # lower comes first
    decision = 1.5
    [scope_split]
    global = 0.5
    task = 0.3
    path = 0.2
    [domains]                      # extra domains for task signals: name = [trigger words]
    payments = ["stripe", "invoice", "refund"]
    [index]                        # what the associative memory never takes in, besides the defaults
    secret_files = ["deploy/keys/", "*.vault.yml"]      # more files never read (gitignore syntax)
    secret_patterns = ['internal-token-[0-9a-f]{32}']  # more values redacted (regular expressions)
    [knowledge]                    # what an import of the project's files reads (docs/knowledge-import.md)
    adr_dirs = ["design/records"]  # ADR folders besides the usual ones
    adrs = true                    # ADRs become decisions
    notes = true                   # the code's notes become gotchas
    [history]                      # what the git history import keeps (docs/history.md)
    paths = ["src/pkg"]            # only these folders' files (default: the whole repository)
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ctxgraph.compute.config import ContextConfig
from ctxgraph.compute.ranking import RankingWeights
from ctxgraph.errors import ConfigurationError
from ctxgraph.files import atomic_write
from ctxgraph.signals import DEFAULT_DOMAINS


@dataclass(frozen=True)
class KnowledgeSettings:
    """``[knowledge]``: what an import of the project's own files reads."""

    adr_dirs: tuple[str, ...] = ()
    adrs: bool = True
    notes: bool = True


@dataclass(frozen=True)
class HistorySettings:
    """``[history]``: what the git history import keeps (None: not set)."""

    paths: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Settings:
    context: ContextConfig = field(default_factory=ContextConfig)
    domains: dict[str, tuple[str, ...]] | None = None
    source: str | None = None
    #: ``[index]``: more files never indexed (gitignore syntax) and more values
    #: redacted (regular expressions), besides the defaults (ctxgraph.memory.secrets)
    secret_files: tuple[str, ...] = ()
    secret_patterns: tuple[str, ...] = ()
    knowledge: KnowledgeSettings = field(default_factory=KnowledgeSettings)
    history: HistorySettings = field(default_factory=HistorySettings)


def find_settings_file(start: Path) -> tuple[Path, bool] | None:
    """The nearest ``ctxgraph.toml`` (True) or ``pyproject.toml`` with a
    ``[tool.ctxgraph]`` table (False), from ``start`` upwards."""
    for folder in (start, *start.parents):
        own = folder / "ctxgraph.toml"
        if own.is_file():
            return own, True
        py = folder / "pyproject.toml"
        if py.is_file() and "[tool.ctxgraph" in py.read_text(encoding="utf-8", errors="replace"):
            return py, False
    return None


#: The environment variable whose whole number overrides the settings' ``budget``
#: (a server configured by its environment only: docs/deploy.md).
BUDGET_ENV = "CTXGRAPH_BUDGET"


def load_settings(path: Path | None = None, *, start: Path | None = None) -> Settings:
    """Settings from ``path``, or from the file found from ``start`` (default:
    cwd); ``$CTXGRAPH_BUDGET``, when set, is the ``budget``."""
    settings = _load_settings(path, start=start)
    raw = os.environ.get(BUDGET_ENV, "").strip()
    if not raw:
        return settings
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigurationError(f"{BUDGET_ENV}={raw[:40]!r}: expected a whole number of tokens of at least 1")
    return replace(settings, context=settings.context.model_copy(update={"budget": int(raw)}))


def _load_settings(path: Path | None, *, start: Path | None) -> Settings:
    if path is None:
        found = find_settings_file((start or Path.cwd()).resolve())
        if found is None:
            return Settings()
        path, own = found
    else:
        own = path.name != "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{path}: cannot read settings: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path}: not valid TOML: {exc}") from None
    table: Any = data if own else data.get("tool", {}).get("ctxgraph", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f"{path}: [tool.ctxgraph] must be a table")
    table = dict(table)
    domains_raw = table.pop("domains", None)
    secret_files, secret_patterns = _index_rules(path, table.pop("index", None))
    knowledge = _knowledge_settings(path, table.pop("knowledge", None))
    history = _history_settings(path, table.pop("history", None))
    try:
        context = ContextConfig.model_validate(table)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigurationError(f"{path}: invalid settings: {problems}") from None
    domains = None
    if domains_raw is not None:
        if not isinstance(domains_raw, dict) or not all(
            isinstance(v, list) and all(isinstance(w, str) for w in v) for v in domains_raw.values()
        ):
            raise ConfigurationError(f"{path}: domains must map names to lists of words")
        domains = {**{k: tuple(v) for k, v in DEFAULT_DOMAINS.items()},
                   **{k: tuple(v) for k, v in domains_raw.items()}}
    return Settings(context=context, domains=domains, source=str(path), secret_files=secret_files,
                    secret_patterns=secret_patterns, knowledge=knowledge, history=history)


def _index_rules(path: Path, raw: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``[index]``'s ``secret_files`` and ``secret_patterns``: lists of strings,
    patterns that compile; none may bring back a file the defaults leave out."""
    if raw is None:
        return (), ()
    if not isinstance(raw, dict) or set(raw) - {"secret_files", "secret_patterns"}:
        raise ConfigurationError(f"{path}: [index] takes secret_files and secret_patterns (lists of strings)")
    found: dict[str, tuple[str, ...]] = {}
    for key in ("secret_files", "secret_patterns"):
        items = raw.get(key, [])
        if not isinstance(items, list) or not all(isinstance(v, str) and v.strip() for v in items):
            raise ConfigurationError(f"{path}: index.{key} must be a list of non-empty strings")
        found[key] = tuple(items)
    for name in found["secret_files"]:
        if name.lstrip().startswith(("!", "#")):
            raise ConfigurationError(f"{path}: index.secret_files: {name!r}: the defaults cannot be turned off; "
                                     "give patterns of files to leave out")
    for pattern in found["secret_patterns"]:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigurationError(f"{path}: index.secret_patterns: {pattern!r}: not a regular expression: "
                                     f"{exc}") from None
    return found["secret_files"], found["secret_patterns"]


def _knowledge_settings(path: Path, raw: Any) -> KnowledgeSettings:
    if raw is None:
        return KnowledgeSettings()
    if not isinstance(raw, dict) or set(raw) - {"adr_dirs", "adrs", "notes"}:
        raise ConfigurationError(f"{path}: [knowledge] takes adr_dirs (a list of folders), adrs and notes "
                                 "(true or false)")
    dirs = raw.get("adr_dirs", [])
    if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
        raise ConfigurationError(f"{path}: knowledge.adr_dirs must be a list of folders (relative to the root)")
    flags = {k: raw.get(k, True) for k in ("adrs", "notes")}
    for key, value in flags.items():
        if not isinstance(value, bool):
            raise ConfigurationError(f"{path}: knowledge.{key} must be true or false")
    return KnowledgeSettings(adr_dirs=tuple(dirs), **flags)


def _history_settings(path: Path, raw: Any) -> HistorySettings:
    if raw is None:
        return HistorySettings()
    if not isinstance(raw, dict) or set(raw) - {"paths"}:
        raise ConfigurationError(f"{path}: [history] takes paths (a list of folders of the repository)")
    paths = raw.get("paths")
    if paths is not None and (not isinstance(paths, list) or not all(isinstance(p, str) and p.strip()
                                                                         for p in paths)):
        raise ConfigurationError(f"{path}: history.paths must be a list of folders (relative to the repository's "
                                 "top)")
    return HistorySettings(paths=None if paths is None else tuple(paths))


def settings_target(start: Path | None = None) -> tuple[Path, bool]:
    """Where settings are written: the file :func:`load_settings` reads (True:
    a ``ctxgraph.toml``; False: ``pyproject.toml``'s ``[tool.ctxgraph]``), else
    a new ``ctxgraph.toml`` in ``start`` (default: cwd)."""
    folder = (start or Path.cwd()).resolve()
    return find_settings_file(folder) or (folder / "ctxgraph.toml", True)


def write_ranking(path: Path, weights: RankingWeights) -> None:
    """Write ``weights`` as the ``[ranking.full_text]`` and ``[ranking.dense]``
    tables of the settings file ``path`` (``[tool.ctxgraph.ranking.*]`` in a
    ``pyproject.toml``), keeping every other setting, comment and layout. The
    file is replaced whole (a temporary file renamed over it), never half-written;
    a file that is not valid TOML is refused and left as it is."""

    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    own = path.name != "pyproject.toml"
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        doc = tomlkit.parse(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{path}: cannot read settings: {exc}") from None
    except TOMLKitError as exc:
        raise ConfigurationError(f"{path}: not valid TOML: {exc}") from None
    table: Any = doc
    if not own:
        table = doc.setdefault("tool", tomlkit.table(is_super_table=True)).setdefault("ctxgraph", tomlkit.table())
    ranking = tomlkit.table(is_super_table=True)
    for kind in ("full_text", "dense"):
        sub = tomlkit.table()
        for name, value in getattr(weights, kind).model_dump().items():
            sub[name] = float(value)
        ranking[kind] = sub
    table["ranking"] = ranking
    out = tomlkit.dumps(doc)
    tomllib.loads(out)  # what was written must read back
    try:
        with atomic_write(path, text=True) as handle:
            handle.write(out)
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot write settings: {exc}") from None

