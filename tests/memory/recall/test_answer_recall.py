"""Recall of the reply that answers: a question about someone is often answered by their
reply to the other person's question ("Any plans for the summer?" / "Researching adoption
agencies."), which shares none of the question's words, while another turn of theirs shares
some ("Summer at the beach is the best").  Phrasings written from everyday speech; both
backends, the real embedding model, the real importer."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.memory.service import Memory
from tests.support.conversations import locomo_chat, open_seeded

ANSWER = "chat:D2:2"
ASIDE = "chat:D3:2"


def chat_answering(asked: str, answer: str, aside: str) -> dict[str, list[tuple[str, str]]]:
    return {
        "3:00 pm on 20 August, 2022": [
            ("Sam", "Work has been busy, but I finally finished the big report."),
            ("Lea", "Good for you! I adopted a kitten last week."),
            ("Sam", "A kitten! What's her name?"),
            ("Lea", "Miso. She sleeps all day."),
        ],
        "5:30 pm on 25 December, 2022": [("Lea", asked), ("Sam", answer)],
        "11:00 am on 10 April, 2023": [("Lea", "How have you been?"), ("Sam", aside)],
    }


PLANS = (
    "What are Sam's plans for the summer?",
    "Any big plans for the summer?",
    "Researching adoption agencies, it's been a dream of mine.",
    "Summer at the beach is the best, honestly.",
)


@pytest.mark.parametrize(
    ("question", "asked", "answer", "aside"),
    [
        PLANS,
        (
            "What is Sam's favorite book?",
            "What's your favorite book of all time?",
            "Probably Dune, I reread it every winter.",
            "I read a lot of books on the train.",
        ),
        (
            "What did Sam name his dog?",
            "So what did you name the dog? 😍",
            "Biscuit! It just suits him.",
            "My neighbour's dog barks all night.",
        ),
    ],
)
def test_the_reply_to_the_matching_question_ranks_above_the_persons_other_turns(
    tmp_path: Path, memory_store: str, question: str, asked: str, answer: str, aside: str
) -> None:
    chat = locomo_chat(tmp_path / "chat.json", ("Sam", "Lea"), chat_answering(asked, answer, aside))
    memory: Memory = open_seeded(tmp_path, memory_store, chat)
    try:
        ids = [hit.id for hit in memory.retriever.search(question, limit=5, touch=False)]
        assert ANSWER in ids[:2]  # after the question it answers, at most
        assert ids.index(ANSWER) < ids.index(ASIDE)
    finally:
        memory.close()


def test_at_a_plain_neighbours_share_the_aside_leads(
    tmp_path: Path, memory_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cases above test the answer's share: at a neighbour's, and with the answer's
    vector its own (no lead-in from the question, which also carries it), the aside ranks
    higher."""
    monkeypatch.setattr("shiyi.memory.recall.boosts.ANSWER_SHARE", 0.1)
    question, asked, answer, aside = PLANS
    chat = locomo_chat(tmp_path / "chat.json", ("Sam", "Lea"), chat_answering(asked, answer, aside))
    memory: Memory = open_seeded(tmp_path, memory_store, chat, lead_in=False)
    try:
        ids = [hit.id for hit in memory.retriever.search(question, limit=5, touch=False)]
        assert ids.index(ASIDE) < ids.index(ANSWER)
    finally:
        memory.close()
