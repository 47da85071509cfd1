"""A long-running process's heap, settled once it is warm.

Python's cyclic garbage collector walks every container object it tracks on
each full collection. A process serving contexts (``ctxgraph mcp``) holds
some 60,000 of them for good once its first context is computed — modules,
the signal pipeline, the embedding model, the store's driver and caches —
and on the 1M-node Neo4j benchmark graph a full collection came every 40 to
50 contexts and took 20-35 ms: about 2 % of contexts paid it, enough to move
the 95th percentile by 5 ms (docs/performance.md). :func:`settle` collects
once and then moves everything alive into the permanent generation
(``gc.freeze``), which later collections skip; whatever is made afterwards
is collected as before. What is frozen is never freed as part of a cycle, so
it is done once, when what is alive is what the process keeps.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_settled: list[bool] = []


def settle() -> bool:
    """Collect, then freeze what is alive, once per process: True the time it
    did, False afterwards."""
    with _lock:
        if _settled:
            return False
        _settled.append(True)
    gc.collect()
    gc.freeze()
    return True


__all__ = ["settle"]
