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
    defines its own ``memory``.  ``LEAD_IN = False`` in a module: each turn's vector is its
    own text's (its contrasts show a query-time mechanism a lead-in would blur)."""
    lead_in = getattr(request.module, "LEAD_IN", True)
    opened = open_seeded(tmp_path, memory_store, one_chat(request.module.TURNS), lead_in=lead_in)
    yield opened
    opened.close()
