"""The README's quickstart is real: its commands, run here, print what it shows."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=120)


def test_quickstart_session_matches(tmp_path: Path) -> None:
    handoff = re.search(r"`handoff.yaml` is the structured handoff the agent wrote:\n\n```yaml\n(.*?)```", README,
                        re.S)
    assert handoff is not None
    (tmp_path / "handoff.yaml").write_text(handoff.group(1))
    session = re.search(r"## Quickstart\n\n```console\n(.*?)```", README, re.S)
    assert session is not None
    blocks = re.split(r"^\$ ", session.group(1), flags=re.M)[1:]
    for block in blocks:
        command, _, expected = block.partition("\n")
        if not command.startswith("ctxgraph "):
            continue  # `echo $?`
        proc = run(*shlex.split(command)[1:], cwd=tmp_path)
        shown = proc.stdout + proc.stderr
        assert shown == expected, command
