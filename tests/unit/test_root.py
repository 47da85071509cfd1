"""The project's root (ctxgraph.service.root): where it is found, the memory's
project id made of it, and the project a context searches among several."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgraph.core.models import MemoryProject
from ctxgraph.memory.index import PROJECT_ID
from ctxgraph.service.root import ProjectRoot, find_root, git_work_tree, pick_project, project_id


@pytest.mark.parametrize(("name", "expected"), [
    ("shop", "shop"), ("my.app_2-x", "my.app_2-x"), ("my app (copy)", "my-app-copy-"), (".hidden", "hidden"),
    ("___", "project"), ("é", "project"), ("x" * 150, "x" * 100),
])
def test_project_id_is_the_folder_name_made_valid(name: str, expected: str) -> None:
    got = project_id(Path("/somewhere") / name)
    assert got == expected and PROJECT_ID.fullmatch(got)


def test_the_root_is_the_option_then_the_settings_file_then_the_git_work_tree(tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    (tree / "sub" / ".ctxgraph").mkdir(parents=True)
    (tree / ".git").write_text("gitdir: elsewhere\n")  # a worktree's .git is a file
    store = tree / "sub" / ".ctxgraph" / "graph.db"
    assert git_work_tree(tree / "sub") == tree
    assert find_root(store_path=store) == ProjectRoot(tree.resolve(), "git work tree")
    assert find_root(settings_source=str(tree / "sub" / "ctxgraph.toml"), store_path=store) == \
        ProjectRoot((tree / "sub").resolve(), "settings file")
    assert find_root(tmp_path, settings_source=str(tree / "ctxgraph.toml"), store_path=store) == \
        ProjectRoot(tmp_path.resolve(), "--root")
    # A Neo4j store (no file): the work tree around the current folder.
    assert find_root(cwd=tree / "sub") == ProjectRoot(tree.resolve(), "git work tree")
    # A store outside any work tree, no settings: no root.
    assert find_root(store_path=tmp_path / "graph.db") is None


def _project(pid: str, root: str) -> MemoryProject:
    return MemoryProject(id=pid, root=root, indexed_at="2026-01-01T00:00:00+00:00", embeddings=False, model="",
                         files=1, chunks=1)


def test_among_several_projects_the_roots_is_searched() -> None:
    root = ProjectRoot(Path("/src/shop"), "git work tree")
    shop, other = _project("store-front", "/src/shop"), _project("other", "/src/other")
    # Named: as named; one project, or no root: the memory's own choice (None).
    assert pick_project([shop, other], "other", root) == ("other", "")
    assert pick_project([other], None, root) == (None, "")
    assert pick_project([shop, other], None, None) == (None, "")
    # By the folder it was indexed from, else by the id made of the root.
    assert pick_project([other, shop], None, root) == (
        "store-front", "associative memory: project store-front, the root's: /src/shop (git work tree)")
    assert pick_project([other, _project("shop", "/old/shop")], None, root)[0] == "shop"
    pid, note = pick_project([other, _project("x", "/x")], None, root)
    assert pid is None and note == "associative memory: no indexed project is the root's: /src/shop (git work tree)"
