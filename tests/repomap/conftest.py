from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.llm.tokens import TokenCounter
from tests.support.repomap_repo import write_repo


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    """The real cl100k counter, loaded once for the whole run (loading takes ~1 s)."""
    return TokenCounter()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo")


@pytest.fixture
def cache_path(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "repomap.sqlite3"
