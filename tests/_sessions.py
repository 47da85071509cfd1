"""Console sessions and fenced snippets in Markdown, for the tests that hold
the README and docs/ true: the fenced blocks of a page (with the
``<!-- snippet: ... -->`` marker right before a fence, if any), a section
under a heading, a session's steps (``$ command`` lines and the output each
shows), the documents a page names (a `` `name.yaml` `` line right before a
yaml block), and a session replayed with bash in a folder of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: Where a replayed session's folder is shown: a session runs in ``TMP/shop``,
#: and its output is compared with ``TMP`` written as ``/home/me`` (so the
#: pages show ``/home/me/shop``, not a test's temporary folder).
SHOWN_HOME = "/home/me"
#: Where the ``ctxgraph`` a session runs is shown (its venv's ``bin``).
SHOWN_BIN = "/home/me/.venv/bin"
#: What varies from one run to the next, inherently, and is compared as a
#: placeholder (in the page's text and in the output alike): clock times
#: (an ISO time with fractions of a second, and the time a sync found a
#: change), durations and rates. Dates and times that come from documents
#: (``completed_at: 2026-03-02T10:05:00Z``) are compared as they are.
VARIABLE = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z"), "<clock time>"),
    (re.compile(r"\(found \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)"), "(found <clock time>)"),
    (re.compile(r"\b\d+(\.\d+)? ?s\)"), "<seconds>)"),
    (re.compile(r"\bin \d+(\.\d+)?s\b"), "in <seconds>"),
    (re.compile(r"\b\d+(\.\d+)? chunks/s\b"), "<rate> chunks/s"),
]
MARKER = re.compile(r"<!-- snippet: (.*?) -->")


@dataclass(frozen=True)
class Block:
    """One fenced block of a Markdown page."""

    page: str
    #: 1-based line of the opening fence.
    line: int
    language: str
    text: str
    #: What the ``<!-- snippet: ... -->`` comment right before the fence says, if there is one.
    marker: str | None
    #: The file name that the first `` `name.yaml` `` of the line before the fence (or the
    #: line before a blank line before it) gives the block, if any.
    name: str | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of the page ``path``."""
    return blocks_in(path.read_text(encoding="utf-8"), path.name)


def blocks_in(text: str, page: str) -> list[Block]:
    """The fenced blocks of ``text`` (a fence is a line starting with three backticks)."""
    lines = text.splitlines(keepends=True)
    found: list[Block] = []
    start: int | None = None
    for i, line in enumerate(lines):
        if not line.startswith("```"):
            continue
        if start is None:
            start = i
            continue
        before = lines[start - 1] if start else ""
        marker = MARKER.fullmatch(before.strip())
        prose = before if before.strip() else (lines[start - 2] if start > 1 else "")
        named = re.findall(r"`([\w.-]+\.(?:yaml|yml|json|toml))`", prose) if prose.rstrip().endswith(":") else []
        found.append(Block(page=page, line=start + 1, language=lines[start][3:].strip(),
                           text="".join(lines[start + 1:i]), marker=marker.group(1) if marker else None,
                           name=named[0] if named else None))
        start = None
    assert start is None, f"{page}:{start}: a fence is not closed"
    return found


def section(text: str, title: str) -> str:
    """``text``'s section under ``## title``, to the next ``## `` heading
    outside a code block (a session's output has ``## `` lines of its own)."""
    lines = text.split(f"## {title}\n", 1)[1].splitlines(keepends=True)
    fenced = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("## ") and not fenced:
            return "".join(lines[:i])
    return "".join(lines)


def steps(session: str) -> list[tuple[str, str]]:
    """A console session's ``(command, output shown)`` pairs."""
    return [(command, shown) for part in re.split(r"^\$ ", session, flags=re.M)[1:]
            for command, _, shown in [part.partition("\n")]]


def documents(text: str) -> dict[str, str]:
    """The documents ``text`` names: each yaml block whose fence follows a
    line naming one `` `file.yaml` `` and ending with a colon."""
    return {b.name: b.text for b in blocks_in(text, "") if b.name and b.language == "yaml"}


def normalized(text: str) -> str:
    """``text`` with what varies between runs (``VARIABLE``) as placeholders."""
    for pattern, placeholder in VARIABLE:
        text = pattern.sub(placeholder, text)
    return text


def matches(shown: str, output: str) -> bool:
    """Whether ``output`` is what a page shows: equal once normalized, a line
    ``...`` in what is shown standing for any number of lines."""
    parts = [re.escape(p) for p in re.split(r"^\.\.\.\n", normalized(shown), flags=re.M)]
    return re.fullmatch("(?:.*\n)*?".join(parts), normalized(output)) is not None


def session_env() -> dict[str, str]:
    """The environment of a replayed session: no store or Neo4j settings from
    the caller's, this Python's ``ctxgraph`` first on PATH, git with a fixed
    author, fixed dates (so a commit's id, and the task imported from it, is
    the same in every run) and no global configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXGRAPH_", "GIT_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               GIT_AUTHOR_NAME="dev", GIT_AUTHOR_EMAIL="dev@example.com",
               GIT_COMMITTER_NAME="dev", GIT_COMMITTER_EMAIL="dev@example.com", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_DATE="2026-03-01T09:00:00Z", GIT_COMMITTER_DATE="2026-03-01T09:00:00Z")
    return env


def _run(session: list[tuple[str, str]], cwd: Path, shown_home: Path | None) -> Iterator[tuple[str, str, int, str]]:
    """``(command, shown, exit status, output)`` of each command run with bash in
    ``cwd``, in turn (one shell each): the output is stdout, then stderr, with
    ``shown_home`` (if given) written as ``SHOWN_HOME`` and this Python's
    ``bin`` as ``SHOWN_BIN``."""
    env = session_env()
    for command, shown in session:
        proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
        output = proc.stdout + proc.stderr
        if shown_home is not None:
            output = output.replace(str(Path(sys.executable).parent), SHOWN_BIN).replace(str(shown_home), SHOWN_HOME)
        yield command, shown, proc.returncode, output


def replay(session: list[tuple[str, str]], cwd: Path, *, shown_home: Path | None = None) -> list[str]:
    """Run the session's commands in ``cwd`` and return the mismatches: a
    failing command (the last one run), or an output not what is shown."""
    wrong = []
    for command, shown, status, output in _run(session, cwd, shown_home):
        if status != 0:
            wrong.append(f"$ {command}\nexit {status}:\n{output}")
            break
        if not matches(shown, output):
            wrong.append(f"$ {command}\nshown:\n{shown}\nprinted:\n{output}")
    return wrong


def page_session(page: Path, home: Path) -> tuple[list[tuple[str, str]], Path]:
    """The steps of ``page``'s console sessions (those not marked, in order) and
    the folder they run in, ``home/shop``, made with the documents the page names."""
    text = page.read_text(encoding="utf-8")
    folder = home / "shop"
    folder.mkdir()
    for name, document in documents(text).items():
        (folder / name).write_text(document, encoding="utf-8")
    return [step for b in blocks_in(text, page.name) if b.language == "console" and b.marker is None
            for step in steps(b.text)], folder


def _recapture(page: Path) -> None:
    """Print ``page``'s sessions as they run now (to update a page after a
    change of output: compare, then copy what is right)."""
    import tempfile

    with tempfile.TemporaryDirectory() as home:
        session, folder = page_session(page, Path(home))
        for command, _, status, output in _run(session, folder, Path(home)):
            print(f"$ {command}\n{output}", end="" if output.endswith("\n") or not output else "\n")
            if status:
                print(f"(exit {status})")
                break


if __name__ == "__main__":  # python -m tests._sessions docs/PAGE.md
    _recapture(Path(sys.argv[1]))
