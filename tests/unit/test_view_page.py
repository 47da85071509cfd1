"""The page ``ctxgraph view`` writes: the vendored drawing library is the npm
release vendor.json names, with its licence; the graph's text cannot end the
script element it is embedded in, and is escaped in the markup."""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources

from ctxgraph.view.graph import Edge, Node, ViewGraph
from ctxgraph.view.page import embed_json, library, render_page

HOSTILE = "</script><script>alert(1)</script><!-- & \u2028"


def test_the_vendored_library_is_the_recorded_release() -> None:
    vendor = resources.files("ctxgraph.view").joinpath("vendor")
    record = json.loads(vendor.joinpath("vendor.json").read_text(encoding="utf-8"))
    code = vendor.joinpath("cytoscape.min.js").read_bytes()
    assert record["name"] == "cytoscape" and record["licence"] == "MIT"
    assert hashlib.sha256(code).hexdigest() == record["sha256"]
    assert f'"{record["version"]}"' in code.decode("utf-8")
    licence = vendor.joinpath("cytoscape.LICENSE").read_text(encoding="utf-8")
    assert "The Cytoscape Consortium" in licence and "Permission is hereby granted" in licence
    assert library()[0] == record


def test_embedded_json_cannot_end_its_script() -> None:
    text = str(embed_json({"label": HOSTILE}))
    assert not re.search(r"[<>&\u2028]", text)
    assert json.loads(text) == {"label": HOSTILE}


def test_the_page_escapes_the_graphs_text() -> None:
    graph = ViewGraph(title=f"ctxgraph view: <b>{HOSTILE}</b>", subtitle="a & b",
                      nodes=(Node(id="task:x", kind="task", label=HOSTILE, title=HOSTILE, marks=("focus",)),
                             Node(id="file:a.py", kind="file", label="a.py")),
                      edges=(Edge(source="task:x", target="file:a.py", label="code reference"),))
    page = render_page(graph)
    assert page.count("</script>") == 3  # the data, the library, the page's own script
    assert "<b>" not in page and "&lt;b&gt;" in page and "a &amp; b" in page
    data = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', page, re.DOTALL)
    assert data is not None and json.loads(data.group(1)) == graph.model_dump(mode="json")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page, re.IGNORECASE)
    assert "default-src 'none'" in page  # and the browser is told to load nothing


def test_the_cli_spells_out_the_services_values() -> None:
    """(The CLI's help loads no service: its copies must agree.)"""
    from ctxgraph.cli import _search, _view
    from ctxgraph.core.models import KIND_LABELS
    from ctxgraph.service import view

    assert _view.OVERVIEW_LIMIT == view.OVERVIEW_LIMIT
    assert list(KIND_LABELS) == _search.ALL_KINDS
