"""The saved analyst queries as a Neo4j Browser import: a ``.zip`` of
``.cypher`` files that Browser turns into saved scripts when the file is
dropped onto its window (folders in the archive become script folders; each
script is named by its first line, a comment)."""

from __future__ import annotations

import io
import zipfile

from ctxgraph.cypher import analyst_names, analyst_parameters, load_analyst

#: The script folder Browser shows the queries in.
FOLDER = "ctxgraph"
#: A fixed timestamp, so the same queries always give the same bytes.
_STAMP = (2026, 1, 1, 0, 0, 0)


def parameter_script(task_id: str) -> str:
    """The script that sets the parameters the saved queries need."""
    return f"// ctxgraph: 0. set the task to look at\n:param task_id => {_cypher_string(task_id)}\n"


def _cypher_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def browser_zip(task_id: str) -> bytes:
    """The archive: ``ctxgraph/<name>.cypher`` per saved query, and the
    parameter script ``ctxgraph/0_set_task.cypher``."""
    needed = sorted({p for name in analyst_names() for p in analyst_parameters(name)})
    unknown = [p for p in needed if p != "task_id"]
    if unknown:  # a new parameter needs a line in parameter_script
        raise ValueError(f"saved queries use parameters the Browser script does not set: {unknown}")
    files = {"0_set_task.cypher": parameter_script(task_id)}
    files.update({f"{name}.cypher": load_analyst(name) for name in analyst_names()})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            info = zipfile.ZipInfo(f"{FOLDER}/{name}", date_time=_STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text)
    return buffer.getvalue()
