"""The README's "Knowledge that knows when it is stale" session is real: its
commands, run one by one in an empty folder with the three documents it
shows, print what it shows (the embedded store, this environment's
``ctxgraph`` with the embedding model installed, as after the README's first
command)."""

from __future__ import annotations

import re
from pathlib import Path

from _fresh_install import README

from tests._sessions import documents, replay, section, steps

SECTION = section(README, "Knowledge that knows when it is stale")


def _documents() -> dict[str, str]:
    found = documents(SECTION)
    # h047.yaml is the second block after the sentence naming both handoffs.
    blocks = re.findall(r"```yaml\n(.*?)```", SECTION, re.S)
    found["h047.yaml"] = next(b for b in blocks if b.startswith("task_id: task-047"))
    return found


def test_the_stale_session_prints_what_the_readme_shows(tmp_path: Path) -> None:
    found = _documents()
    assert set(found) == {"tasks.yaml", "h043.yaml", "h047.yaml"}
    for name, text in found.items():
        (tmp_path / name).write_text(text)
    block = re.search(r"```console\n(.*?)```", SECTION, re.S)
    assert block is not None, "the section has no console session"
    session = steps(block.group(1))
    assert any(command.startswith("ctxgraph context") for command, _ in session)
    assert replay(session, tmp_path) == []
    shown = session[-1][1]
    assert "⚠ code changed since task-043: src/auth/jwt.py" in shown
    assert "(replaces: Sign JWT tokens with HS256" in shown and "- Sign JWT tokens with HS256" not in shown
    assert "task-052 (in progress) also expects to change" in shown
