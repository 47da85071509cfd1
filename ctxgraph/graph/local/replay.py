"""The embedded store's reading of the finished history for ``ctxgraph tune``
(``LocalStore.replay_corpus``): one read, in one snapshot."""

from __future__ import annotations

import json
import sqlite3

from ctxgraph.core.models import ReplayFile, ReplayTask
from ctxgraph.graph.local import sql
from ctxgraph.graph.records import file_from_props, replay_task


def replay_corpus(cur: sqlite3.Cursor, *, vectors: bool) -> tuple[list[ReplayTask], list[ReplayFile]]:
    """Every finished task (by id) and every file; ``vectors``: whether the
    task_vectors table exists."""
    import numpy as np

    touched: dict[str, list[str]] = {}
    for tid, path in cur.execute(sql.TOUCHED):
        touched.setdefault(tid, []).append(path)
    vecs = ({tid: np.frombuffer(blob, dtype=np.float32) for tid, blob in cur.execute(sql.TASK_VECTORS)}
            if vectors else {})
    tasks = [replay_task(json.loads(props), touched.get(tid), vecs.get(tid))
             for tid, props in cur.execute(sql.COMPLETED_TASKS)]
    files = []
    for (text,) in cur.execute(sql.ALL_FILES):
        props = json.loads(text)
        files.append(ReplayFile(file_from_props(props), tuple(props.get("terms") or ()),
                                bool(props.get("in_map", True))))
    return tasks, files
