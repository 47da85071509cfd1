"""The README's quickstart is real: after the README's first command alone,
in a fresh venv (not the developer's), its commands print what it shows —
run with bash one by one in a folder ``shop`` (shown as ``/home/me/shop``),
what varies between runs (durations, rates) compared as placeholders and a
``...`` line standing for any lines (the index's progress on stderr)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from _fresh_install import FreshInstall, quickstart

from tests._sessions import SHOWN_HOME, matches, session_env, steps


@pytest.mark.slow
def test_quickstart_session_matches(fresh_install: FreshInstall, tmp_path: Path) -> None:
    handoff, session = quickstart()
    folder = tmp_path / "shop"
    folder.mkdir()
    env = {**session_env(), "PATH": fresh_install.env["PATH"], "VIRTUAL_ENV": str(fresh_install.venv)}
    status = None
    ran = []
    for command, expected in steps(session):
        if command == "echo $?":
            assert f"{status}\n" == expected, "the exit status the README shows"
            continue
        if "handoff.yaml" in command:  # the agent writes its handoff when it is done (after `init` indexed)
            (folder / "handoff.yaml").write_text(handoff)
        proc = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=300)
        status = proc.returncode
        ran.append(command.split()[1] if command.startswith("ctxgraph ") else command.split()[0])
        shown = (proc.stdout + proc.stderr).replace(str(tmp_path), SHOWN_HOME)
        assert matches(expected, shown), f"$ {command}\nshown:\n{expected}\nprinted:\n{shown}"
    assert ran[:2] == ["git", "echo"] and "init" in ran and "context" in ran, ran
