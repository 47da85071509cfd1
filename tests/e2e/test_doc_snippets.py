"""Every fenced snippet of docs/*.md is run or checked, or marked as not run:

- ``console``: each page's sessions are replayed, in order, with bash in one
  folder of their own (shown as ``/home/me/shop``) holding the documents the
  page names (`` `name.yaml` ``: before a yaml block), against one embedded
  store per page; each command's output must be what the page shows, but for
  what varies between runs (``tests/_sessions.py``'s ``VARIABLE``) and a
  ``...`` line standing for lines left out;
- ``yaml``: handoffs and tasks files load with ctxgraph's own loaders;
- ``toml``: settings load with ``load_settings``;
- ``json``: parses (one document, or one message a line); the JSON-RPC
  requests shown are sent to ``ctxgraph mcp`` serving the README Quickstart's
  graph, and must get the responses shown;
- ``sh``: each ``ctxgraph`` command (``nohup``, a path before it, aside)
  parses with the CLI's own parser (its subcommands and options exist), each ``python``/``bash`` script named is
  in the repository, each ``python -m`` module importable;
- ``python``: compiles; ``cypher``: is the text of a saved analyst query.

A block that is none of these — an excerpt, output of a machine or data
set outside the repository — says so in an HTML comment on the line before
its fence: ``<!-- snippet: excerpt -->`` or ``<!-- snippet: not run: WHY -->``.
A new snippet that is neither checked nor marked fails this test. After a
change of output, ``python -m tests._sessions docs/PAGE.md`` prints a
page's sessions as they run now.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import re
import shlex
import subprocess
import threading
from pathlib import Path
from typing import Any

import click
import pytest
from _fresh_install import quickstart

from tests._sessions import SHOWN_HOME, Block, blocks, page_session, replay, session_env, steps

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BLOCKS = [block for page in sorted(DOCS.glob("*.md")) for block in blocks(page)]
CHECKED = {"console", "yaml", "toml", "json", "sh", "python", "cypher"}
SESSION_PAGES = sorted({b.page for b in BLOCKS if b.language == "console" and b.marker is None})


def _checked(language: str) -> list[Block]:
    return [b for b in BLOCKS if b.language == language and b.marker is None]


def test_every_snippet_is_checked_or_marked() -> None:
    assert [b.where for b in BLOCKS if b.marker is None and b.language not in CHECKED] == []
    assert [b.where for b in BLOCKS if b.marker and not re.fullmatch(r"excerpt|not run: \S.*", b.marker)] == []
    assert SESSION_PAGES, "no session is replayed"


@pytest.mark.parametrize("page", SESSION_PAGES)
def test_the_pages_sessions_print_what_they_show(page: str, tmp_path: Path) -> None:
    session, folder = page_session(DOCS / page, tmp_path)
    assert session, f"{page}: a console block without a $ command"
    assert replay(session, folder, shown_home=tmp_path) == []


def test_the_yaml_snippets_load_as_the_documents_they_are() -> None:
    from ctxgraph.core.documents import load_handoff, load_tasks

    checked = _checked("yaml")
    for block in checked:
        data = block.text.encode()
        if block.text.startswith("tasks:"):
            assert load_tasks(data, block.where).tasks, block.where
        else:
            assert block.text.startswith("task_id:"), f"{block.where}: neither a handoff nor a tasks file"
            load_handoff(data, block.where)
    assert checked


def test_the_toml_snippets_load_as_settings(tmp_path: Path) -> None:
    from ctxgraph.settings import load_settings

    for block in _checked("toml"):
        (tmp_path / "ctxgraph.toml").write_text(block.text, encoding="utf-8")
        load_settings(tmp_path / "ctxgraph.toml")


def _json(block: Block) -> list[Any]:
    """The JSON of ``block``: one document, or one message a line."""
    try:
        return [json.loads(block.text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in block.text.splitlines()]


def test_the_json_snippets_parse() -> None:
    for block in _checked("json"):
        assert _json(block), block.where


def _quickstart_store(home: Path) -> Path:
    """The README Quickstart's graph in ``home/shop`` (returned): its commands up to the first context."""
    folder = home / "shop"
    folder.mkdir()
    handoff, session = quickstart()
    setup = list(itertools.takewhile(lambda step: not step[0].startswith("ctxgraph context"), steps(session)))
    at = next(n for n, (command, _) in enumerate(setup) if "handoff.yaml" in command)
    assert replay(setup[:at], folder, shown_home=home) == []
    (folder / "handoff.yaml").write_text(handoff, encoding="utf-8")  # written when the agent is done
    assert replay(setup[at:], folder, shown_home=home) == []
    return folder


def test_the_mcp_exchanges_are_what_the_server_answers(tmp_path: Path) -> None:
    """The JSON-RPC requests the pages show, sent over stdio to ``ctxgraph mcp``
    serving the Quickstart's graph (after ``initialize``), get the responses shown."""
    messages = [m for b in _checked("json") for m in _json(b) if isinstance(m, dict) and m.get("jsonrpc")]
    requests = {m["id"]: m for m in messages if "method" in m}
    shown = {m["id"]: m for m in messages if "method" not in m}
    assert requests and sorted(requests) == sorted(shown)
    folder = _quickstart_store(tmp_path)
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "docs", "version": "0"}}}
    answers = {}
    # --no-index: the index `init` wrote, not re-scanned (a background run racing the request would add handoff.yaml)
    with subprocess.Popen(["ctxgraph", "mcp", "--no-index"], cwd=folder, env=session_env(), text=True,
                          stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as server:
        assert server.stdin is not None and server.stdout is not None
        watchdog = threading.Timer(120, server.kill)  # a server that stops answering fails the test
        watchdog.start()
        try:
            for message in [initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                            *requests.values()]:
                server.stdin.write(json.dumps(message) + "\n")
                server.stdin.flush()
                if "id" in message:
                    answers[message["id"]] = json.loads(server.stdout.readline())
            server.stdin.close()
            server.wait(60)
        except BaseException:
            server.kill()
            raise
        finally:
            watchdog.cancel()
    assert server.returncode == 0
    assert answers.pop(0)["result"]["protocolVersion"] == "2025-11-25"
    assert answers == shown


def test_the_python_snippets_compile() -> None:
    for block in _checked("python"):
        compile(block.text, block.where, "exec")


def test_the_cypher_snippets_are_saved_queries() -> None:
    saved = {p.read_text(encoding="utf-8").strip() for p in (ROOT / "ctxgraph" / "cypher" / "analyst").glob("*.cypher")}
    assert [b.where for b in _checked("cypher") if b.text.strip() not in saved] == []


def _parse_ctxgraph(args: list[str]) -> None:
    """Parse ``ctxgraph ARGS`` as the CLI would, down to the subcommand, without running it."""
    from ctxgraph.cli import main

    command: click.Command = main
    parent: click.Context | None = None
    name = "ctxgraph"
    while True:
        context = command.make_context(name, list(args), parent=parent)
        if not isinstance(command, click.Group):
            return
        rest = [*context._protected_args, *context.args]
        assert rest, f"ctxgraph {' '.join(args)}: no subcommand"
        name, found, args = command.resolve_command(context, rest)
        assert found is not None and name is not None
        command, parent = found, context


def _shell_commands(text: str) -> list[list[str]]:
    """The simple commands of a sh block (continuation lines joined, comments
    left out, split at ``&&``, ``;``, ``|`` and redirections), those inside
    ``$(...)`` too."""
    commands: list[list[str]] = []
    for line in text.replace("\\\n", " ").splitlines():
        for inner in re.findall(r"\$\(([^()]*)\)", line):
            commands += _shell_commands(inner)
        words: list[str] = []
        for word in shlex.split(line, comments=True):
            if word in {"&&", ";", "|", "&", "||"} or re.fullmatch(r"\d?>.*", word):
                commands.append(words)
                words = []
            elif not words and word.startswith(">"):
                continue
            else:
                words.append(word)
        commands.append(words)
    return [c for c in commands if c]


def test_the_sh_snippets_name_commands_that_exist(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()  # the folder the pages show as /home/me/shop, for options naming existing paths
    wrong = []
    for block in _checked("sh"):
        for words in _shell_commands(block.text.replace(SHOWN_HOME, str(tmp_path))):
            if words[0] == "nohup":
                words = words[1:]
            program, *args = words
            try:
                if Path(program).name == "ctxgraph":
                    _parse_ctxgraph(args)
                elif program in {"python", "bash"} and args and args[0] == "-m":
                    assert importlib.util.find_spec(args[1]) is not None, f"no module {args[1]}"
                elif program in {"python", "bash"} and args and args[0].endswith((".py", ".sh")):
                    assert (ROOT / args[0]).is_file(), f"no file {args[0]}"
            except (click.ClickException, AssertionError) as e:
                wrong.append(f"{block.where}: {' '.join(words)}: {e}")
    assert wrong == []
