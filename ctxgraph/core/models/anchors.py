"""A code anchor (issue 32): a file a handoff or a pattern named, as it was
when the handoff was ingested, and what the last check of the work tree found.

``owner`` is what the anchor vouches for: a task id (the files its handoff
created, modified or named for the next task) or a knowledge item's id (a
pattern's ``location``). ``task_id`` is the task whose handoff anchored it.
``path`` is the path as named (relative to the project's root);
``current_path`` where the file is now (a rename followed), ``path`` until
then. ``blob`` is the git blob id of the file's bytes at anchoring,
``lines_hash`` the hash of the cited ``lines`` (:mod:`ctxgraph.core.anchors`).
``size``/``mtime_ns`` are its stat at anchoring, ``seen_size``/
``seen_mtime_ns`` the stat the last check saw (a check hashes a file only
when they differ). ``status``: ``unchanged``, ``changed`` (``reason`` says
whether the cited lines or the file), ``deleted`` (the anchor then retires
its item; ``changed_at`` is when it was found). ``commit`` is the handoff's
commit, else the work tree's HEAD at anchoring (None without git): where a
rename is looked for from, as from ``seen_commit``, the work tree's HEAD when
a sync last found the file changed or moved.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from ctxgraph.core.models.base import VALUE

AnchorStatus = Literal["unchanged", "changed", "deleted"]


class Anchor(BaseModel):
    model_config = VALUE

    id: str
    owner: str
    task_id: str
    path: str
    lines: str | None = None
    blob: str
    lines_hash: str | None = None
    size: int
    mtime_ns: int
    commit: str | None = None
    anchored_at: str
    status: AnchorStatus = "unchanged"
    current_path: str
    seen_size: int
    seen_mtime_ns: int
    checked_at: str | None = None
    seen_commit: str | None = None
    changed_at: str | None = None
    reason: str | None = None

    @property
    def renamed(self) -> bool:
        return self.current_path != self.path


__all__ = ["Anchor", "AnchorStatus"]
