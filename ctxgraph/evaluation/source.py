"""The project source at an evaluation set's snapshot (``ctxgraph eval --index-source``).

A set's ``meta.json`` names the PyPI release of its snapshot (``"pypi":
"click==8.2.1"``), the package folder inside the release's wheel
(``"package_dir": "click/"``) and where that folder lives in the repository
the history speaks of (``"src_prefix": "src/click/"``). The wheel is fetched
with ``pip download`` (no dependencies, wheels only) into a cache folder —
``.ctxgraph/cache/eval-src`` under the current directory unless
``CTXGRAPH_CACHE_DIR`` names another; a release without a wheel is read
from its sdist instead (PyPI's JSON API names it; nothing of it is built or
run), whose package folder is found under its top folder or its ``src/``.
The package's files are unpacked under their repository paths, so that
indexed chunks carry the paths the history and the gold files use.
``CTXGRAPH_EVAL_FIND_LINKS`` names a folder of wheels and sdists to use
instead of PyPI (pip's ``--no-index --find-links``), for machines without
the network.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from ctxgraph.errors import ConfigurationError
from ctxgraph.graph.local.folder import FOLDER, make_folder

_SPEC = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*")
_FOLDER = re.compile(r"([A-Za-z0-9._-]+/)+")
#: PyPI's JSON API, where a release's sdist is found when it has no wheel.
PYPI = "https://pypi.org/pypi"
SDIST_SUFFIXES = (".tar.gz", ".zip")


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
        archive = fetch(spec, Path(tmp), set_name)
        unpacked = Path(tmp) / "tree"
        count = unpack(archive, package_dir, prefix, unpacked)
        if not count:
            raise ConfigurationError(f"{set_name}: {archive.name} has no files under {package_dir}")
        (unpacked / ".complete").write_text(f"{spec}\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.replace(unpacked, target)
    return target


def fetch(spec: str, into: Path, set_name: str) -> Path:
    """The release's wheel (``pip download``), else its sdist: from the
    ``CTXGRAPH_EVAL_FIND_LINKS`` folder when it names one, else from PyPI's
    JSON API (the file's sha256 checked against the index's)."""
    links = os.environ.get("CTXGRAPH_EVAL_FIND_LINKS")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet",
         "--disable-pip-version-check", "--dest", str(into),
         *(["--no-index", "--find-links", links] if links else []), spec],
        capture_output=True, text=True, check=False,
    )
    wheels = sorted(into.glob("*.whl"))
    if done.returncode == 0 and len(wheels) == 1:
        return wheels[0]
    why = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
    name, version = spec.split("==")
    sdist = local_sdist(Path(links), name, version) if links else pypi_sdist(name, version, into)
    if sdist is None:
        raise ConfigurationError(f"{set_name}: could not fetch {spec}: no wheel (pip: {why}) and no sdist")
    return sdist


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def sdist_name(filename: str, name: str, version: str) -> bool:
    """Whether ``filename`` is the sdist of ``name`` ``version`` (``.tar.gz`` or ``.zip``)."""
    for suffix in SDIST_SUFFIXES:
        if filename.endswith(suffix):
            stem = filename[: -len(suffix)]
            head, _, tail = stem.rpartition("-")
            return tail == version and _normal(head) == _normal(name)
    return False


def local_sdist(folder: Path, name: str, version: str) -> Path | None:
    """The sdist of ``name`` ``version`` in ``folder``, if there is one."""
    found = sorted(p for p in folder.iterdir() if p.is_file() and sdist_name(p.name, name, version)) \
        if folder.is_dir() else []
    return found[0] if found else None


def pypi_sdist(name: str, version: str, into: Path) -> Path | None:
    """The release's sdist downloaded from PyPI into ``into`` (None when it has none)."""
    import hashlib
    import json
    import urllib.parse
    import urllib.request

    url = f"{PYPI}/{urllib.parse.quote(name)}/{urllib.parse.quote(version)}/json"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            files = json.load(response).get("urls", [])
        entry = next((f for f in files if f.get("packagetype") == "sdist"
                      and sdist_name(str(f.get("filename", "")), name, version)), None)
        if entry is None or not str(entry.get("url", "")).startswith("https://"):
            return None
        with urllib.request.urlopen(entry["url"], timeout=120) as response:
            data = response.read()
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"could not fetch {name}=={version}'s sdist from PyPI: {exc}") from exc
    if hashlib.sha256(data).hexdigest() != entry.get("digests", {}).get("sha256"):
        raise ConfigurationError(f"{entry['filename']}: its sha256 is not the one PyPI gives")
    out = into / Path(str(entry["filename"])).name
    out.write_bytes(data)
    return out


@contextlib.contextmanager
def _members(archive: Path) -> Iterator[list[tuple[str, Callable[[], bytes]]]]:
    """(name, read) of each regular file in a wheel, zip or tar.gz sdist, while it is open."""
    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as z:
            yield [(i.filename, functools.partial(z.read, i)) for i in z.infolist() if not i.is_dir()]
        return
    with tarfile.open(archive, "r:gz") as tar:
        yield [(m.name, functools.partial(_read_member, tar, m)) for m in tar.getmembers() if m.isfile()]


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    fh = tar.extractfile(member)
    return fh.read() if fh is not None else b""


def _package_root(names: list[str], package_dir: str, wheel: bool) -> str | None:
    """Where ``package_dir`` starts in an archive's names: at the top of a
    wheel; in an sdist directly under its top folder, else under its ``src/``."""
    if wheel:
        return ""
    tops = {n.split("/", 1)[0] + "/" for n in names if "/" in n}
    for top in sorted(tops):
        for root in (top, f"{top}src/"):
            if any(n.startswith(root + package_dir) for n in names):
                return root
    return None


def unpack(archive: Path, package_dir: str, prefix: str, into: Path) -> int:
    """The files of ``package_dir`` in ``archive`` written under ``into`` at
    their repository paths (``prefix`` + their path in the package); how many."""
    count = 0
    with _members(archive) as members:
        root = _package_root([n for n, _ in members], package_dir, archive.name.endswith(".whl"))
        if root is None:
            return 0
        start = root + package_dir
        for name, read in members:
            if not name.startswith(start):
                continue
            rel = PurePosixPath(prefix + name[len(start):])
            if rel.is_absolute() or ".." in rel.parts:
                continue
            out = into / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(read())
            count += 1
    return count
