"""Recall on an English chat (LoCoMo format, two people, dated sessions) where the same
thing happens several times and only the question's time tells which: "last Christmas",
"last August", "at Easter 2023", "two Fridays ago", "at the end of last year", counted
back from the conversation's own clock (its newest turn, Wednesday 16 August 2023).  Both
backends, the real embedding model, the real importer; every case fails on the reading before
these phrases."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.memory.service import Memory
from tests.support.conversations import locomo_chat, open_seeded, top_ids

SESSIONS = {
    "3:00 pm on 20 August, 2022": [
        ("Ana", "We baked cookies again, chocolate chip this time."),
        ("Ben", "Yum."),
    ],
    "5:30 pm on 25 December, 2022": [
        ("Ana", "We baked cookies again, oatmeal raisin this time."),
        ("Ben", "Yum."),
    ],
    "11:00 am on 10 April, 2023": [
        ("Ana", "We baked cookies again, peanut butter this time."),
        ("Ben", "Yum."),
    ],
    "7:15 pm on 4 August, 2023": [
        ("Ana", "We baked cookies again, lemon this time."),
        ("Ben", "Yum."),
    ],
    "8:00 pm on 15 August, 2023": [
        ("Ana", "We baked cookies again, almond this time."),
        ("Ben", "Yum."),
    ],
    "8:00 pm on 16 August, 2023": [
        ("Ben", "How was your day?"),
        ("Ana", "Busy, but good. Work was calm."),
    ],
}


@pytest.fixture
def memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    chat = locomo_chat(tmp_path / "chat.json", ("Ana", "Ben"), SESSIONS)
    opened = open_seeded(tmp_path, memory_store, chat)
    yield opened
    opened.close()


@pytest.mark.parametrize(
    ("question", "turn"),
    [
        ("What cookies did Ana bake last Christmas?", "chat:D2:1"),
        ("What cookies did Ana bake last August?", "chat:D1:1"),
        ("What cookies did Ana bake at Easter 2023?", "chat:D3:1"),
        ("What cookies did Ana bake two Fridays ago?", "chat:D4:1"),
        ("What cookies did Ana bake at the end of last year?", "chat:D2:1"),
    ],
)
def test_the_time_the_question_names_picks_the_turn(
    memory: Memory, question: str, turn: str
) -> None:
    assert top_ids(memory.retriever, question) == [turn]
