"""A chat that cannot start releases the memory store its app opened."""

from __future__ import annotations

import pytest

from shiyi.config import Settings
from shiyi.errors import SessionNotFound
from shiyi.interfaces.cli.chat import ChatSession
from shiyi.memory.service import Memory


def test_unknown_session_closes_the_memory_it_opened(settings: Settings) -> None:
    settings.memory.lock_timeout = 0
    with pytest.raises(SessionNotFound):
        ChatSession(settings, "ses_nope")
    # The store lock is free again and no worker thread keeps the graph open.
    memory = Memory.open(settings, start_worker=False)
    memory.close()
