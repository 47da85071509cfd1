"""Knowledge on day one, without an LLM (issue 44; docs/knowledge-import.md):
the project's ADRs become decisions and the notes its code and docs leave
(``# WARNING:``, ``.. note::``...) become gotchas, each anchored to its file
(a note to its lines) so that freshness tracks it.

:meth:`ProjectKnowledgeMixin.import_project_knowledge` is one call on a
root: incremental (:func:`ctxgraph.sources.files.scan` reads only the files
whose stat or content changed since the last run, whose state the store
keeps), and what a file no longer says — a note edited or deleted, an ADR
gone, a whole file gone — is deleted from the graph in the same
transaction as the rest. When any ADR changed, every ADR is read again: the
supersedes links between them are stated by either side. Writes go through
the store's one bulk write of an import (``write_import``), a transaction
per :data:`WRITE_BATCH` files.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict

from ctxgraph.core.models import ImportBatch, ImportedFile, KnowledgeItem, normalize_timestamp, utcnow
from ctxgraph.errors import CtxgraphError
from ctxgraph.service.anchors import git_head, make_anchor
from ctxgraph.service.base import ServiceBase
from ctxgraph.sources.adr import Adr, adr_folders, is_adr_file, parse_adr
from ctxgraph.sources.comments import syntax
from ctxgraph.sources.files import ReadFile, Scan, read_text, scan
from ctxgraph.sources.items import adr_items, adr_text, note_item, path_words
from ctxgraph.sources.notes import DOC_SUFFIXES, read_notes

#: The import's name in the store's state (``imported_files``).
SOURCE = "knowledge"
#: The ``task_id`` of the anchors an import makes ("code changed since import").
IMPORT_TASK = "import"
#: Files whose items are written in one transaction.
WRITE_BATCH = 500


class NoImportRootError(CtxgraphError):
    """No folder to import from: no root given and none known."""


class KnowledgeImportReport(BaseModel):
    """What an import did: the root and its ADR folders; files looked at
    (ADRs and files that may hold notes) and read (the others' stat was as
    last seen); the decisions from ADRs now in the graph, those of them
    superseded, and the ADR files that give none (not in force: deprecated,
    rejected; or without a title); the gotchas from notes now in the graph;
    markers dropped as noise in the files read, by rule; items written and
    removed; seconds."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    root: str
    adr_folders: tuple[str, ...]
    files: int
    read: int
    decisions: int
    superseded: int
    not_in_force: int
    gotchas: int
    dropped: dict[str, int]
    written: int
    removed: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@dataclass
class _Run:
    """One import's work: items to write and remove, and the files' new state."""

    root: Path
    now: str
    items: dict[str, list[KnowledgeItem]] = field(default_factory=dict)  # by path
    #: ids of items deleted, by the path whose new state says so (written with it)
    removed: dict[str, list[str]] = field(default_factory=dict)
    supersedes: list[tuple[str, str, str]] = field(default_factory=list)
    files: dict[str, ImportedFile] = field(default_factory=dict)  # new state, by path
    dropped: Counter[str] = field(default_factory=Counter)


def note_file(path: str) -> bool:
    """Whether a file may hold notes: it has comments read here, or is docs."""
    return syntax(path) is not None or PurePosixPath(path).suffix.lower() in DOC_SUFFIXES


class ProjectKnowledgeMixin(ServiceBase):
    """The project's ADRs and code notes imported as decisions and gotchas."""

    def import_project_knowledge(
        self, root: str | Path | None = None, *, adrs: bool | None = None, notes: bool | None = None,
        adr_dirs: Sequence[str] | None = None, progress: Callable[[int], None] | None = None,
        at: str | None = None,
    ) -> KnowledgeImportReport:
        """Import the ADRs and code notes under ``root`` (default: the
        service's root). ``adrs``, ``notes`` and ``adr_dirs`` (folders besides
        the usual ones) default to the ``[knowledge]`` settings of the
        settings file found from the root. ``progress`` is called with the
        number of files looked at, every 1,000 and at the end. ``at``: the
        time new and changed items and their anchors are stamped with (ISO;
        default: now)."""
        started = time.perf_counter()
        top = self._import_root(root)
        use_adrs, use_notes, extra = self._import_settings(top, adrs, notes, adr_dirs)
        folders = adr_folders(top, extra) if use_adrs else []

        def kind_of(path: str) -> str | None:
            if folders and is_adr_file(path, folders):
                return "adr"
            return "notes" if use_notes and note_file(path) else None

        previous = {f.path: f for f in self.store.imported_files(SOURCE)}
        found = scan(top, previous, kind_of, progress=progress, secrets=self.secrets)
        run = _Run(top, normalize_timestamp(at) or utcnow())
        self._adrs(run, found, previous)
        self._notes(run, [r for r in found.read if r.state.kind == "notes"], previous)
        for path in found.gone:
            run.removed.setdefault(path, []).extend(previous[path].items)
        written = self._write(run, found)
        final = {f.path: f for f in (*found.unchanged, *found.touched, *run.files.values())}
        adr_files = [f for f in final.values() if f.kind == "adr"]
        decisions = self.store.get_knowledge(sorted(i for f in adr_files for i in f.items))
        return KnowledgeImportReport(
            root=str(top), adr_folders=tuple(folders), files=found.looked_at, read=len(found.read),
            decisions=len(decisions), superseded=sum(1 for d in decisions if d.status == "superseded"),
            not_in_force=sum(1 for f in adr_files if not f.items),
            gotchas=sum(len(f.items) for f in final.values() if f.kind == "notes"),
            dropped=dict(sorted(run.dropped.items())), written=written,
            removed=len({i for ids in run.removed.values() for i in ids}),
            seconds=round(time.perf_counter() - started, 4))

    def _import_root(self, root: str | Path | None) -> Path:
        if root is not None:
            top = Path(root).resolve()
        elif self.root is not None:
            top = self.root.path
        else:
            raise NoImportRootError("no project root is known to import from: pass --root, or run it in a git "
                                    "work tree or beside a ctxgraph.toml")
        if not top.is_dir():
            raise NoImportRootError(f"{top}: not a folder")
        return top

    @staticmethod
    def _import_settings(top: Path, adrs: bool | None, notes: bool | None,
                         adr_dirs: Sequence[str] | None) -> tuple[bool, bool, tuple[str, ...]]:
        if adrs is not None and notes is not None and adr_dirs is not None:
            return adrs, notes, tuple(adr_dirs)
        from ctxgraph.settings import load_settings

        conf = load_settings(start=top).knowledge
        return (conf.adrs if adrs is None else adrs, conf.notes if notes is None else notes,
                conf.adr_dirs if adr_dirs is None else tuple(adr_dirs))

    def _adrs(self, run: _Run, found: Scan, previous: dict[str, ImportedFile]) -> None:
        """Every ADR made again when one was read, is gone or changed kind."""
        read = [r for r in found.read if r.state.kind == "adr"]
        was_adr = {p for p, f in previous.items() if f.kind == "adr"}
        changed = {r.state.path for r in found.read} | set(found.gone)
        if not read and not (was_adr & changed):
            return
        files = read + [f for f in (read_text(run.root, s.path, self.secrets) for s in found.unchanged + found.touched
                                    if s.kind == "adr") if f is not None]
        stats = {s.path: s for s in found.unchanged + found.touched}
        parsed: list[tuple[ReadFile, Adr]] = []
        for f in files:
            adr = parse_adr(f.state.path, f.text)
            state = stats.get(f.state.path, f.state).model_copy(update={"kind": "adr", "items": ()})
            run.files[f.state.path] = state
            if adr is None:
                run.dropped["adr without a title"] += 1
            else:
                parsed.append((f, adr))
        adrs = [a for _, a in parsed]
        signals = dict(zip((a.path for a in adrs), self.extractor.extract_many([adr_text(a) for a in adrs]),
                           strict=True))
        items, links = adr_items(adrs, signals, self.extractor.normalize_tag, run.now)
        by_path = {i.location or "": i for i in items}
        for path, item in by_path.items():
            run.items[path] = [item]
            run.files[path] = run.files[path].model_copy(update={"items": (item.id,)})
        for p in was_adr:
            run.removed.setdefault(p, []).extend(i for i in previous[p].items if p not in by_path or i != by_path[p].id)
        run.supersedes += links

    def _notes(self, run: _Run, files: Sequence[ReadFile], previous: dict[str, ImportedFile]) -> None:
        """The notes of the files read: their gotchas, and the old ones they no longer hold."""
        found = []
        for f in files:
            result = read_notes(f.state.path, f.text)
            run.dropped.update(d.reason for d in result.dropped)
            found.append((f, result.notes))
        # a docs admonition's tags are its page's alone (sources.items.note_item): its text is not extracted
        texts = ["" if n.form == "docs" else n.text for _, notes in found for n in notes]
        signals = iter(self.extractor.extract_many(texts))
        for f, notes in found:
            tags = self._path_tags(f.state.path) if notes else []
            items = list({i.id: i for i in (note_item(n, next(signals), tags, self.extractor.normalize_tag, run.now)
                                            for n in notes)}.values())
            path = f.state.path
            run.items[path] = items
            run.files[path] = f.state.model_copy(update={"items": tuple(i.id for i in items)})
            ids = {i.id for i in items}
            before = previous.get(path)
            run.removed.setdefault(path, []).extend(i for i in (before.items if before else ()) if i not in ids)

    def _path_tags(self, path: str) -> list[str]:
        """A file's tags: what the signal extractor makes of its path (``click``,
        ``_compat.py``, ``_compat``), and its path's words (``shell``, ``completion``)."""
        return list(dict.fromkeys([*self.extractor.extract(path).keywords, *path_words(path)]))

    def _write(self, run: _Run, found: Scan) -> int:
        """Write the run in batches of :data:`WRITE_BATCH` files (ADRs first,
        then the notes' files, then the state of files touched or gone); the
        number of items written."""
        head = git_head(run.root)
        paths = sorted(run.files, key=lambda p: (run.files[p].kind != "adr", p))
        existing = {k.id: k for k in self.store.get_knowledge(
            sorted({i.id for items in run.items.values() for i in items}))} if run.items else {}
        written = 0
        for start in range(0, max(len(paths), 1), WRITE_BATCH):
            batch = paths[start:start + WRITE_BATCH]
            items = [_kept_times(i, existing.get(i.id)) for p in batch for i in run.items.get(p, ())]
            last = start + WRITE_BATCH >= len(paths)
            owners = [*batch, *(found.gone if last else ()), *(p for p in run.removed if last and p not in run.files)]
            drop = sorted({i for p in owners for i in run.removed.get(p, ())})
            anchors = [a for a in (make_anchor(run.root, owner=i.id, task_id=IMPORT_TASK, path=p,
                                               lines=_lines(i.location), commit=head, at=run.now)
                                   for p in batch for i in run.items.get(p, ())) if a is not None]
            ids = {i.id for i in items}
            touched = [t for t in found.touched if t.path not in run.files] if last else []
            batch_of = ImportBatch(
                items=tuple(items), removed=tuple(d for d in drop if d not in ids), anchors=tuple(anchors),
                supersedes=tuple(run.supersedes) if start == 0 else (),
                files=(*(run.files[p] for p in batch), *touched), gone=tuple(found.gone) if last else ())
            if batch_of != ImportBatch():  # nothing changed: no transaction at all
                self.store.write_import(SOURCE, batch_of)
            written += len(items)
        return written


def _lines(location: str | None) -> str | None:
    """The lines of a ``path:lines`` location; None for a whole file."""
    if not location or ":" not in location:
        return None
    return location.rsplit(":", 1)[1]


def _kept_times(item: KnowledgeItem, old: KnowledgeItem | None) -> KnowledgeItem:
    """``item`` with the stored item's ``created_at`` (when its own is the
    import's time) and ``updated_at`` (when it says the same as before)."""
    if old is None:
        return item
    update: dict[str, Any] = {}
    if item.created_at == item.updated_at and old.created_at:
        update["created_at"] = old.created_at
    if _same(item, old) and old.updated_at:
        update["updated_at"] = old.updated_at
    return item.model_copy(update=update) if update else item


def _same(a: KnowledgeItem, b: KnowledgeItem) -> bool:
    skip = {"created_at", "updated_at", "valid_from", "valid_until"}
    return a.model_dump(exclude=skip) == b.model_dump(exclude=skip)


__all__ = ["IMPORT_TASK", "SOURCE", "KnowledgeImportReport", "NoImportRootError", "ProjectKnowledgeMixin",
           "note_file"]
