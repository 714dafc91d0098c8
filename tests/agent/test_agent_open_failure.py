"""An agent that cannot be built releases the memory store it opened."""

from __future__ import annotations

import pytest

from shiyi.agent import Agent
from shiyi.config import Settings
from shiyi.errors import SessionNotFound
from shiyi.llm.scripted import ScriptedModel
from shiyi.memory.service import Memory


def test_unknown_session_closes_the_memory_it_opened(settings: Settings) -> None:
    settings.memory.lock_timeout = 0
    with pytest.raises(SessionNotFound):
        Agent.from_settings(settings, model=ScriptedModel([]), session_id="ses_nope")
    # The store lock is free again and no worker thread keeps the graph open.
    memory = Memory.open(settings, start_worker=False)
    memory.close()
