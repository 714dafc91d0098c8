"""A NUL in what memory stores (a binary file's bytes quoted in a tool result, or a model's
output) is kept on both backends; PostgreSQL, whose text cannot hold it, stores U+FFFD."""

from __future__ import annotations

import pytest

from shiyi.llm.types import Message
from shiyi.memory.service import Memory


@pytest.fixture
def memory(vectorless_memory: Memory) -> Memory:
    return vectorless_memory


def test_turns_and_facts_with_a_nul_are_stored(memory: Memory, backend: str) -> None:
    memory.record_message(
        Message("user", "the blob says zork\x00quux"),
        message_id=1, session_id="s1", run_id="r1", iteration=0,
    )  # fmt: skip
    fact = memory.remember("the magic bytes are fe\x00ed", key="magic\x00bytes")
    assert memory.worker.drain(timeout=60), memory.jobs.failed()

    [hit] = [h for h in memory.search("zork", mode="keyword") if h.node == "event"]
    stored = "\x00" if backend == "embedded" else "\ufffd"
    assert hit.text.endswith(f"the blob says zork{stored}quux")
    found = memory.get(fact.id)
    assert found is not None and found.value == f"the magic bytes are fe{stored}ed"
