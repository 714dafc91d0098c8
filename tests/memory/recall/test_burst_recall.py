"""Recall of a message sent as one piece of a burst: people chat in pieces ("we finally went
camping at Lake Tahoe" / "a bear walked right past our tent lol"), and the piece that
answers may share none of the question's words while another message of the person's shares
some.  Phrasings written from everyday chat; both backends, the real embedding model, the
real importer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from shiyi.interfaces.cli.memory_lines import hit_line
from shiyi.memory.operations.local import LocalMemory
from shiyi.memory.recall.config import Boosts
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from tests.support.conversations import locomo_chat, open_seeded

PIECE = "chat:D2:4"
ASIDE = "chat:D3:2"


def chat_in_bursts(told: str, piece: str, aside: str) -> dict[str, list[tuple[str, str]]]:
    return {
        "3:00 pm on 20 August, 2022": [
            ("Sam", "Work has been busy, but I finally finished the big report."),
            ("Lea", "Good for you! I adopted a kitten last week."),
        ],
        "5:30 pm on 25 September, 2022": [
            ("Lea", "heyy how was the weekend"),
            ("Sam", told),
            ("Sam", "u won't believe this"),
            ("Sam", piece),
            ("Lea", "omg no way"),
        ],
        "11:00 am on 10 April, 2023": [("Lea", "How have you been?"), ("Sam", aside)],
    }


CASES = [
    (
        "What happened to Sam on the camping trip at Lake Tahoe?",
        "ok so we finally went on the camping trip to Lake Tahoe",
        "a bear walked right past our tent at 3am lol",
        "Camping trips by a lake are fun, but the mosquitoes!",
    ),
    (
        "What did Sam think of the new Thai restaurant downtown?",
        "tried the new Thai restaurant downtown last night",
        "honestly the best green curry I've ever had",
        "Restaurant parking downtown is a nightmare these days.",
    ),
]


def with_boosts(memory: Memory, boosts: Boosts | None) -> Retriever:
    base = memory.retriever
    if boosts is None:
        return base
    return Retriever(base.store, base.embedder, base.weights, base.candidates, boosts=boosts)


def ranks(memory: Memory, question: str, boosts: Boosts | None = None) -> list[str]:
    # a hit showing its burst's pieces shows them in its place
    hits = with_boosts(memory, boosts).search(question, limit=8, touch=False)
    return [message for hit in hits for message in (hit.id, *hit.joined)]


@contextmanager
def chat_opened(
    tmp_path: Path, memory_store: str, told: str, piece: str, aside: str
) -> Iterator[Memory]:
    chat = locomo_chat(tmp_path / "chat.json", ("Sam", "Lea"), chat_in_bursts(told, piece, aside))
    memory: Memory = open_seeded(tmp_path, memory_store, chat)
    try:
        yield memory
    finally:
        memory.close()


@pytest.mark.parametrize(("question", "told", "piece", "aside"), CASES)
def test_a_piece_of_the_burst_that_matches_ranks_above_the_persons_other_turns(
    tmp_path: Path, memory_store: str, question: str, told: str, piece: str, aside: str
) -> None:
    with chat_opened(tmp_path, memory_store, told, piece, aside) as memory:
        with_bursts = ranks(memory, question)
        assert with_bursts.index(PIECE) < with_bursts.index(ASIDE)
        without = ranks(memory, question, replace(Boosts(), bursts=False, grouped=False))
        assert without.index(ASIDE) < without.index(PIECE)  # the burst's share is what lifts it


BURST = {"chat:D2:2", "chat:D2:3", PIECE}


@pytest.mark.parametrize(("question", "told", "piece", "aside"), CASES)
def test_the_burst_is_one_hit_that_shows_every_piece(
    tmp_path: Path, memory_store: str, question: str, told: str, piece: str, aside: str
) -> None:
    with chat_opened(tmp_path, memory_store, told, piece, aside) as memory:
        # as every interface gets it (CLI, REST, MCP, mem0-shaped API)
        hits = LocalMemory(memory).search(question, mode="hybrid", limit=4)
        shown = [h for h in hits if h.id in BURST]
        assert len(shown) == 1 and set(shown[0].joined) == BURST - {shown[0].id}
        assert shown[0].text == f"Sam: {told}\nu won't believe this\n{piece}"  # in order sent
        assert hit_line(shown[0]).endswith("; +2 of its burst)")
        apart = with_boosts(memory, replace(Boosts(), grouped=False))
        ungrouped = [h.id for h in apart.search(question, limit=4, touch=False)]
        assert len(BURST & set(ungrouped)) >= 2  # pieces of one thing said, places apart
