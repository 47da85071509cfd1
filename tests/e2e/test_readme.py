"""The README's quickstart is real: after the README's first command alone,
in a fresh venv (not the developer's), its commands print what it shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from _fresh_install import README, FreshInstall

from tests._sessions import steps


@pytest.mark.slow
def test_quickstart_session_matches(fresh_install: FreshInstall, tmp_path: Path) -> None:
    handoff = re.search(r"`handoff.yaml` is the structured handoff the agent wrote:\n\n```yaml\n(.*?)```", README,
                        re.S)
    assert handoff is not None
    (tmp_path / "handoff.yaml").write_text(handoff.group(1))
    session = re.search(r"## Quickstart\n\n```console\n(.*?)```", README, re.S)
    assert session is not None
    status = None
    for command, expected in steps(session.group(1)):
        if command == "echo $?":
            assert f"{status}\n" == expected, "the exit status the README shows"
            continue
        assert command.startswith("ctxgraph "), command
        proc = fresh_install.ctxgraph(*shlex.split(command)[1:], cwd=tmp_path)
        status = proc.returncode
        shown = proc.stdout + proc.stderr
        assert shown == expected, command
