"""`ctxgraph analyst-queries`: the saved queries listed, and zipped for Neo4j Browser."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

from ctxgraph import cypher


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_"))}
    return subprocess.run([sys.executable, "-m", "ctxgraph", *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=60)


def test_list_names_titles_and_parameters(tmp_path: Path) -> None:
    proc = run("analyst-queries", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert set(rows) == set(cypher.analyst_names())
    assert rows["task_context"]["parameters"] == ["task_id"]
    assert rows["top_tags"]["parameters"] == []
    assert all(r["title"].startswith("ctxgraph: ") for r in rows.values())


def test_zip_holds_every_query_in_one_folder_with_its_title_first(tmp_path: Path) -> None:
    proc = run("analyst-queries", "--zip", "q.zip", "--task", "task-0'7", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(tmp_path / "q.zip") as archive:
        names = sorted(archive.namelist())
        texts = {n: archive.read(n).decode() for n in names}
    assert names == sorted(["ctxgraph/0_set_task.cypher", *(f"ctxgraph/{n}.cypher" for n in cypher.analyst_names())])
    for name in cypher.analyst_names():
        assert texts[f"ctxgraph/{name}.cypher"] == cypher.load_analyst(name)
    assert all(t.startswith("// ctxgraph: ") for t in texts.values()), "Browser names a script by its first line"
    assert ":param task_id => 'task-0\\'7'" in texts["ctxgraph/0_set_task.cypher"]
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "q.zip").stat().st_mode) == 0o666 & ~mask, "the mode a plain open() gives"


def test_zip_is_not_overwritten_without_force(tmp_path: Path) -> None:
    (tmp_path / "q.zip").write_bytes(b"keep")
    proc = run("analyst-queries", "--zip", "q.zip", cwd=tmp_path)
    assert proc.returncode == 2 and "--force" in proc.stderr
    assert (tmp_path / "q.zip").read_bytes() == b"keep"
    assert run("analyst-queries", "--zip", "q.zip", "--force", cwd=tmp_path).returncode == 0
    assert zipfile.is_zipfile(tmp_path / "q.zip")
    assert [p.name for p in tmp_path.iterdir()] == ["q.zip"], "no temporary file left behind"
