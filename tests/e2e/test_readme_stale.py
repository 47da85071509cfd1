"""The README's "Knowledge that knows when it is stale" session is real: its
commands, run one by one in an empty folder with the three documents it
shows, print what it shows (the embedded store, this environment's
``ctxgraph`` with the embedding model installed, as after the README's first
command)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from _fresh_install import README


def _section(title: str) -> str:
    """The README's section under ``## title``, to the next ``## `` heading
    outside a code block (the session's output has ``## `` lines of its own)."""
    lines = README.split(f"## {title}\n", 1)[1].splitlines(keepends=True)
    fenced = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("## ") and not fenced:
            return "".join(lines[:i])
    return "".join(lines)


SECTION = _section("Knowledge that knows when it is stale")


def _session() -> list[tuple[str, str]]:
    block = re.search(r"```console\n(.*?)```", SECTION, re.S)
    assert block is not None, "the section has no console session"
    steps = []
    for part in re.split(r"^\$ ", block.group(1), flags=re.M)[1:]:
        command, _, expected = part.partition("\n")
        steps.append((command, expected))
    return steps


def _documents() -> dict[str, str]:
    found = dict(re.findall(r"`([\w.-]+\.yaml)`[^\n]*\n\n```yaml\n(.*?)```", SECTION, re.S))
    # h047.yaml is the second block after the sentence naming both handoffs.
    blocks = re.findall(r"```yaml\n(.*?)```", SECTION, re.S)
    found["h047.yaml"] = next(b for b in blocks if b.startswith("task_id: task-047"))
    return found


def test_the_stale_session_prints_what_the_readme_shows(tmp_path: Path) -> None:
    documents = _documents()
    assert set(documents) == {"tasks.yaml", "h043.yaml", "h047.yaml"}
    for name, text in documents.items():
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_", "GIT_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               GIT_AUTHOR_NAME="dev", GIT_AUTHOR_EMAIL="dev@example.com",
               GIT_COMMITTER_NAME="dev", GIT_COMMITTER_EMAIL="dev@example.com", GIT_CONFIG_GLOBAL=os.devnull)
    steps = _session()
    assert any(command.startswith("ctxgraph context") for command, _ in steps)
    for command, expected in steps:
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=180)
        assert proc.returncode == 0, (command, proc.stderr)
        assert proc.stdout + proc.stderr == expected, command
    shown = steps[-1][1]
    assert "⚠ code changed since task-043: src/auth/jwt.py" in shown
    assert "(replaces: Sign JWT tokens with HS256" in shown and "- Sign JWT tokens with HS256" not in shown
    assert "task-052 (in progress) also expects to change" in shown
