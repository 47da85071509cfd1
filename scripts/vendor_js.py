"""Vendor the graph-drawing library of ``ctxgraph view`` from npm.

``ctxgraph view`` draws with Cytoscape.js (MIT), inlined into the page it
writes so that the page loads nothing from the network. This script fetches
the pinned release with npm's own client (``npm pack``), checks the
tarball against the registry's integrity (sha512), and writes its browser
build and its licence to ``ctxgraph/view/vendor/`` with ``vendor.json``
(name, version, integrity, the build's sha256; tests/unit/test_view_page.py
checks the file against it). To move to another release:

    python scripts/vendor_js.py --version 3.35.0
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path

VENDOR = Path(__file__).resolve().parents[1] / "ctxgraph" / "view" / "vendor"
NAME, BUILD = "cytoscape", "package/dist/cytoscape.min.js"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=json.loads((VENDOR / "vendor.json").read_text())["version"])
    version = parser.parse_args().version
    spec = f"{NAME}@{version}"
    integrity = subprocess.run(["npm", "view", spec, "dist.integrity"], check=True, capture_output=True,
                               text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", spec, "--silent", "--pack-destination", tmp], check=True,
                       capture_output=True)
        (tarball,) = Path(tmp).glob("*.tgz")
        data = tarball.read_bytes()
        algorithm, _, expected = integrity.partition("-")
        got = base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
        if got != expected:
            raise SystemExit(f"{tarball.name}: {algorithm} {got} is not the registry's {expected}")
        with tarfile.open(tarball) as tar:
            build = tar.extractfile(BUILD).read()  # type: ignore[union-attr]
            licence = tar.extractfile("package/LICENSE").read()  # type: ignore[union-attr]
    (VENDOR / "cytoscape.min.js").write_bytes(build)
    (VENDOR / "cytoscape.LICENSE").write_bytes(licence)
    record = {"name": NAME, "version": version, "integrity": integrity, "file": BUILD.removeprefix("package/"),
              "licence": "MIT", "sha256": hashlib.sha256(build).hexdigest()}
    (VENDOR / "vendor.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"vendored {spec} ({len(build):,} bytes) into {VENDOR}")


if __name__ == "__main__":
    main()
