"""Recall of the turn that says when, asked "when": a chat where one turn places Ana's piano
in time the way people tell it ("as a kid", "on my birthday", "at the age of six", "last
March", "growing up") and two turns match the question's words better without saying when.
Phrasings written from everyday speech; both backends, the real embedding model, the real
importer; every case ranks a timeless turn first on the reading before these phrases.

Not covered, and not passing: asked "How long has Ana been playing piano?", "I've played
piano for a couple of years" still ranks below the two turns saying "play piano" and "piano
playing" (saying when is a hint, :data:`~shiyi.memory.recall.boosts.TOLD_WHEN_BONUS`, not a
match)"""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.memory.service import Memory
from tests.support.conversations import locomo_chat, open_seeded, top_ids

TIMELESS = [
    ("Ana", "Playing piano relaxes me so much, I play piano whenever I can."),
    ("Ben", "That's lovely."),
    ("Ana", "My piano teacher says my piano playing has improved a lot."),
    ("Ben", "Nice!"),
]


def chat_telling(told: str) -> dict[str, list[tuple[str, str]]]:
    return {
        "3:00 pm on 20 August, 2022": TIMELESS,
        "5:30 pm on 25 December, 2022": [("Ben", "How is the music going?"), ("Ana", told)],
        "11:00 am on 10 April, 2023": [("Ben", "How was work?"), ("Ana", "Calm, thanks.")],
    }


@pytest.mark.parametrize(
    ("question", "told"),
    [
        ("When did Ana learn to play the piano?", "I learned the piano as a kid, you know."),
        ("When did Ana get her piano?", "I got the piano on my birthday, from my parents."),
        ("When did Ana start the piano?", "I took up the piano at the age of six."),
        ("When did Ana buy a piano?", "I bought one, a piano, last March."),
        ("When did Ana start piano?", "Piano? Growing up, my mum made me."),
        ("When did Ana take up the piano?", "Piano? At the start of the year, mum signed me up."),
    ],
)
def test_a_when_question_finds_the_turn_that_says_when(
    tmp_path: Path, memory_store: str, question: str, told: str
) -> None:
    chat = locomo_chat(tmp_path / "chat.json", ("Ana", "Ben"), chat_telling(told))
    memory: Memory = open_seeded(tmp_path, memory_store, chat)
    try:
        assert top_ids(memory.retriever, question) == ["chat:D2:2"]
    finally:
        memory.close()
