"""The associative memory's read path at context time (the IO half).

:func:`recall` picks the project, checks that its index is usable (present,
complete, not stale), embeds the task's intent, asks the store for the top
chunks by vector and by full text, and passes every hit through the file
gates. It never raises for a memory problem: a missing or stale index, an
embedding failure or a store error leaves the rest of the context intact and
comes back as a note for the debug section. An index whose first run has
not finished (being built in the background, or cut short) is searched as it
is, with a note ``partial (written/found files)``. Fusion and the snippet caps are
pure and happen in :mod:`ctxgraph.compute.code_memory`.

Each hit is checked against its file just in time (:func:`check`), stat
first as the code anchors are (docs/freshness.md): a file whose size and
mtime are the ones it was indexed with is not read; another is read, and
when its content differs from the indexed one the hit shows the chunk where
it is now (:func:`ctxgraph.compute.freshness.relocate`). A file gone, or no
longer a text file inside the root, drops the hit. When the project's root
is not a folder on this machine (an index made elsewhere), the hits are
shown as indexed. Either way no hit is shown unredacted: a chunk stored under
other secret rules than the service's (an index older than them, an import)
is redacted again, and a hit on a file they leave out by name is dropped
(:mod:`ctxgraph.memory.secrets`).
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from ctxgraph.compute.freshness import relocate
from ctxgraph.core.models import MemoryHit, MemoryProject, MemoryRecall
from ctxgraph.errors import CtxgraphError
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.embed import QUERY_PIECES, Vectors
from ctxgraph.memory.scan import Skipped, inside, read
from ctxgraph.memory.secrets import DEFAULT, SecretFilter

log = logging.getLogger(__name__)

#: Chunks taken from each search (vector, full text) before fusion.
TOP_K = 5


def check(root: Path, hit: MemoryHit, secrets: SecretFilter = DEFAULT) -> MemoryHit | str:
    """The hit as its file is now, or why it may not be shown. Its file must
    still exist, resolve (symlinks followed) inside the indexed root and be
    a text file the index would read. A file with the size and mtime it was
    indexed with is not read (one stat: the hit as it is); another is read, and if its
    content is not the indexed one (sha256) the chunk is placed in it as it
    is now (:func:`ctxgraph.compute.freshness.relocate`): moved when its text
    is still there, else the lines in its place with ``changed`` set; a place
    past the file's end drops the hit ("lines gone"). A file read goes through
    ``secrets`` as the index's did: left out by its name, its values redacted."""
    chunk = hit.chunk
    rule = secrets.secret_file(chunk.path)
    if rule is not None:  # a file left out by name (under rules newer than the index)
        return f"secret file (by name): {rule}"
    if chunk.file_mtime_ns and _clean(chunk.path):  # one stat, nothing read (nor resolved: nothing is read)
        try:
            st = os.stat(f"{root}/{chunk.path}")
        except (OSError, ValueError):
            st = None
        if st is not None and stat.S_ISREG(st.st_mode) and (st.st_mtime_ns, st.st_size) == (
                chunk.file_mtime_ns, chunk.file_size):
            return hit
    target = inside(root, chunk.path)
    if target is None:
        return "missing" if not (root / chunk.path).exists() else "outside the indexed root"
    source = read(target, chunk.path, secrets)
    if isinstance(source, Skipped):
        return source.reason
    if source.sha256 == chunk.file_sha256:
        return hit
    placed = relocate(chunk.text, chunk.start_line, chunk.end_line, source.text)
    if placed is None:
        return "lines gone"
    start, end, text, same = placed
    return hit.model_copy(update={"chunk": chunk.model_copy(update={"start_line": start, "end_line": end,
                                                                    "text": text}),
                                  "changed": not same})


def _screened(hits: Sequence[MemoryHit], secrets: SecretFilter) -> list[MemoryHit]:
    """The hits but those on files ``secrets`` leaves out by name, a chunk stored
    under other rules (an index made before them, an import) redacted as the
    index would now: none is shown unredacted, whatever the store holds."""
    out = []
    for hit in hits:
        chunk = hit.chunk
        if secrets.secret_file(chunk.path) is not None:
            continue
        if not chunk.file_sha256.startswith(secrets.tag):
            text, n = secrets.redact(chunk.path, chunk.text)
            if n:
                hit = hit.model_copy(update={"chunk": chunk.model_copy(update={"text": text})})
        out.append(hit)
    return out


def _clean(path: str) -> bool:
    """A relative path with no ``.`` or ``..`` segment (as the index writes them)."""
    return bool(path) and path[0] != "/" and not any(p in (".", "..", "") for p in path.split("/"))


def choose(projects: Sequence[MemoryProject], wanted: str | None) -> MemoryProject | str:
    """The project to search, or why there is none."""
    if wanted:
        for p in projects:
            if p.id == wanted:
                return p
        return f"project {wanted!r} is not indexed (ctxgraph index PATH --project {wanted})"
    if not projects:
        return "no project indexed (ctxgraph index PATH)"
    if len(projects) > 1:
        return f"{len(projects)} projects indexed; name one (--project, CTXGRAPH_PROJECT)"
    return projects[0]


def age_hours(project: MemoryProject, now: datetime) -> float | None:
    if not project.indexed_at:
        return None
    then = datetime.fromisoformat(project.indexed_at.replace("Z", "+00:00"))
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return (now - then).total_seconds() / 3600


def recall(
    store: KnowledgeStore,
    projects: Sequence[MemoryProject],
    text: str,
    terms: Sequence[str],
    *,
    project: str | None,
    stale_hours: float,
    embedder: Vectors | None = None,
    now: datetime | None = None,
    query_vector: Sequence[float] | None = None,
    check_files: bool = True,
    secrets: SecretFilter = DEFAULT,
) -> tuple[MemoryRecall | None, list[str]]:
    """(what the memory found, notes for the debug section); ``projects`` are
    the indexed projects (:attr:`Candidates.memory_projects`). ``query_vector``:
    ``text`` already embedded (``QUERY_PIECES`` word pieces), else it is here.
    ``check_files=False``: the hits as indexed, their files not looked at
    (what the check costs is measured against it: benchmarks/memory_fresh.py)."""
    notes: list[str] = []
    found = choose(projects, project)
    if isinstance(found, str):
        return None, [f"associative memory skipped: {found}"]
    age = age_hours(found, now or datetime.now(UTC))
    if age is None:  # a first run not finished (yet): what it wrote is used
        notes.append(f"associative memory: partial ({found.files_indexed:,}/{found.files:,} files; the index "
                     f"of {found.id} is not complete)")
    elif age > stale_hours:
        return None, [f"associative memory skipped: the index of {found.id} is stale (indexed "
                      f"{age:.1f} h ago, limit {stale_hours:g} h; re-run ctxgraph index)"]
    vector: list[float] | None = None
    if found.embeddings and query_vector is not None:
        vector = [float(x) for x in query_vector]
    elif found.embeddings:
        try:
            if embedder is None:
                from ctxgraph.memory.embed import shared_embedder

                embedder = shared_embedder()
            vectors = embedder.embed([text], max_pieces=QUERY_PIECES)
            vector = [float(x) for x in vectors[0]]
        except Exception as exc:  # any embedding failure only costs the vector search
            log.warning("embedding the task failed: %s", exc)
            notes.append(f"associative memory: embedding failed ({exc}); full-text matches only")
    try:
        by_vector, by_text = store.search_memory(found.id, vector, terms, TOP_K)
    except CtxgraphError as exc:
        return None, [*notes, f"associative memory skipped: {exc}"]
    by_vector, by_text = _screened(by_vector, secrets), _screened(by_text, secrets)
    root = Path(found.root)
    if not check_files:
        return MemoryRecall(project=found.id, by_vector=tuple(by_vector), by_text=tuple(by_text)), notes
    if not root.is_dir():
        notes.append(f"associative memory: {found.root} is not a folder here; snippets shown as indexed")
        return MemoryRecall(project=found.id, by_vector=tuple(by_vector), by_text=tuple(by_text)), notes
    kept: dict[str, list[MemoryHit]] = {"vector": [], "text": []}
    refused: dict[str, int] = {}
    seen: dict[tuple[str, int], MemoryHit | str] = {}
    placed = changed = 0
    for name, hits in (("vector", by_vector), ("text", by_text)):
        for hit in hits:
            key = (hit.chunk.path, hit.chunk.start_line)
            if key not in seen:  # a chunk in both lists is checked once
                seen[key] = got = check(root, hit, secrets)
                if isinstance(got, MemoryHit) and got is not hit:
                    placed += 1
                    changed += got.changed
            got = seen[key]
            if isinstance(got, str):
                refused[got] = refused.get(got, 0) + 1
            else:
                kept[name].append(got.model_copy(update={"score": hit.score, "rank": hit.rank})
                                  if got.chunk is not hit.chunk else hit)
    if refused:
        notes.append("associative memory: hits refused by the gates: "
                     + ", ".join(f"{n} {why}" for why, n in sorted(refused.items())))
    if placed:
        notes.append(f"associative memory: {placed} chunks read again from their changed files "
                     f"({changed} no longer hold their indexed text: the lines in their place shown, marked)")
    return MemoryRecall(project=found.id, by_vector=tuple(kept["vector"]), by_text=tuple(kept["text"])), notes
