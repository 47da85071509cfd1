"""Reading document files (handoffs, task files, context maps) for the
service; parsing them is ``core.documents``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ctxgraph.core.documents import DOCUMENT_SUFFIXES, MAX_DOCUMENT_BYTES
from ctxgraph.errors import InvalidDocumentError


def read_document(path: Path) -> bytes:
    """A document file's bytes; a missing, unreadable or oversized file is an
    :class:`InvalidDocumentError` naming it (never read past the size limit)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except FileNotFoundError:
        raise InvalidDocumentError(str(path), [("", "no such file")]) from None
    except IsADirectoryError:
        raise InvalidDocumentError(str(path), [("", "is a folder; expected a file")]) from None
    except OSError as exc:
        raise InvalidDocumentError(str(path), [("", f"cannot read: {exc.strerror or exc}")]) from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise InvalidDocumentError(str(path), [("", f"document is over the limit of {MAX_DOCUMENT_BYTES:,} bytes")])
    return data


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files as given, folders as their document files (sorted, recursive)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in DOCUMENT_SUFFIXES)
            )
        else:
            out.append(path)
    return out


__all__ = ["expand_paths", "read_document"]
