"""Recall of the turn that says how often, asked "how often": Sam answers two questions about
his climbing with short replies, one giving a rate ("Twice a week, usually.") and one not
("Yes, and my arms still hurt!"); asked how often he climbs, the reply giving the rate ranks
above the other.  Phrasings written from everyday speech; both backends, the real embedding
model, the real importer."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.memory.service import Memory
from tests.support.conversations import locomo_chat, open_seeded

RATED = "chat:D2:2"
NOT_RATED = "chat:D3:2"


def chat_with_rate(rate: str, other: str) -> dict[str, list[tuple[str, str]]]:
    return {
        "3:00 pm on 20 August, 2022": [
            ("Sam", "I bought new climbing shoes, they pinch a bit."),
            ("Lea", "Ouch, break them in slowly."),
            ("Sam", "There's a climbing film on tonight, want to watch it?"),
            ("Lea", "Sure, I'll bring snacks."),
        ],
        "5:30 pm on 25 December, 2022": [("Lea", "Do you still go climbing a lot?"), ("Sam", rate)],
        "11:00 am on 10 April, 2023": [("Lea", "Did you go climbing lately?"), ("Sam", other)],
    }


@pytest.mark.parametrize(
    ("question", "rate", "other"),
    [
        (
            "How often does Sam go climbing?",
            "Twice a week, usually.",
            "Yes, my arms still hurt!",
        ),
        (
            "How frequently does Sam climb?",
            "Every other Sunday, with my brother.",
            "Yes, with my brother, it was great.",
        ),
        (
            "How many times a month does Sam go climbing?",
            "Every Saturday morning, at the gym.",
            "Yes, a new route.",
        ),
        (
            "How often does Sam climb?",
            "Most weekends, if I can.",
            "I did, if you can believe it.",
        ),
        (
            "How many days a week does Sam go climbing?",
            "Three days a week, after work.",
            "Yes, I went climbing for days a week ago, my arms still hurt!",
        ),
    ],
)
def test_a_how_often_question_puts_the_reply_giving_a_rate_first(
    tmp_path: Path, memory_store: str, question: str, rate: str, other: str
) -> None:
    chat = locomo_chat(tmp_path / "chat.json", ("Sam", "Lea"), chat_with_rate(rate, other))
    memory: Memory = open_seeded(tmp_path, memory_store, chat)
    try:
        ids = [hit.id for hit in memory.retriever.search(question, limit=10, touch=False)]
        assert RATED in ids[:3]
        assert NOT_RATED not in ids or ids.index(RATED) < ids.index(NOT_RATED)
    finally:
        memory.close()


@pytest.mark.parametrize("bonus", [True, False])
def test_the_rate_bonus_puts_the_reply_giving_a_rate_first(
    tmp_path: Path, memory_store: str, monkeypatch: pytest.MonkeyPatch, bonus: bool
) -> None:
    """The cases above test the bonus, not only the embedding: asked how often Sam goes
    climbing, the reply giving a rate ranks first with it and not without it (turns that
    name climbing match the question's words better)."""
    if not bonus:  # nor the lowering of "Do you still go climbing a lot?", which asks only
        monkeypatch.setattr("shiyi.memory.recall.boosts.TOLD_HOW_OFTEN_BONUS", 0.0)
        monkeypatch.setattr("shiyi.memory.recall.boosts.ASKING_PENALTY", 0.0)
    chat = locomo_chat(
        tmp_path / "chat.json",
        ("Sam", "Lea"),
        chat_with_rate("Twice a week, usually.", "Yes, my arms still hurt!"),
    )
    memory: Memory = open_seeded(tmp_path, memory_store, chat, lead_in=False)
    try:
        question = "How often does Sam go climbing?"
        first = memory.retriever.search(question, limit=1, touch=False)[0].id
        assert (first == RATED) is bonus
    finally:
        memory.close()
