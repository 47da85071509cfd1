"""The HTML page of a :class:`~ctxgraph.view.graph.ViewGraph`: one file, the
graph's data and the drawing library inlined (nothing is loaded when it
opens). The template is autoescaped; the data goes in as JSON with ``<``,
``>``, ``&`` and the two JavaScript line separators escaped, so no text of the
graph can end the script element it sits in."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from ctxgraph.errors import CtxgraphError
from ctxgraph.view.graph import ViewGraph

TEMPLATE = "view.html.j2"
_SCRIPT_END = re.compile(r"</script|<!--", re.IGNORECASE)
_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def embed_json(value: Any) -> Markup:
    """``value`` as JSON that is safe inside a ``<script>`` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return Markup(re.sub("[<>&\u2028\u2029]", lambda m: _ESCAPES[m.group()], text))


@cache
def library() -> tuple[dict[str, str], str]:
    """The vendored drawing library: its record (``vendor.json``) and its code."""
    vendor = resources.files("ctxgraph.view").joinpath("vendor")
    record: dict[str, str] = json.loads(vendor.joinpath("vendor.json").read_text(encoding="utf-8"))
    code = vendor.joinpath("cytoscape.min.js").read_text(encoding="utf-8")
    if _SCRIPT_END.search(code):  # it could end (or comment out) the element it is inlined in
        raise CtxgraphError(f"the vendored {record['name']} holds '</script' or '<!--': it cannot be inlined")
    return record, code


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("ctxgraph.view", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def render_page(graph: ViewGraph) -> str:
    """The page drawing ``graph``."""
    record, code = library()
    return _environment().get_template(TEMPLATE).render(
        graph=graph, data=embed_json(graph.model_dump(mode="json")), library=Markup(code), vendor=record)


__all__ = ["embed_json", "library", "render_page"]
