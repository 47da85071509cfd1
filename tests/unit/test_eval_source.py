"""Fetching an evaluation set's release source (``eval --index-source``) from a
local wheel folder: the package lands under its repository paths, and a wheel
cannot write outside the cache."""

from __future__ import annotations

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
    with pytest.raises(ConfigurationError, match=r"tiny: could not fetch tiny==1.0 with pip"):
        source_tree(META, "tiny", tmp_path / "cache")


@pytest.mark.parametrize("meta", [
    {"package_dir": "tiny/", "src_prefix": "src/tiny/"},
    {"pypi": "tiny; rm -rf /", "package_dir": "tiny/", "src_prefix": "src/tiny/"},
    {"pypi": "tiny==1.0", "package_dir": "../tiny/", "src_prefix": "src/tiny/"},
    {"pypi": "tiny==1.0", "package_dir": "tiny/", "src_prefix": "/abs/"},
])
def test_meta_is_checked_before_pip_runs(meta: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError):
        release_of(meta, "tiny")
