"""Every Cypher statement ctxgraph runs, one ``.cypher`` file each.

Statements are always parameterized (``$name``); nothing is assembled from
input. ``load(name)`` reads a file once per process.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

#: A line of a statement file that stands for a part (``parts/<name>.cypher``),
#: with the words its ``{{key}}`` slots take: ``// include: term_stats df=task_df``.
INCLUDE = re.compile(r"^([ \t]*)// include: ([a-z_]+)((?: [a-z_]+=[A-Za-z_]+)*)[ \t]*$", re.M)


def _read(folder: str, name: str) -> str | None:
    """The text of ``<folder>/<name>.cypher`` in this package (folder "" for
    the statements themselves), or None when there is no such file."""
    resource = resources.files(__name__)
    if folder:
        resource = resource / folder
    resource = resource / f"{name}.cypher"
    return resource.read_text(encoding="utf-8") if resource.is_file() else None


@functools.cache
def part(name: str) -> str:
    """The text of ``parts/<name>.cypher``: a piece two statement files share."""
    text = _read("parts", name)
    if text is None:
        raise KeyError(f"no Cypher part named {name!r}")
    return text


def _included(match: re.Match[str]) -> str:
    indent, name, words = match.group(1), match.group(2), match.group(3)
    body = part(name)
    for pair in words.split():
        key, value = pair.split("=")
        body = body.replace("{{" + key + "}}", value)
    left = re.search(r"\{\{\w+\}\}", body)
    if left:
        raise KeyError(f"Cypher part {name!r} needs {left.group(0)} (include it with {left.group(0)[2:-2]}=...)")
    return "\n".join(indent + line if line else line for line in body.rstrip("\n").split("\n"))


@functools.cache
def load(name: str) -> str:
    """The text of ``<name>.cypher`` (comment lines kept; Neo4j ignores them),
    each ``// include:`` line replaced by its part, indented as the line is.
    Parts are static files and their slots take words written in the
    statement file, never input: statements stay parameterized."""
    text = _read("", name)
    if text is None:
        raise KeyError(f"no Cypher statement named {name!r}")
    return INCLUDE.sub(_included, text)


@functools.cache
def load_analyst(name: str) -> str:
    """The text of a saved analyst query, ``analyst/<name>.cypher``."""
    text = _read("analyst", name)
    if text is None:
        raise KeyError(f"no saved analyst query named {name!r} (see: {', '.join(analyst_names())})")
    return text


def analyst_title(name: str) -> str:
    """A saved query's short title: its first line, a comment (Neo4j Browser
    shows it as the saved script's name)."""
    return load_analyst(name).split("\n", 1)[0].removeprefix("//").strip()


def analyst_parameters(name: str) -> list[str]:
    """The ``$parameters`` a saved query needs, in order of first use."""
    body = "\n".join(line for line in load_analyst(name).splitlines() if not line.lstrip().startswith("//"))
    return list(dict.fromkeys(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", body)))


def analyst_names() -> list[str]:
    folder = resources.files(__name__) / "analyst"
    return sorted(p.name.removesuffix(".cypher") for p in folder.iterdir() if p.name.endswith(".cypher"))


def statements(name: str) -> list[str]:
    """A file of several statements (``schema``), split on semicolons."""
    body = "\n".join(
        line for line in load(name).splitlines() if not line.lstrip().startswith("//")
    )
    return [s.strip() for s in body.split(";") if s.strip()]


def names() -> list[str]:
    """Names of every statement file shipped (analyst queries excluded)."""
    return sorted(
        p.name.removesuffix(".cypher")
        for p in resources.files(__name__).iterdir()
        if p.name.endswith(".cypher")
    )
