from ctxgraph.graph.dependencies import find_cycle


def test_find_cycle() -> None:
    edges = [("b", "a"), ("c", "b")]
    assert find_cycle(edges, []) is None
    assert find_cycle(edges, [("d", "c")]) is None
    cycle = find_cycle(edges, [("a", "c")])
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert find_cycle([], [("x", "x")]) == ["x", "x"]

