"""Files: a context-map entry and the repository-relative path helpers."""

from __future__ import annotations

import posixpath

from pydantic import BaseModel, Field, field_validator

from ctxgraph.core.models.base import VALUE


class FileEntry(BaseModel):
    """A context-map entry: a file of the project with its component and notes."""

    model_config = VALUE

    path: str = Field(min_length=1, max_length=4096)
    component: str = ""
    notes: str = ""
    lines: str | None = None

    @field_validator("path")
    @classmethod
    def _clean_path(cls, value: str) -> str:
        return clean_path(value)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.lines}" if self.lines else self.path


def clean_path(value: str) -> str:
    """Normalize a repository-relative path: forward slashes, no ``./``, no line suffix."""
    text = value.strip().replace("\\", "/")
    if not text:
        raise ValueError("must not be blank")
    if "\x00" in text:
        raise ValueError("must not contain NUL bytes")
    text = posixpath.normpath(text)
    return text[2:] if text.startswith("./") else text


def infer_component(path: str) -> str:
    """The component a file belongs to: its nearest meaningful folder, else its stem.

    ``src/auth/jwt.ts`` -> ``auth``; ``src/app.ts`` -> ``app``; ``README.md`` -> ``README``.
    """
    parts = [p for p in path.split("/") if p and p not in {".", ".."}]
    generic = {"src", "lib", "app", "pkg", "source", "sources", "packages", "internal"}
    folders = [p for p in parts[:-1] if p.lower() not in generic]
    if folders:
        return folders[-1]
    stem = parts[-1] if parts else path
    return stem.split(".")[0] or stem


def split_location(location: str) -> tuple[str, str | None]:
    """``src/a.ts:10-24`` -> (``src/a.ts``, ``10-24``); a plain path has no lines."""
    head, sep, tail = location.rpartition(":")
    if sep and head and tail and all(c.isdigit() or c in "-," for c in tail):
        return head, tail
    return location, None
