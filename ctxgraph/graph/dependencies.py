"""Dependency-graph traversal with networkx (the same for every store)."""

from __future__ import annotations

from collections.abc import Callable, Iterable


def find_cycle(edges: Iterable[tuple[str, str]], new_edges: Iterable[tuple[str, str]]) -> list[str] | None:
    """The cycle that adding ``new_edges`` (task -> dependency) to ``edges`` would
    close, as a list of task ids that starts and ends with the same id; or None."""
    added = list(new_edges)
    if not added:
        return None
    import networkx as nx  # here: a task added without dependencies never pays its import

    graph = nx.DiGraph()
    graph.add_edges_from(edges)
    graph.add_edges_from(added)
    # One search from a root pointing at every new edge's source, not one per
    # source: networkx keeps a search's visited edges per source, so a batch of
    # 1,000 new tasks walked their shared history 1,000 times. The root has no
    # incoming edge, so it is in no cycle; sources are visited in the same order.
    root = ("find_cycle", "root")
    graph.add_edges_from((root, a) for a in dict.fromkeys(a for a, _ in added))
    try:
        cycle = nx.find_cycle(graph, source=root)
    except nx.NetworkXNoCycle:
        return None
    return [edge[0] for edge in cycle] + [cycle[0][0]]



def reachable_edges(
    step: Callable[[list[str]], list[tuple[str, str]]], start: Iterable[str], *, max_levels: int
) -> list[tuple[str, str]] | None:
    """The (task, dependency) edges reachable from ``start``, sorted, found by a
    breadth-first search whose ``step`` returns the edges out of a frontier;
    None when the search would need more than ``max_levels`` steps (the caller
    then reads every edge: one query beats many round trips)."""
    seen = set(start)
    frontier = sorted(seen)
    edges: list[tuple[str, str]] = []
    for _ in range(max_levels):
        if not frontier:
            break
        found = step(frontier)
        edges += found
        frontier = sorted({dep for _, dep in found} - seen)
        seen.update(frontier)
    return None if frontier else sorted(edges)
