"""Repository paths: where a module went when it became a package. Pure."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence


def moved_folder(path: str) -> str | None:
    """The folder a module would have become as a package: ``pkg/data.py`` ->
    ``pkg/data/`` (None for a name without an extension: ``Makefile``, ``.env``)."""
    name = path.rsplit("/", 1)[-1]
    if "." not in name[1:]:
        return None
    return path.rsplit(".", 1)[0] + "/"


def successors(gone: Iterable[str], mapped: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Paths no longer in the context map (``gone``) whose :func:`moved_folder`
    now holds files of the map (``mapped``, sorted), each with those files."""
    found: dict[str, tuple[str, ...]] = {}
    for path in gone:
        folder = moved_folder(path)
        if folder is None:
            continue
        start = bisect.bisect_left(mapped, folder)
        end = bisect.bisect_left(mapped, folder[:-1] + chr(ord("/") + 1))
        if end > start:
            found[path] = tuple(mapped[start:end])
    return found


__all__ = ["moved_folder", "successors"]
