"""Nothing outside the root is opened by the commands that anchor and check
(issue 40), seen by the kernel: ``strace -f -e trace=open,openat,openat2``
around ``ctxgraph ingest handoff`` naming links out of the root
(``passwd.txt`` -> a file outside, ``homedir/.bashrc`` under a link to a
folder outside), then ``sync`` and ``context`` after an anchored file was
replaced by such a link. Skipped where strace is missing or not permitted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from _mcp_client import clean_env

from tests._git_repo import TASKS, handoff, make_repo

STRACE = shutil.which("strace")


def traced(log: Path, *args: str, cwd: Path, stdin: bytes | None = None) -> str:
    proc = subprocess.run([str(STRACE), "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", str(log),
                           sys.executable, "-m", "ctxgraph", *args], cwd=cwd, input=stdin, capture_output=True,
                          env=clean_env(), timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode()


@pytest.mark.skipif(STRACE is None, reason="no strace")
def test_no_file_outside_the_root_is_opened(tmp_path: Path) -> None:
    probe = subprocess.run([str(STRACE), "-qq", "-e", "trace=openat", "-o", os.devnull, "true"],
                           capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"strace cannot trace here: {probe.stderr.decode(errors='replace').strip()}")
    outside = tmp_path / "outside"
    (outside / "home").mkdir(parents=True)
    (outside / "secret.txt").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (outside / "home" / ".bashrc").write_text("export TOKEN=sk-live-1\n")
    repo = tmp_path / "repo"
    doc = handoff(make_repo(repo))
    (repo / "passwd.txt").symlink_to(outside / "secret.txt")
    (repo / "homedir").symlink_to(outside / "home")
    doc["files_modified"] = [{"path": "passwd.txt", "lines": "1", "purpose": "users"},
                             {"path": "homedir/.bashrc", "purpose": "shell"},
                             {"path": "src/app.py", "purpose": "app"}]
    log = tmp_path / "strace.log"
    traced(log, "ingest", "tasks", "-", cwd=repo, stdin=yaml.safe_dump({"tasks": TASKS}).encode())
    traced(log.with_suffix(".1"), "ingest", "handoff", "-", "--no-embed", cwd=repo, stdin=json.dumps(doc).encode())
    (repo / "src" / "app.py").unlink()
    (repo / "src" / "app.py").symlink_to(outside / "secret.txt")
    report = json.loads(traced(log.with_suffix(".2"), "sync", "--format", "json", cwd=repo))
    assert report["newly_deleted"] == 1 and report["hashed"] == 0
    md = traced(log.with_suffix(".3"), "context", "t-next", "--no-memory", cwd=repo)
    assert "root:x:0" not in md and "sk-live" not in md
    opened = [line for n in ("1", "2", "3") for line in log.with_suffix(f".{n}").read_text().splitlines()
              if str(outside) in line]
    assert opened == []
    assert any(str(repo / "src" / "auth" / "jwt.py") in line for line in log.with_suffix(".1").read_text().splitlines())
