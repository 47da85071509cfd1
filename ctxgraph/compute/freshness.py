"""What a context makes of its candidates' code anchors (issue 32;
docs/freshness.md). Pure.

- A pattern whose location's file is deleted is retired: its block is
  dropped with the reason (``context --explain`` shows it), never rendered.
  A code reference or a dependency's file to read on a deleted file is left
  out the same way.
- A code reference or a dependency's file that is not in the work tree and
  has no anchor saying where it went (a :class:`FileCheck` says so, asked
  only about the files a context may show; the service's answers "gone"
  only when the root holds some of the other candidate files) is left out
  too, with the reason "file not in the work tree".
- A renamed file is shown at its new path (the pattern's location, the
  dependency's file, the code reference).
- A changed anchor marks its item, "⚠ code changed since task-043:
  src/auth/jwt.ts", and multiplies a pattern's relevance by
  :data:`STALE_FACTOR`. (A code reference points at the code as it is now:
  it is not marked.)

A memory snippet's chunk whose file changed since it was indexed is placed
in the file as it is now (:func:`relocate`; the memory's recall reads the
file, stat first): at the lines holding its text now, or, when its text is
no longer there, at the lines in its place, marked :data:`MEMORY_MARK`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

from ctxgraph.core.models import Anchor, split_location

#: A pattern whose anchored code changed since its handoff keeps this share of
#: its relevance (it ranks below an equally relevant pattern whose code did not).
STALE_FACTOR = 0.5

#: The mark of a memory snippet whose indexed text is no longer in its file
#: (the lines shown are those in its place now).
MEMORY_MARK = "⚠ file changed since it was indexed"


def marker(anchor: Anchor) -> str:
    """The mark of an item whose anchor changed."""
    return f"⚠ code changed since {anchor.task_id}: {anchor.current_path}"


def retired_reason(anchor: Anchor) -> str:
    return f"retired: {anchor.reason or 'file deleted: ' + anchor.path} (found {anchor.changed_at or 'now'})"


def _moved(location: str, anchor: Anchor) -> str:
    path, lines = split_location(location)
    if path != anchor.path:
        return location
    return f"{anchor.current_path}:{lines}" if lines else anchor.current_path


class FileCheck(Protocol):
    """The work tree as a context asks about its candidate files, one at a time
    and only those it may show (:class:`FileStates`: what the service
    gathered before compute)."""

    def gone(self, path: str) -> tuple[bool, Sequence[Anchor]]:
        """(whether the candidate file ``path`` is to be treated as gone from
        the work tree, the anchors on gone files, as they are now, that this
        answer found: empty but for the first file found gone)."""
        ...


@dataclass(frozen=True)
class FileStates:
    """The work tree's answer about one context's candidate files, gathered
    by the service before compute (:mod:`ctxgraph.service.work_tree`): plain
    data, asked as a :class:`FileCheck`. ``missing``: the candidate files not
    in the work tree; ``gone``: those of them to be treated as gone (none when
    the root holds too few of the candidate files to be the project's);
    ``anchors``: the anchors on the missing files, as they are now (they may
    say where a file went)."""

    missing: frozenset[str] = frozenset()
    gone_files: frozenset[str] = frozenset()
    anchors: tuple[Anchor, ...] = ()

    def gone(self, path: str) -> tuple[bool, Sequence[Anchor]]:
        """Whether ``path`` is gone, and, for a missing candidate file, the
        anchors on the missing files (:class:`Freshness` adds each once)."""
        if path not in self.missing:
            return False, ()
        return path in self.gone_files, self.anchors


def _order(a: Anchor) -> tuple[str, str]:
    return a.anchored_at, a.id


class Freshness:
    """The anchors of one context's candidates, by owner and by path, and
    which candidate files are gone: those of ``gone``, and those ``files``
    says are when asked (its anchors on gone files join the others then)."""

    def __init__(self, anchors: Iterable[Anchor] = (), gone: Iterable[str] = (),
                 files: FileCheck | None = None) -> None:
        self.by_owner: dict[str, list[Anchor]] = {}
        self.by_path: dict[str, Anchor] = {}
        self.gone = frozenset(gone)
        self._files = files
        self._asked: dict[str, bool] = {}
        self._ids: set[str] = set()
        self._add(anchors)

    def _add(self, anchors: Iterable[Anchor]) -> None:
        for a in sorted((a for a in anchors if a.id not in self._ids), key=_order):
            self._ids.add(a.id)
            mine = self.by_owner.setdefault(a.owner, [])
            mine.append(a)
            if len(mine) > 1 and _order(mine[-2]) > _order(a):
                mine.sort(key=_order)
            cur = self.by_path.get(a.path)
            if cur is None or _order(cur) <= _order(a):
                self.by_path[a.path] = a  # the latest anchoring of a path wins

    def is_gone(self, path: str) -> bool:
        """Whether the candidate file ``path`` is gone from the work tree (asked
        of ``files`` once)."""
        if path in self.gone:
            return True
        if self._files is None:
            return False
        known = self._asked.get(path)
        if known is None:
            known, found = self._files.gone(path)
            self._asked[path] = known
            self._add(found)
        return known

    def __bool__(self) -> bool:
        return bool(self.by_owner or self.gone or self._files is not None)

    @property
    def files(self) -> bool:
        """Whether any code reference may be left out or moved (a file gone or
        to be asked about, an anchor renamed or deleted)."""
        return (bool(self.gone) or self._files is not None
                or any(a.renamed or a.status == "deleted" for a in self.by_path.values()))

    def item(self, item_id: str, location: str | None) -> tuple[str, str | None, str | None, float]:
        """(retired reason or "", the location to show, the marker or None, the
        relevance factor) of a knowledge item."""
        anchors = self.by_owner.get(item_id, ())
        for a in anchors:
            if a.status == "deleted":
                return retired_reason(a), location, None, 1.0
        mark = next((marker(a) for a in anchors if a.status == "changed"), None)
        for a in anchors:
            if a.renamed and location:
                location = _moved(location, a)
        return "", location, mark, STALE_FACTOR if mark else 1.0

    def task_file(self, task_id: str, path: str) -> tuple[bool, str, str | None]:
        """(retired, path to show, marker or None) of a file a dependency's handoff names."""
        for a in self.by_owner.get(task_id, ()):
            if a.path == path:
                if a.status == "deleted":
                    return True, path, None
                return False, a.current_path, marker(a) if a.status == "changed" else None
        gone = self.is_gone(path)
        moved = self.by_path.get(path)
        if moved is not None and moved.renamed and moved.status != "deleted":
            return False, moved.current_path, None
        return gone, path, None

    def code_file(self, location: str) -> tuple[str, str]:
        """(retired reason or "", the location to show) of a code reference."""
        path, _ = split_location(location)
        gone = self.is_gone(path)
        a = self.by_path.get(path)
        if a is None:
            return (f"retired: file not in the work tree: {path}" if gone else ""), location
        if a.status == "deleted":
            return retired_reason(a), location
        return "", _moved(location, a)


def relocate(text: str, start_line: int, end_line: int, current: str) -> tuple[int, int, str, bool] | None:
    """Where a chunk indexed at lines ``start_line``-``end_line`` with ``text``
    is in its file's ``current`` text: (start, end, the lines there, whether
    they are its text), 1-based and inclusive; None when its place is past
    the file's end.

    - Its text, line for line, wherever it is now (the occurrence nearest to
      its old start): code moved by edits elsewhere in the file.
    - Otherwise the lines in its place: its longest run of lines still in the
      file (one non-blank line at least) says where its first line is now;
      with no such run, its old line numbers. As many lines as it had, cut
      at the file's end."""
    old = text.splitlines()
    new = current.splitlines()
    n = len(old) or max(1, end_line - start_line + 1)
    if old:
        near = start_line - 1
        found = [i for i in range(len(new) - n + 1) if new[i] == old[0] and new[i:i + n] == old]
        if found:
            i = min(found, key=lambda i: (abs(i - near), i))
            return i + 1, i + n, "\n".join(new[i:i + n]), True
    first = start_line - 1
    if old and new:
        a, b, size = SequenceMatcher(None, old, new, autojunk=False).find_longest_match(0, len(old), 0, len(new))
        if size and any(line.strip() for line in old[a:a + size]):
            first = b - a
    lo, hi = max(0, first), min(len(new), first + n)
    if lo >= hi:
        return None
    return lo + 1, hi, "\n".join(new[lo:hi]), False


__all__ = ["MEMORY_MARK", "STALE_FACTOR", "FileCheck", "FileStates", "Freshness", "marker", "relocate",
           "retired_reason"]
