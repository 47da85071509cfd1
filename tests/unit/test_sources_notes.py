"""Code notes (ctxgraph.sources.notes, .comments, .blocks): markers in the
comments of several languages, Python docstrings, reStructuredText and
Markdown admonitions, with their lines; and the noise rules."""

from __future__ import annotations

import pytest

from ctxgraph.sources.comments import comments, runs, syntax
from ctxgraph.sources.items import note_id, path_words
from ctxgraph.sources.notes import Note, clip, file_noise, read_notes

PY = '''\
"""A module.

.. warning::

    Importing this module patches the socket module
    for the whole process.
"""
import os

URL = "http://example.com/#NOTE: not a comment"


class Pool:
    def get(self):
        """Take a connection.

        Note:
            The connection is not thread safe; give each thread its own.

        Warnings
        --------
        Blocks when the pool is empty.
        """
        # NOTE: the lock must be taken before the queue is read,
        # or two threads can take the same connection.
        #
        # This line is another comment.
        x = 1  # HACK: the driver needs a second ping after a reconnect
        # XXX: todo
        # FIXME(bob)
        # WARNING: os.environ = {}
        # note the order of these two calls matters for the retry
        x = 2
        # warn if the pool is empty
        return x
'''


def _notes(path: str, text: str) -> list[tuple[str, str, str, str]]:
    return [(n.marker, n.form, n.lines, n.text) for n in read_notes(path, text).notes]


def test_python_comments_docstrings_and_lines() -> None:
    found = _notes("src/pool.py", PY)
    assert found == [
        ("WARNING", "docstring", "3-6", "Importing this module patches the socket module for the whole process."),
        ("NOTE", "docstring", "17-18", "The connection is not thread safe; give each thread its own."),
        ("WARNING", "docstring", "20-22", "Blocks when the pool is empty."),
        ("NOTE", "comment", "24-25", "the lock must be taken before the queue is read, or two threads can take "
                                     "the same connection."),
        ("HACK", "comment", "28", "the driver needs a second ping after a reconnect"),
        ("NOTE", "comment", "32", "the order of these two calls matters for the retry"),
    ]
    notes = read_notes("src/pool.py", PY)
    assert {n.symbol for n in notes.notes} == {None, "Pool.get"}
    assert [(d.line, d.reason) for d in notes.dropped] == [
        (29, "too short"), (30, "no text"), (31, "commented-out code")]


def test_the_lines_are_those_of_the_file() -> None:
    lines = PY.splitlines()
    for note in read_notes("src/pool.py", PY).notes:
        first = lines[note.start - 1].lower()
        assert note.marker.lower() in first or note.form == "docstring", (note, first)


@pytest.mark.parametrize(("path", "text", "expected"), [
    ("web/app.ts", "const a = 1; // WARNING: the cache is shared between tabs\n"
                   "/* NOTE: keep in sync with server.ts\n * when the schema changes */\n",
     [("WARNING", "1", "the cache is shared between tabs"),
      ("NOTE", "2-3", "keep in sync with server.ts when the schema changes")]),
    ("cmd/main.go", 'url := "https://x.org" // BUG: the port is dropped on redirects\n',
     [("BUG", "1", "the port is dropped on redirects")]),
    ("src/lib.rs", "// SAFETY: the pointer is valid for the lifetime of the buffer\nunsafe { }\n",
     [("SAFETY", "1", "the pointer is valid for the lifetime of the buffer")]),
    ("db/schema.sql", "-- HACK: the index is rebuilt by hand after each import\n",
     [("HACK", "1", "the index is rebuilt by hand after each import")]),
    ("deploy.sh", "echo '# NOTE: not a comment'\n# IMPORTANT: run this as the deploy user only\n",
     [("IMPORTANT", "2", "run this as the deploy user only")]),
])
def test_comments_of_other_languages(path: str, text: str, expected: list[tuple[str, str, str]]) -> None:
    assert [(m, lines, t) for m, _, lines, t in _notes(path, text)] == expected


def test_rst_and_markdown_admonitions() -> None:
    rst = ("Serving\n=======\n\n.. danger::\n\n    The debugger runs arbitrary code.\n    Never enable it in "
           "production.\n\nText.\n\n.. admonition:: Circular Imports\n\n    Import the views at the end.\n\n"
           ".. tip::\n\n    Not a note.\n")
    assert _notes("docs/serving.rst", rst) == [
        ("DANGER", "docs", "4-7", "The debugger runs arbitrary code. Never enable it in production."),
        ("NOTE", "docs", "11-13", "Circular Imports: Import the views at the end."),
    ]
    md = ("# Setup\n\n> [!WARNING]\n> Run the migrations before starting the server.\n\n"
          "!!! note \"Caching\"\n    Responses are cached for one hour by default.\n\n"
          "```python\n# NOTE: inside a code fence\n```\n\n"
          "```{caution}\nThe cache is not shared between workers.\n```\n\n"
          "**Warning:** the token expires after ten minutes of inactivity.\n")
    assert _notes("docs/setup.md", md) == [
        ("WARNING", "docs", "3-4", "Run the migrations before starting the server."),
        ("NOTE", "docs", "6-7", "Caching Responses are cached for one hour by default."),
        ("CAUTION", "docs", "13-15", "The cache is not shared between workers."),
        ("WARNING", "docs", "17", "the token expires after ten minutes of inactivity."),
    ]


def test_a_note_whose_text_is_a_warning_is_one() -> None:
    text = 'def f():\n    """Run.\n\n    .. note:: WARNING: this deletes the cache first.\n    """\n'
    assert _notes("src/f.py", text) == [("WARNING", "docstring", "4", "this deletes the cache first.")]


@pytest.mark.parametrize(("text", "reason"), [
    ("# XXX\n", "no text"),
    ("# FIXME(bob)\n", "no text"),
    ("# XXX: todo\n", "too short"),
    ("# NOTE: see #1234\n", "only a reference"),
    ("# FIXME: https://github.com/org/repo/issues/12\n", "only a reference"),
    ("# NOTE: foo.bar(baz, qux=1)\n", "commented-out code"),
    ("# NOTE: Copyright 2020 Example Corp, all rights reserved\n", "licence"),
    ("# NOTE: the cache is never cleared here\nx = 1\n# NOTE: the cache is never cleared here\n", "repeated"),
])
def test_noise_is_dropped_with_its_reason(text: str, reason: str) -> None:
    found = read_notes("src/m.py", text)
    assert reason in [d.reason for d in found.dropped]
    assert reason != "repeated" or len(found.notes) == 1
    assert reason == "repeated" or found.notes == []


@pytest.mark.parametrize(("path", "reason"), [
    ("tests/test_app.py", "test"), ("src/app_test.go", "test"), ("web/app.spec.ts", "test"),
    ("src/conftest.py", "test"), ("src/_vendor/six.py", "vendored"), ("third_party/x/y.c", "vendored"),
    ("CHANGES.rst", "changelog"), ("docs/whatsnew/2.0.rst", "changelog"), ("src/app.py", None),
])
def test_files_whose_notes_are_not_read(path: str, reason: str | None) -> None:
    assert file_noise(path, "x = 1\n") == reason
    text = "# WARNING: the cache is shared between all the workers\n"
    assert file_noise("src/gen.py", "# Code generated by protoc. DO NOT EDIT.\n" + text) == "generated"
    if reason is not None:
        assert read_notes(path, text).notes == []


def test_syntax_by_file_name() -> None:
    assert syntax("a.py") is not None and syntax("a.py").python  # type: ignore[union-attr]
    assert syntax("Dockerfile") is not None and syntax("a.css") is not None
    assert syntax("a.md") is None and syntax("a.png") is None
    lang = syntax("a.py")
    assert lang is not None
    grouped = runs(comments("# a\n# b\nx = 1  # c\n\n# d\n", lang))
    assert [[c.line for c in run] for run in grouped] == [[1, 2], [3], [5]]


def test_ids_survive_moves_not_edits() -> None:
    a = Note("src/m.py", 3, 4, "NOTE", "the cache is shared", "comment")
    moved = Note("src/m.py", 30, 31, "NOTE", "the cache is shared", "comment")
    edited = Note("src/m.py", 3, 4, "NOTE", "the cache is not shared", "comment")
    assert note_id(a) == note_id(moved) != note_id(edited)
    assert note_id(a) != note_id(Note("src/n.py", 3, 4, "NOTE", "the cache is shared", "comment"))


def test_path_words_and_clip() -> None:
    assert path_words("src/click/shell_completion.py") == ["click", "shell", "completion", "shell_completion"]
    assert path_words("docs/index.rst") == []
    long = "The pool is shared by every worker of the process. " * 5 + "x" * 300
    assert clip(long) == ("The pool is shared by every worker of the process. " * 5).strip()
    assert clip("word " * 200).endswith(" …") and len(clip("word " * 200)) <= 402
