"""One server's files: run state (pid, ports, home), log, lock, saved password and default home.

The unnamed (default) instance keeps the historical layout under
``.cache/neo4j``; a named one lives in ``.cache/neo4j/instances/NAME`` so that
several servers (on other ports) can run side by side.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .common import CACHE, DEFAULT_BOLT_PORT, DEFAULT_HTTP_PORT, INITIAL_PASSWORD, Fail
from .process import is_our_server

INSTANCE_ENV = "NEO4J_LOCAL_INSTANCE"
INSTANCE_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")


@dataclass(frozen=True)
class Instance:
    """The paths of one server: `base` holds run/, password and home/."""

    name: str | None
    base: Path

    @classmethod
    def named(cls, name: str | None) -> Instance:
        """The default instance (no name) or the named one, whose name is checked."""
        if not name:
            return cls(None, CACHE)
        if not INSTANCE_NAME.fullmatch(name):
            raise Fail(f"instance names are 1-40 letters, digits, '-' or '_': {name!r}")
        return cls(name, CACHE / "instances" / name)

    @property
    def run_dir(self) -> Path:
        return self.base / "run"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / "neo4j.pid"

    @property
    def state_file(self) -> Path:
        return self.run_dir / "neo4j.json"

    @property
    def log_file(self) -> Path:
        return self.run_dir / "neo4j.log"

    @property
    def lock_file(self) -> Path:
        return self.run_dir / "lock"

    @property
    def password_file(self) -> Path:
        return self.base / "password"

    @property
    def default_home(self) -> Path:
        return self.base / "home"

    # ------------------------------------------------------------- run state

    @contextlib.contextmanager
    def run_lock(self) -> Iterator[None]:
        """Serialize start/stop between concurrent invocations (Unix only)."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - non-Unix
            yield
            return
        with open(self.lock_file, "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def read_state(self) -> dict[str, Any] | None:
        """The recorded server if its process is still alive, else None (and cleaned)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        try:
            state: dict[str, Any] = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            state = {}
        state["pid"] = pid
        state.setdefault("bolt_port", DEFAULT_BOLT_PORT)
        state.setdefault("http_port", DEFAULT_HTTP_PORT)
        if not is_our_server(pid):
            self.clear_state()
            return None
        return state

    def clear_state(self) -> None:
        for path in (self.pid_file, self.state_file):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def write_state(self, state: dict[str, Any]) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.state_file.write_text(json.dumps(state, indent=2) + "\n")
        self.pid_file.write_text(f"{state['pid']}\n")

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    # -------------------------------------------------------------- password

    def write_password(self, password: str) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(password + "\n")
        os.chmod(self.password_file, 0o600)

    def read_password_file(self) -> str | None:
        try:
            text = self.password_file.read_text().strip()
        except OSError:
            return None
        return text or None

    def wanted_password(self) -> str:
        """NEO4J_PASSWORD if set, else the saved one, else a new random one."""
        from_env = os.environ.get("NEO4J_PASSWORD")
        if from_env:
            if len(from_env) < 8:
                raise Fail("NEO4J_PASSWORD must be at least 8 characters (Neo4j's minimum)")
            if from_env == INITIAL_PASSWORD:
                raise Fail("NEO4J_PASSWORD must differ from Neo4j's initial password")
            return from_env
        return self.read_password_file() or secrets.token_urlsafe(24)
