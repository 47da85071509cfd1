"""The README's quickstart is real: after the README's first command alone,
in a fresh venv (not the developer's), its commands print what it shows."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from _fresh_install import FreshInstall, quickstart

from tests._sessions import steps


@pytest.mark.slow
def test_quickstart_session_matches(fresh_install: FreshInstall, tmp_path: Path) -> None:
    handoff, session = quickstart()
    (tmp_path / "handoff.yaml").write_text(handoff)
    status = None
    for command, expected in steps(session):
        if command == "echo $?":
            assert f"{status}\n" == expected, "the exit status the README shows"
            continue
        assert command.startswith("ctxgraph "), command
        proc = fresh_install.ctxgraph(*shlex.split(command)[1:], cwd=tmp_path)
        status = proc.returncode
        shown = proc.stdout + proc.stderr
        assert shown == expected, command
