"""Real git repositories for the history import's tests (issue 44): commits
made with ``git`` itself, at fixed dates so that two builds of the same
history have the same commit ids."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: A file long enough for git's rename detection to follow it with a line edited.
BODY = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n" for i in range(20))


def git(repo: Path, *args: str, date: int | None = None) -> str:
    """``git ARGS`` in ``repo`` (an author without a name anyone has; ``date``:
    the author and committer time, seconds after 2024-01-01)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    if date is not None:
        stamp = f"{1_704_067_200 + date} +0200"
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false",
                           *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def init(repo: Path) -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    return repo


def commit(repo: Path, message: str, files: dict[str, str | None], *, date: int) -> str:
    """Write (or, for None, delete) ``files`` and commit them all; the new sha."""
    for path, text in files.items():
        target = repo / path
        if text is None:
            git(repo, "rm", "-q", "--", path)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        git(repo, "add", "--", path)
    git(repo, "commit", "-q", "--allow-empty", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD")


def move(repo: Path, old: str, new: str, message: str, *, date: int) -> str:
    """Rename ``old`` to ``new`` (content kept) in a commit of its own; the new sha."""
    (repo / new).parent.mkdir(parents=True, exist_ok=True)
    git(repo, "mv", old, new)
    git(repo, "commit", "-q", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD")


def project(repo: Path) -> list[str]:
    """A small project: features, a fix naming an issue, a release, a revert,
    a lock file, a rename; the shas, oldest first."""
    init(repo)
    shas = [
        commit(repo, "Add the token parser", {"src/auth/tokens.py": "def parse(t):\n    return t\n" + BODY,
                                               "README.md": "# demo\n"}, date=0),
        commit(repo, "Add session middleware\n\nWraps every handler.", {"src/auth/session.py": "S = 1\n" + BODY},
               date=100),
        commit(repo, "Fix token expiry check (#12)\n\nFixes #12.\n\nSigned-off-by: A Person <a@example.com>",
               {"src/auth/tokens.py": "def parse(t):\n    return t.strip()\n" + BODY}, date=200),
        commit(repo, "release version 1.0.0", {"CHANGES.md": "1.0.0\n", "src/auth/__init__.py": "V = '1.0.0'\n"},
               date=300),
        commit(repo, "Pin dependencies", {"uv.lock": "lock\n"}, date=400),
        commit(repo, "Add cookie support to sessions, see #12", {"src/auth/session.py": "S = 2\n" + BODY,
                                                                  "uv.lock": "lock 2\n"}, date=500),
    ]
    bad = commit(repo, "Use the new cache", {"src/cache.py": "C = 1\n"}, date=600)
    git(repo, "revert", "--no-edit", bad, date=700)
    shas += [bad, git(repo, "rev-parse", "HEAD")]
    shas.append(move(repo, "src/auth/tokens.py", "src/auth/jwt.py", "Rename tokens to jwt", date=800))
    return shas
