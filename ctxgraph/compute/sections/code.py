"""Phase 4 (docs/concepts.md): the code a context names — the context map's
files, ranked with the history's evidence when there is some
(:func:`ctxgraph.compute.ranking.rank_files`), else by the context map's own
scores; deleted files left out and renamed ones at their new path
(compute.freshness); fused with the associative memory when it answered (its
best chunks shown as snippets). Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ctxgraph.compute.blocks import code_block, snippet_block
from ctxgraph.compute.budget import Block
from ctxgraph.compute.code_memory import fuse, memory_found
from ctxgraph.compute.limits import CONTEXT_MAP_TOP
from ctxgraph.compute.output import CodeRef
from ctxgraph.compute.ranking import rank_files
from ctxgraph.compute.relevance import filter_context_map
from ctxgraph.compute.sections.base import Collected, Ground
from ctxgraph.core.models import infer_component

#: The leading files whose code notes a context may show (:func:`off_files`).
NOTE_FILES_TOP = 5
#: Files named (snippets and code references) when the associative memory ranks them.
MEMORY_FILES_TOP = 9


def _from_history(g: Ground) -> bool:
    return g.candidates.history is not None and bool(g.candidates.history.files)


def ranked_refs(g: Ground, out: Collected) -> Iterable[CodeRef]:
    """The context map's files best first: by the history's evidence when there
    is some (each file's features kept in ``out.features`` as it is made),
    else by the context map's own scores. Without memory to fuse with or files
    to check, only the first CONTEXT_MAP_TOP are made."""
    c = g.candidates
    if c.history is None or not c.history.files:
        yield from filter_context_map(c.context_map, g.signals)
        return
    ranked = rank_files(c.history, g.signals, g.config.ranking)
    shown = ranked if c.memory is not None or g.fresh.files else ranked[:CONTEXT_MAP_TOP]
    # made as walked: the walk of live_refs stops at what it shows
    for entry, score, parts in shown:
        out.features[entry.location] = parts
        yield CodeRef(file=entry.location, component=entry.component, notes=entry.notes, relevance=score,
                      seed_score=int(parts["seed"]))


def live_refs(g: Ground, refs: Iterable[CodeRef], out: Collected,
              ) -> tuple[list[CodeRef], list[tuple[CodeRef, str]]]:
    """The references to files still in the work tree (renamed ones at their new
    path), and those retired with the reason (only where they would have been
    shown), before any cut."""
    if not g.fresh.files:
        return list(refs), []
    live: dict[str, CodeRef] = {}
    retired: list[tuple[CodeRef, str]] = []
    for ref in refs:
        if g.candidates.memory is None and len(live) >= CONTEXT_MAP_TOP:
            break  # the rest is cut below (and none of it explained): its files are not asked about
        gone, location = g.fresh.code_file(ref.file)
        if gone and len(live) < CONTEXT_MAP_TOP:  # explained where it would have been shown
            retired.append((ref, gone))
        elif not gone and location not in live:
            if location != ref.file:
                if ref.file in out.features:
                    out.features[location] = out.features[ref.file]
                ref = ref.model_copy(update={"file": location})
            live[location] = ref
    return list(live.values()), retired


def with_memory(g: Ground, refs: list[CodeRef], out: Collected) -> tuple[list[CodeRef], list[str]]:
    """Associative memory: files fused with the graph's ranking; the best chunks
    added as snippets, their files not repeated among the references (the
    files the history backs keep their places: compute.code_memory.kept).
    The references and the snippets' files."""
    memory, history = g.candidates.memory, g.candidates.history
    assert memory is not None
    nearest = history.neighbours if history is not None else ()
    fusion = fuse([r.file for r in refs], memory, g.config,
                  [r.relevance for r in refs] if _from_history(g) else None,
                  max((n.score for n in nearest), default=None))
    known = {r.file: r for r in refs}
    shown = {s.path for s in fusion.snippets}
    refs = [
        (known.get(path) or CodeRef(file=path, component=infer_component(path), notes=memory_found(found),
                                    relevance=0.0)).model_copy(update={"relevance": round(fused * 1000, 4)})
        for path, fused, found in fusion.files if path not in shown
    ]
    for n, snip in enumerate(fusion.snippets):
        out.add(snippet_block(snip, round(snip.score * 1000, 4) + (len(fusion.snippets) - n) * 1e-6))
    out.memory_note = (f"project {memory.project}: {len(memory.by_vector)} vector and "
                       f"{len(memory.by_text)} full-text matches, {len(fusion.snippets)} snippets, "
                       f"{sum(1 for f in fusion.files if 'graph' not in f[2])} files added by memory")
    # A file shown as a snippet takes the place of a code reference.
    return refs[:max(0, MEMORY_FILES_TOP - len(fusion.snippets))], list(dict.fromkeys(s.path for s in fusion.snippets))


def code_blocks(g: Ground, out: Collected) -> None:
    """The snippets, the code references (at most CONTEXT_MAP_TOP), then the
    retired references with their reason; the code notes off these files dropped."""
    refs, retired = live_refs(g, ranked_refs(g, out), out)
    snippet_files: list[str] = []
    if g.candidates.memory is not None:
        refs, snippet_files = with_memory(g, refs, out)
    refs = refs[:CONTEXT_MAP_TOP]
    off_files(out.path_notes, [*snippet_files, *(r.file for r in refs)])
    for ref in refs:
        out.add(code_block(ref, out.features.get(ref.file)))
    for ref, gone in retired:
        out.add(code_block(ref, out.features.get(ref.file)), gone)
    out.code_refs = refs


def off_files(notes: Sequence[tuple[Block, str]], files: Sequence[str]) -> None:
    """A gotcha about one file (scope ``path``: a code note) found by its tags
    is shown only when its file is among the :data:`NOTE_FILES_TOP` files the
    context puts first (its snippets, then its code references): it is about
    that file, and shown for another it would name a file the ranking did not
    choose, ahead of those it did. A context that names no file keeps them:
    they displace nothing there."""
    leading = frozenset(files[:NOTE_FILES_TOP])
    if not leading:
        return
    for block, path in notes:
        if path not in leading:
            block.drop("off-files")


__all__ = ["MEMORY_FILES_TOP", "NOTE_FILES_TOP", "code_blocks", "live_refs", "off_files", "ranked_refs"]
