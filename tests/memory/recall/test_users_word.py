"""A fact the user stated comes before the assistant's turns on its topic: a small model's
wrong answer, stored as a turn, no longer outranks what the user said.  Both backends, the
real embedding model; phrasings written for this test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.memory.service import Memory
from tests.support.conversations import open_seeded
from tests.support.records import turn

STATED = "My brother Ravi owns three goats"
ASKED = "Does my brother have any goats?"
WRONG = "No, your brother does not have any goats. He lives in a flat with no animals."
AFTER = "Goats are lovely animals; many people keep goats for milk."


@pytest.fixture
def memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    turns = [
        turn(1, ASKED),
        turn(2, WRONG, role="assistant", segment_type="response"),
        turn(3, "What do goats eat?"),
        turn(4, AFTER, role="assistant", segment_type="response"),
    ]
    opened = open_seeded(tmp_path, memory_store, turns)
    opened.remember(STATED)
    assert opened.worker.drain(timeout=120)
    yield opened
    opened.close()


def texts(memory: Memory, query: str) -> list[str]:
    return [hit.text for hit in memory.search(query, limit=5)]


def test_the_users_statement_comes_before_the_assistants_answer(memory: Memory) -> None:
    found = texts(memory, "does my brother have goats?")
    stated = next(i for i, t in enumerate(found) if STATED in t)
    wrong = next(i for i, t in enumerate(found) if WRONG in t)
    assert stated < wrong


def test_without_the_rule_the_wrong_answer_ranked_first(memory: Memory) -> None:
    from dataclasses import replace

    memory.retriever.boosts = replace(memory.retriever.boosts, users_word=False)
    found = texts(memory, "does my brother have goats?")
    assert WRONG in found[0]  # what the rule is for: it could fail without it
