"""The heap a long-running process settles once warm (ctxgraph.service.heap)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import gc
from ctxgraph.service.heap import settle
kept = [[i] for i in range(1000)]
assert gc.get_freeze_count() == 0
first, again = settle(), settle()
frozen = gc.get_freeze_count()
made = [[i] for i in range(1000)]  # made afterwards: collected as before
print(first, again, frozen >= 1000, gc.get_freeze_count() == frozen)
"""


def test_settle_freezes_what_is_alive_once() -> None:
    # in a process of its own: freezing is for the whole process
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False", "True", "True"]
