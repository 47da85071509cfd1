"""docs/reference.md against the code: every command and option of the
``ctxgraph`` click tree is in its list and nothing the list names is gone;
every environment variable the code reads is documented, and every
``CTXGRAPH_*`` variable the docs name is read somewhere; no help text names a
machine's path; ``ctxgraph mcp --help`` names every tool the server
registers; shell completion works as documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click

from ctxgraph.cli import main

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
DOCS = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
#: The options every command that opens a store shares, described once above the list.
SHARED = {"--store", "--neo4j", "--neo4j-user", "--neo4j-database", "--password-stdin"}
OPTION = re.compile(r"(?<![\w-])--?[a-zA-Z][\w-]*")


def commands(group: click.Group = main, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], click.Command]:
    """Every command that runs, by its path (the groups' own paths left out; the root kept)."""
    found: dict[tuple[str, ...], click.Command] = {path: group} if not path else {}
    for name, cmd in group.commands.items():
        if cmd.hidden:
            continue
        if isinstance(cmd, click.Group):
            found.update(commands(cmd, (*path, name)))
        else:
            found[(*path, name)] = cmd
    return found


def options(cmd: click.Command) -> list[set[str]]:
    """Each visible option's names (a flag's on and off names together), help left out."""
    return [set(p.opts) | set(p.secondary_opts) for p in cmd.params
            if isinstance(p, click.Option) and not p.hidden and "--help" not in p.opts]


def documented() -> dict[tuple[str, ...], set[str]]:
    """The list's synopses (each item's first code span): command path -> the options named."""
    found: dict[tuple[str, ...], set[str]] = {}
    for line in REFERENCE.splitlines():
        m = re.match(r"- `ctxgraph ([^`]*)`", line)
        if not m:
            continue
        words = m.group(1).split()
        cmd: click.Command = main
        path: list[str] = []
        while words and isinstance(cmd, click.Group) and words[0] in cmd.commands:
            cmd = cmd.commands[words[0]]
            path.append(words.pop(0))
        assert not (words and re.fullmatch(r"[a-z][a-z-]+", words[0])), f"no command {line[:80]!r}"
        found.setdefault(tuple(path), set()).update(OPTION.findall(m.group(1)))
    return found


def test_every_command_and_option_is_in_the_reference_and_nothing_gone() -> None:
    docs = documented()
    tree = commands()
    problems = [f"command not documented: ctxgraph {' '.join(p)}" for p in tree if p not in docs]
    problems += [f"documented, not a command: ctxgraph {' '.join(p)}" for p in docs if p not in tree]
    for path, cmd in tree.items():
        named = docs.get(path, set())
        known = set().union(*options(cmd)) if options(cmd) else set()
        problems += [f"ctxgraph {' '.join(path)}: option {sorted(names)[-1]} not documented"
                     for names in options(cmd) if not names & (named | SHARED)]
        problems += [f"ctxgraph {' '.join(path)}: {name} documented, not an option" for name in sorted(named - known)]
    intro = REFERENCE.split("\n- `ctxgraph", 1)[0]
    problems += [f"shared option {name} not described" for name in sorted(SHARED) if name not in intro]
    assert not problems, "\n".join(problems)


def read_in_code() -> set[str]:
    reads = re.compile(r"""(?:environ\.get|environ\[|getenv|envvar=|env\.get|env\[)\(?\s*["']([A-Z][A-Z0-9_]*)["']""")
    named = re.compile(r"""["']((?:CTXGRAPH|NEO4J)_[A-Z0-9_]+)["']""")
    found: set[str] = set()
    for path in (ROOT / "ctxgraph").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        found |= set(reads.findall(text)) | set(named.findall(text))
    return found


def test_every_environment_variable_is_documented_and_exists() -> None:
    code = read_in_code()
    assert {"CTXGRAPH_STORE", "NEO4J_URI", "CTXGRAPH_EMBEDDING_THREADS"} <= code  # the scan finds reads at all
    missing = sorted(v for v in code if not re.search(rf"(?<![\w]){v}(?![\w])", DOCS))
    assert not missing, f"read by the code, not in docs/ or the README: {missing}"
    sources = "\n".join(p.read_text(encoding="utf-8") for folder in ("ctxgraph", "benchmarks", "scripts", "tests")
                        for suffix in ("*.py", "*.sh") for p in (ROOT / folder).rglob(suffix)
                        if p.resolve() != Path(__file__).resolve())
    gone = sorted({v for v in re.findall(r"(?<![\w])CTXGRAPH_[A-Z0-9_]+", DOCS)
                   if not re.search(rf"(?<![\w]){v}(?![\w])", sources)})
    assert not gone, f"documented, read nowhere: {gone}"
    table = REFERENCE.split("## Environment variables", 1)[1]
    assert not sorted(v for v in code if v not in table), "every variable in the reference's table"


def test_no_help_text_names_a_machines_path() -> None:
    machine = re.compile(r"(?<![\w.])/(?:work|home|root|tmp|Users|mnt)/")
    for path, cmd in commands().items():
        with click.Context(cmd, info_name=" ".join(("ctxgraph", *path))) as ctx:
            text = cmd.get_help(ctx)
        assert not machine.search(text), f"ctxgraph {' '.join(path)} --help: {machine.search(text)}"


def run_cli(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, "-c", "from ctxgraph.cli import main; main(prog_name='ctxgraph')", *args],
                          capture_output=True, text=True, check=False, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    return done.stdout


def test_mcp_help_names_every_tool_the_server_registers() -> None:
    from ctxgraph.mcp.limits import READ_TOOLS, WRITE_TOOLS

    text = " ".join(run_cli("mcp", "--help").split()).replace("- ", "-")
    section = text.split("Tools:", 1)[1].split("Resources:", 1)[0]
    assert [t for t in (*READ_TOOLS, *WRITE_TOOLS) if not re.search(rf"\b{t}\b", section)] == []
    rest = section
    for t in (*READ_TOOLS, *WRITE_TOOLS):
        rest = re.sub(rf"\b{t}\b", "", rest)
    assert not re.findall(r"\b[a-z]+_[a-z_]+\b", rest)  # no tool named that the server lacks
    assert len(READ_TOOLS) + len(WRITE_TOOLS) >= 13


def test_shell_completion_works_as_documented() -> None:
    assert "_CTXGRAPH_COMPLETE=bash_source ctxgraph" in REFERENCE
    script = run_cli(env={"_CTXGRAPH_COMPLETE": "bash_source"})
    assert "_ctxgraph_completion" in script
    words = run_cli(env={"_CTXGRAPH_COMPLETE": "bash_complete", "COMP_WORDS": "ctxgraph ta", "COMP_CWORD": "1"})
    assert "plain,task" in words.split()
