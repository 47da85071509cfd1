"""The embedded store's reading of the finished history for ``ctxgraph tune``
(``LocalStore.replay_corpus``): one read, in one snapshot."""

from __future__ import annotations

import json
import sqlite3

import numpy as np

from ctxgraph.graph.records import file_from_props
from ctxgraph.graph.replay_records import ReplayFile, ReplayTask, replay_task

_TASKS = ("SELECT id, props FROM nodes WHERE label = 'Task' "
          "AND json_extract(props, '$.status') = 'completed' ORDER BY id")
_TOUCHED = ("SELECT h.src_id, f.dst_id FROM edges h JOIN edges f ON f.src_label = 'Handoff' "
            "AND f.src_id = h.dst_id AND f.type IN ('MODIFIED', 'CREATED') AND f.dst_label = 'File' "
            "WHERE h.src_label = 'Task' AND h.type = 'HANDED_OFF'")
_VECTORS = "SELECT id, vec FROM task_vectors"
_FILES = "SELECT props FROM nodes WHERE label = 'File' ORDER BY id"


def replay_corpus(cur: sqlite3.Cursor, *, vectors: bool) -> tuple[list[ReplayTask], list[ReplayFile]]:
    """Every finished task (by id) and every file; ``vectors``: whether the
    task_vectors table exists."""
    touched: dict[str, list[str]] = {}
    for tid, path in cur.execute(_TOUCHED):
        touched.setdefault(tid, []).append(path)
    vecs = {tid: np.frombuffer(blob, dtype=np.float32) for tid, blob in cur.execute(_VECTORS)} if vectors else {}
    tasks = [replay_task(json.loads(props), touched.get(tid), vecs.get(tid)) for tid, props in cur.execute(_TASKS)]
    files = []
    for (text,) in cur.execute(_FILES):
        props = json.loads(text)
        files.append(ReplayFile(file_from_props(props), tuple(props.get("terms") or ()),
                                bool(props.get("in_map", True))))
    return tasks, files
