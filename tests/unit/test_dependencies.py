from ctxgraph.graph.dependencies import find_cycle, reachable_edges


def test_find_cycle() -> None:
    edges = [("b", "a"), ("c", "b")]
    assert find_cycle(edges, []) is None
    assert find_cycle(edges, [("d", "c")]) is None
    cycle = find_cycle(edges, [("a", "c")])
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert find_cycle([], [("x", "x")]) == ["x", "x"]


def test_find_cycle_searches_the_shared_history_once() -> None:
    # 300 new tasks depend on one long chain whose far end now depends back on it.
    chain = [(f"c{i}", f"c{i + 1}") for i in range(200)]
    new = [(f"n{i}", "c0") for i in range(300)]
    assert find_cycle(chain, new) is None
    cycle = find_cycle(chain, [*new, ("c200", "c0")])
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {f"c{i}" for i in range(201)}
    # two new edges closing two cycles: the first one's is reported
    first = find_cycle([("b", "a"), ("y", "x")], [("a", "b"), ("x", "y")])
    assert first is not None and set(first) == {"a", "b"}


def test_reachable_edges_is_one_breadth_first_search() -> None:
    graph = {"d": ["a", "c"], "c": ["b"], "b": ["a"], "y": ["x"]}
    asked: list[list[str]] = []

    def step(ids: list[str]) -> list[tuple[str, str]]:
        asked.append(ids)
        return [(i, dep) for i in ids for dep in graph.get(i, [])]

    assert reachable_edges(step, ["d", "zz"], max_levels=8) == [("b", "a"), ("c", "b"), ("d", "a"), ("d", "c")]
    assert asked == [["d", "zz"], ["a", "c"], ["b"]]  # each task expanded once
    assert reachable_edges(step, [], max_levels=8) == []
    assert reachable_edges(step, ["d"], max_levels=2) is None  # deeper than allowed: read every edge
    assert reachable_edges(step, ["c"], max_levels=3) == [("b", "a"), ("c", "b")]
