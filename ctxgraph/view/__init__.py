"""``ctxgraph view``: a self-contained HTML page of the graph.

:mod:`.graph` builds what is drawn (nodes and edges, pure), :mod:`.page`
renders it with the Jinja2 template ``templates/view.html.j2`` and the
vendored Cytoscape.js (``vendor/``, MIT; fetched from npm by
``scripts/vendor_js.py``), inlined: the page loads nothing from the network.
"""
