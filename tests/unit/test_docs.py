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
