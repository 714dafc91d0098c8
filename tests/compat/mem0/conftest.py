"""mem0-shaped memories on both backends: the embedded store (Kuzu + SQLite) and a real
PostgreSQL (see :mod:`tests.support.postgres`), with the real MiniLM embedder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from shiyi.compat.mem0 import Memory
from tests.memory.conftest import backend, memory_store  # noqa: F401  (both backends)

QUICKSTART = [
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {
        "role": "assistant",
        "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies.",
    },
]
"""The conversation of mem0's quickstart."""


def mem0_config(store: str) -> dict[str, Any]:
    """What a mem0 user writes: nothing for the embedded store, pgvector for PostgreSQL."""
    if store == "embedded":
        return {}
    return {"vector_store": {"provider": "pgvector", "config": {"connection_string": store}}}


@pytest.fixture
def open_mem0(memory_store: str) -> Iterator[Callable[[], Memory]]:  # noqa: F811
    """Opens the test's backend through ``Memory.from_config``; all closed at the end."""
    store = memory_store
    opened: list[Memory] = []

    def open_() -> Memory:
        memory = Memory.from_config(mem0_config(store))
        opened.append(memory)
        return memory

    yield open_
    for memory in opened:
        memory.close()


@pytest.fixture
def mem0(open_mem0: Callable[[], Memory]) -> Memory:
    return open_mem0()
