"""A real git repository for the freshness tests (issue 32): a project at its
first commit, the handoff that anchors its files, and one commit that
modifies, renames and deletes them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: A file long enough for git's rename detection to follow it with a few lines edited.
BODY = "".join(f"def helper_{i}(token):\n    return token + {i}\n\n" for i in range(20))


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                          env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repo(repo: Path) -> str:
    """The project at its first commit; its sha."""
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "jwt.py").write_text("def verify(token):\n    return token\n" + BODY)
    (repo / "src" / "auth" / "middleware.py").write_text("def require_auth(handler):\n    return handler\n" + BODY)
    (repo / "src" / "legacy.py").write_text("OLD = 1\n")
    (repo / "src" / "app.py").write_text("app = None\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return git(repo, "rev-parse", "HEAD")


def change_repo(repo: Path) -> None:
    """One commit: the middleware's cited lines edited, jwt.py renamed (and
    edited a little), legacy.py deleted."""
    mw = repo / "src" / "auth" / "middleware.py"
    mw.write_text("def require_auth(handler, scopes):\n    return check(handler, scopes)\n" + BODY)
    git(repo, "mv", "src/auth/jwt.py", "src/auth/tokens.py")
    tokens = repo / "src" / "auth" / "tokens.py"
    tokens.write_text(tokens.read_text() + "\ndef refresh(token):\n    return token\n")
    git(repo, "rm", "-q", "src/legacy.py")
    git(repo, "commit", "-q", "-am", "change")


def handoff(commit: str) -> dict[str, object]:
    return {
        "task_id": "t-auth", "summary": "Added JWT validation middleware", "success": True,
        "completed_at": "2026-03-01T10:00:00Z", "commit": commit,
        "files_created": [{"path": "src/auth/jwt.py", "lines": "1-2", "purpose": "JWT verify helper"}],
        "files_modified": [{"path": "src/app.py", "purpose": "mount middleware"},
                           {"path": "src/planned.py", "purpose": "never in the work tree: no anchor"}],
        "dependencies_for_next": [{"file": "src/auth/jwt.py", "reason": "reuse verify()"},
                                  {"file": "src/legacy.py", "reason": "old token format"}],
        "patterns_discovered": [
            {"pattern": "Wrap handlers with require_auth for JWT routes", "applies_to": ["auth", "jwt"],
             "location": "src/auth/middleware.py:1-2"},
            {"pattern": "Keep the legacy JWT token format readable", "applies_to": ["auth", "jwt"],
             "location": "src/legacy.py"},
            {"pattern": "Verify JWT tokens with verify()", "applies_to": ["auth", "jwt"],
             "location": "src/auth/jwt.py:1-2"},
        ],
    }


MARK = "⚠ code changed since t-auth: src/auth/middleware.py"
LEGACY = "Keep the legacy JWT token format readable"
TASKS = [
    {"id": "t-auth", "name": "Add JWT validation middleware", "objective": "Verify JWT tokens on auth routes"},
    {"id": "t-next", "name": "JWT refresh for auth routes", "objective": "Refresh JWT tokens on auth routes",
     "depends_on": ["t-auth"]},
]
