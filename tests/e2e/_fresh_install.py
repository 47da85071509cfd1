"""A new user's install: a copy of the source tree, a fresh venv, and the
README's first command run verbatim in it (a non-editable ``pip install .``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
#: What a source tree must not carry into the copy (caches, builds, local stores).
_SKIP = shutil.ignore_patterns(".git", ".cache", ".ctxgraph", "build", "dist", "*.egg-info", "__pycache__",
                               ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".venv")


def first_command() -> str:
    """The README's first command: the first line of its first ``sh`` block."""
    block = re.search(r"```sh\n(.*?)```", README, re.S)
    assert block is not None, "the README starts with a sh block of two commands"
    return block.group(1).splitlines()[0]


def quickstart() -> tuple[str, str]:
    """The README Quickstart's ``handoff.yaml`` and its console session."""
    handoff = re.search(r"`handoff.yaml` is the structured handoff the agent wrote:\n\n```yaml\n(.*?)```", README,
                        re.S)
    session = re.search(r"## Quickstart\n.*?```console\n(.*?)```", README, re.S)
    assert handoff is not None and session is not None, "the README's Quickstart: a session and handoff.yaml"
    return handoff.group(1), session.group(1)


@dataclass(frozen=True)
class FreshInstall:
    venv: Path
    env: dict[str, str]
    #: stdout + stderr of the README's first command.
    output: str

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def ctxgraph(self, *args: str, cwd: Path, stdin: str | None = None,
                 extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / "ctxgraph"), *args], cwd=cwd, input=stdin, text=True,
                              capture_output=True, env={**self.env, **(extra_env or {})}, timeout=300)


def _copy_sources(dest: Path) -> None:
    """The files a clean clone has: ``git ls-files`` (tracked and new, not
    ignored) in a checkout, else the tree without caches."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=False)
    if listed.returncode != 0:
        shutil.copytree(REPO, dest, ignore=_SKIP)
        return
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def make_fresh_install(base: Path) -> FreshInstall:
    """Copy the sources to ``base/src``, make ``base/venv`` and run the README's
    first command there with the venv first on PATH (as after ``activate``)."""
    src, venv = base / "src", base / "venv"
    _copy_sources(src)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NEO4J_", "CTXGRAPH_", "PYTHON", "VIRTUAL_ENV", "PIP_REQUIRE"))}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    proc = subprocess.run(["bash", "-c", first_command()], cwd=src, env=env, text=True, capture_output=True,
                          timeout=1500)
    assert proc.returncode == 0, f"the README's first command failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return FreshInstall(venv=venv, env=env, output=proc.stdout + proc.stderr)
