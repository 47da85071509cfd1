"""Where a memory chunk is in its changed file (compute/freshness.py ``relocate``). Pure."""

from __future__ import annotations

from ctxgraph.compute.freshness import relocate

CHUNK = "def verify(token):\n    return decode(token)"


def test_its_text_is_found_nearest_its_old_place() -> None:
    current = f"{CHUNK}\n\n# padding\n\n{CHUNK}\n"
    assert relocate(CHUNK, 5, 6, current) == (6, 7, CHUNK, True)
    assert relocate(CHUNK, 2, 3, current) == (1, 2, CHUNK, True)
    assert relocate(CHUNK, 1, 2, "\n" + current) == (2, 3, CHUNK, True)


def test_otherwise_the_lines_in_its_place() -> None:
    edited = "import jwt\n\ndef verify(token):\n    return decode(token, leeway=30)\n"
    # its first line is still there (line 3): the chunk starts there now
    assert relocate(CHUNK, 1, 2, edited) == (3, 4, "def verify(token):\n    return decode(token, leeway=30)", False)
    # no line of it left: its old line numbers
    rewritten = "def check(token, leeway=30):\n    return decode(token, leeway)\nX = 1\n"
    assert relocate(CHUNK, 2, 3, rewritten) == (2, 3, "    return decode(token, leeway)\nX = 1", False)
    # a blank line in common says nothing
    assert relocate("a = 1\n\nb = 2", 1, 3, "\nc = 3\nd = 4\ne = 5") == (1, 3, "\nc = 3\nd = 4", False)


def test_a_place_past_the_end_is_none() -> None:
    assert relocate(CHUNK, 10, 11, "x = 1\n") is None
    assert relocate(CHUNK, 1, 2, "") is None
