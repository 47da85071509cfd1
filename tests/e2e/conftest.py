"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import pytest
from _fresh_install import FreshInstall, make_fresh_install


@pytest.fixture(scope="session")
def fresh_install(tmp_path_factory: pytest.TempPathFactory) -> FreshInstall:
    """The README's first command, run once per session in a fresh venv."""
    return make_fresh_install(tmp_path_factory.mktemp("fresh-install"))
