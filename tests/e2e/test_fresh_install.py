"""A new user's first hour, from a wheel: the README's first command in a
fresh venv (non-editable ``pip install .``), then ctxgraph from empty folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from _fresh_install import FreshInstall

pytestmark = pytest.mark.slow


def test_the_first_command_installs_and_prints_the_demo_context(fresh_install: FreshInstall) -> None:
    assert "Loaded 17 tasks, 30 context-map entries and 13 handoffs" in fresh_install.output
    assert "## Context (Computed)" in fresh_install.output
    assert "ctxgraph: warning" not in fresh_install.output


def test_demo_runs_from_an_empty_folder(fresh_install: FreshInstall, tmp_path: Path) -> None:
    proc = fresh_install.ctxgraph("demo", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## Context (Computed)\n")
    assert "task-015" in proc.stderr
    assert (tmp_path / ".ctxgraph" / "demo.db").is_file()


def test_the_install_is_not_the_checkout(fresh_install: FreshInstall, tmp_path: Path) -> None:
    import subprocess

    where = subprocess.run([fresh_install.python, "-c", "import ctxgraph, sys; print(ctxgraph.__file__)"],
                           cwd=tmp_path, env=fresh_install.env, capture_output=True, text=True, check=True)
    assert str(fresh_install.venv) in where.stdout, where.stdout


def test_the_model_is_installed_by_the_first_command(fresh_install: FreshInstall, tmp_path: Path) -> None:
    import subprocess

    probe = subprocess.run([fresh_install.python, "-c",
                            "from ctxgraph.memory.embed import model_dir; print(model_dir())"],
                           cwd=tmp_path, env=fresh_install.env, capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    assert str(fresh_install.venv) in probe.stdout
