"""Operating-system checks: is a process alive, is it a Neo4j server, does a port answer."""

from __future__ import annotations

import contextlib
import os
import socket
import time
from pathlib import Path

from .common import ENTRY_POINT, HOST


def pid_alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError, OSError):
        done, _ = os.waitpid(pid, os.WNOHANG)  # reap it if it is our own child
        if done == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        with contextlib.suppress(OSError, IndexError):
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return False
    return True


def is_our_server(pid: int) -> bool:
    """True when pid is alive and (where /proc says) is a Neo4j entry point."""
    if not pid_alive(pid):
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        with contextlib.suppress(OSError):
            return ENTRY_POINT.encode() in cmdline.read_bytes()
    return True


def port_open(port: int, timeout: float = 1.0) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=timeout):
        return True
    return False


def wait_reaped(pid: int, timeout: float = 3.0) -> None:
    """Give init a moment to reap the exited server so no <defunct> entry lingers."""
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
