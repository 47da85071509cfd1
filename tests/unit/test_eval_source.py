"""Fetching an evaluation set's release source (``eval --index-source``) from a
local folder of wheels and sdists: the package lands under its repository
paths, a release without a wheel is read from its sdist (flat or ``src/``
layout, tar.gz or zip), and no archive can write outside the cache."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from ctxgraph.errors import ConfigurationError
from ctxgraph.evaluation.source import release_of, source_tree

META = {"pypi": "tiny==1.0", "package_dir": "tiny/", "src_prefix": "src/tiny/"}


def wheel(folder: Path, members: dict[str, str]) -> None:
    folder.mkdir(exist_ok=True)
    with zipfile.ZipFile(folder / "tiny-1.0-py3-none-any.whl", "w") as whl:
        for name, text in members.items():
            whl.writestr(name, text)
        whl.writestr("tiny-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n")
        whl.writestr("tiny-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr("tiny-1.0.dist-info/RECORD", "")


def test_the_package_lands_under_its_repository_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel(tmp_path / "wheels", {"tiny/a.py": "A = 1\n", "tiny/sub/b.py": "B = 2\n", "tiny/../../evil.py": "x\n",
                                "other/c.py": "C = 3\n"})
    monkeypatch.setenv("CTXGRAPH_EVAL_FIND_LINKS", str(tmp_path / "wheels"))
    tree = source_tree(META, "tiny", tmp_path / "cache")
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    assert files == [".complete", "src/tiny/a.py", "src/tiny/sub/b.py"]
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "cache" / "evil.py").exists()
    (tmp_path / "wheels" / "tiny-1.0-py3-none-any.whl").unlink()
    assert source_tree(META, "tiny", tmp_path / "cache") == tree  # reused, no fetch


def test_a_release_that_cannot_be_fetched_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "wheels").mkdir()
    monkeypatch.setenv("CTXGRAPH_EVAL_FIND_LINKS", str(tmp_path / "wheels"))
    with pytest.raises(ConfigurationError, match=r"tiny: could not fetch tiny==1.0: no wheel .* and no sdist"):
        source_tree(META, "tiny", tmp_path / "cache")


def sdist(folder: Path, filename: str, members: dict[str, str]) -> None:
    folder.mkdir(exist_ok=True)
    if filename.endswith(".zip"):
        with zipfile.ZipFile(folder / filename, "w") as z:
            for name, text in members.items():
                z.writestr(name, text)
        return
    with tarfile.open(folder / filename, "w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize(("filename", "root"), [("tiny-1.0.tar.gz", "tiny-1.0/src/"), ("Tiny-1.0.zip", "Tiny-1.0/"),
                                                ("tiny-1.0.tar.gz", "tiny-1.0/")])
def test_a_release_without_a_wheel_is_read_from_its_sdist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           filename: str, root: str) -> None:
    sdist(tmp_path / "links", filename, {
        f"{root}tiny/a.py": "A = 1\n", f"{root}tiny/sub/b.py": "B = 2\n", f"{root}tiny/../../../evil.py": "x\n",
        f"{root.split('/')[0]}/setup.py": "raise SystemExit('never run')\n",
        f"{root.split('/')[0]}/docs/tiny/not-this.py": "N = 0\n",
    })
    sdist(tmp_path / "links", "tiny-1.1.tar.gz", {"tiny-1.1/tiny/a.py": "A = 2\n"})  # another version: not taken
    monkeypatch.setenv("CTXGRAPH_EVAL_FIND_LINKS", str(tmp_path / "links"))
    tree = source_tree(META, "tiny", tmp_path / "cache")
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    assert files == [".complete", "src/tiny/a.py", "src/tiny/sub/b.py"]
    assert (tree / "src/tiny/a.py").read_text() == "A = 1\n"
    assert not list(tmp_path.rglob("evil.py"))


@pytest.mark.parametrize("meta", [
    {"package_dir": "tiny/", "src_prefix": "src/tiny/"},
    {"pypi": "tiny; rm -rf /", "package_dir": "tiny/", "src_prefix": "src/tiny/"},
    {"pypi": "tiny==1.0", "package_dir": "../tiny/", "src_prefix": "src/tiny/"},
    {"pypi": "tiny==1.0", "package_dir": "tiny/", "src_prefix": "/abs/"},
])
def test_meta_is_checked_before_pip_runs(meta: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError):
        release_of(meta, "tiny")
