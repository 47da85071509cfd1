"""The manual holds together: the README stays a front door, mkdocs.yml's nav
lists every page of docs/ (and nothing else), and every relative link in the
README and docs/ reaches an existing file and heading (docs/ links stay in
docs/, as ``mkdocs build --strict`` requires)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _unfenced(text: str) -> str:
    """``text`` without its fenced code blocks."""
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def _prose(text: str) -> str:
    """``text`` without its code: fenced blocks and inline code."""
    return re.sub(r"`[^`\n]*`", "", _unfenced(text))


def _anchors(path: Path) -> set[str]:
    """The ids of ``path``'s headings as GitHub and mkdocs' toc make them."""
    found = set()
    for line in _unfenced(path.read_text(encoding="utf-8")).splitlines():
        heading = re.match(r"#{1,6} (.*)", line)
        if heading:
            title = re.sub(r"[^\w\- ]", "", heading.group(1).replace("`", "")).strip().lower()
            found.add(title.replace(" ", "-"))
    return found


def _nav_pages(nav: list[object]) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [str(value)]
    return pages


def test_the_readme_is_a_front_door() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


def test_the_nav_lists_every_page_once() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    assert sorted(nav) == sorted(p.name for p in PAGES)
    assert len(nav) == len(set(nav))


@pytest.mark.parametrize("path", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_every_relative_link_resolves(path: Path) -> None:
    broken = []
    for target in LINK.findall(_prose(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.is_file():
            broken.append(f"{target}: no such file")
        elif path.parent == DOCS and resolved.parent != DOCS:
            broken.append(f"{target}: outside docs/ (mkdocs cannot follow it)")
        elif anchor and anchor not in _anchors(resolved):
            broken.append(f"{target}: no such heading")
    assert broken == []


def _blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.M | re.S)


def test_the_settings_snippets_load_and_show_the_defaults(tmp_path: Path) -> None:
    from ctxgraph.compute.config import ContextConfig
    from ctxgraph.settings import load_settings

    blocks = _blocks(DOCS / "concepts.md", "toml")
    assert len(blocks) == 3
    for i, block in enumerate(blocks):
        (tmp_path / "ctxgraph.toml").write_text(block, encoding="utf-8")
        loaded = load_settings(tmp_path / "ctxgraph.toml")
        if i:  # the ranking's weights and the memory's settings, "defaults shown"
            assert loaded.context == ContextConfig(), block


def test_the_analysts_page_lists_every_saved_query() -> None:
    listed = re.findall(r"^\| `(\w+\.cypher)` \|", (DOCS / "analysts.md").read_text(encoding="utf-8"), flags=re.M)
    shipped = sorted(p.name for p in (ROOT / "ctxgraph" / "cypher" / "analyst").glob("*.cypher"))
    assert sorted(listed) == shipped


def test_the_reference_names_every_command_and_exit_code() -> None:
    import click

    from ctxgraph import errors
    from ctxgraph.cli import main

    text = (DOCS / "reference.md").read_text(encoding="utf-8")
    first_cells = re.findall(r"^- (`ctxgraph [^`]*`)", text, flags=re.M)  # each item's synopsis
    spans = [span.removeprefix("ctxgraph ") for cell in first_cells for span in re.findall(r"`([^`]*)`", cell)]
    documented = {" ".join(w for w in span.split()[:2] if re.fullmatch(r"[a-z][a-z-]*", w)) for span in spans}

    def commands(group: click.Group, prefix: str = "") -> list[str]:
        found = []
        for name, command in group.commands.items():
            found += commands(command, f"{prefix}{name} ") if isinstance(command, click.Group) else [prefix + name]
        return found

    assert sorted(set(commands(main)) - documented) == []
    codes = {int(c) for c in re.findall(r"^\| (\d) \|", text, flags=re.M)}
    raised = {cls.exit_code for cls in vars(errors).values()
              if isinstance(cls, type) and issubclass(cls, errors.CtxgraphError)}
    assert raised <= codes and {0, 1, 2} <= codes
