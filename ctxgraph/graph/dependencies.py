"""Dependency-graph traversal with networkx (the same for every store)."""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx


def find_cycle(edges: Iterable[tuple[str, str]], new_edges: Iterable[tuple[str, str]]) -> list[str] | None:
    """The cycle that adding ``new_edges`` (task -> dependency) to ``edges`` would
    close, as a list of task ids that starts and ends with the same id; or None."""
    added = list(new_edges)
    if not added:
        return None
    graph = nx.DiGraph()
    graph.add_edges_from(edges)
    graph.add_edges_from(added)
    try:
        cycle = nx.find_cycle(graph, source=[a for a, _ in added])
    except nx.NetworkXNoCycle:
        return None
    return [edge[0] for edge in cycle] + [cycle[0][0]]

