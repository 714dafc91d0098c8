"""Fixtures shared by the recall tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.memory.service import Memory
from tests.support.conversations import one_chat, open_seeded


@pytest.fixture
def memory(request: pytest.FixtureRequest, tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    """A memory on the test's backend holding the test module's ``TURNS`` as one chat
    (:func:`~tests.support.conversations.one_chat`); a module seeding its memory otherwise
    defines its own ``memory``."""
    opened = open_seeded(tmp_path, memory_store, one_chat(request.module.TURNS))
    yield opened
    opened.close()
