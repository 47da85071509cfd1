"""Code anchors on the embedded store: the ``anchors`` table (issue 32).

One row per anchor (``id``, ``owner``, ``path``, ``current_path`` and the
anchor's JSON), indexed by owner and by both paths; made by the first write
of anchors. Like the deliveries log its writes leave the graph's generation
as it is (the history and tag caches never read it), and it is not part of
``stats`` or an export: anchors describe the work tree, not the knowledge.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from ctxgraph.core.models import Anchor
from ctxgraph.graph.local import sql
from ctxgraph.graph.local.connection import Connection


def _has_table(cur: sqlite3.Cursor) -> bool:
    return cur.execute(sql.ANCHORS_TABLE_EXISTS).fetchone() is not None


def clear(cur: sqlite3.Cursor) -> None:
    """Delete every anchor (in the caller's ``clear`` transaction)."""
    if _has_table(cur):
        cur.execute(sql.CLEAR_ANCHORS)


class Anchors:
    """The code anchors (a part of ``LocalStore``)."""

    db: Connection

    def write_anchors(self, anchors: Sequence[Anchor]) -> None:
        """Create or replace ``anchors`` (by id), in one transaction."""
        if not anchors:
            return
        with self.db.write() as cur:
            for statement in sql.ANCHORS_TABLE:
                cur.execute(statement)
            cur.executemany(sql.ANCHOR_PUT, [
                (a.id, a.owner, a.path, a.current_path, a.model_dump_json(exclude_none=True)) for a in anchors])

    def read_anchors(self, owners: Sequence[str] | None = None,
                     paths: Sequence[str] | None = None) -> list[Anchor]:
        """Every anchor (both None), else those of ``owners`` or on ``paths``
        (as named or where the file is now); by id."""
        with self.db.read() as cur:
            if owners is None and paths is None:
                rows = cur.execute(sql.ANCHORS_ALL).fetchall() if _has_table(cur) else []
                return sorted((Anchor.model_validate_json(r[0]) for r in rows), key=lambda a: a.id)
            return of(cur, owners or (), paths or ())


def of(cur: sqlite3.Cursor, owners: Sequence[str], paths: Sequence[str]) -> list[Anchor]:
    """The anchors of ``owners`` or on ``paths`` (as named or where the file is
    now), by id, in the caller's read (``read_anchors``, a context's gather)."""
    if not _has_table(cur):
        return []
    wanted = json.dumps(sorted(set(paths)))
    rows = cur.execute(sql.ANCHORS_OF, (json.dumps(sorted(set(owners))), wanted, wanted)).fetchall()
    return sorted((Anchor.model_validate_json(r[0]) for r in rows), key=lambda a: a.id)
