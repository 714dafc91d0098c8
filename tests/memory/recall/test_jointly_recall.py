"""A question about what several people both or each did lets their turns take turns in the
top k: one person's many matches no longer fill it.  Both backends, the real embedding model."""

from __future__ import annotations

import pytest

from shiyi.memory.service import Memory
from tests.support.conversations import top_ids, with_boosts

# Priya talks about her weekend hikes again and again; Sam says once what his weekends are for.
TURNS = [
    ("priya", "At the weekend I like to go hiking, it's what I love to do."),
    ("sam", "Where do you usually go?"),
    ("priya", "Every weekend I like to hike a new trail with my hiking club."),
    ("sam", "Sounds tiring."),
    ("priya", "I'd like to do the coast path next weekend."),
    ("sam", "Saturdays I'm usually at the climbing gym, bouldering with friends."),
    ("priya", "I bought new boots for my weekend hikes, I like them a lot."),
    ("sam", "Good boots matter."),
]
SAM_WEEKENDS = "turn-5"
QUESTION = "What do Sam and Priya both like to do at the weekend?"


def test_each_person_asked_about_together_has_a_turn_near_the_top(memory: Memory) -> None:
    top = top_ids(memory.retriever, QUESTION, k=4)
    assert SAM_WEEKENDS in top
    first_two = {TURNS[int(hit.rsplit("-", 1)[1])][0] for hit in top[:2]}
    assert first_two == {"sam", "priya"}


def test_without_taking_turns_one_persons_matches_fill_the_top(memory: Memory) -> None:
    top = top_ids(with_boosts(memory, jointly=False), QUESTION, k=4)
    assert SAM_WEEKENDS not in top, "the fixture no longer tells the mechanism apart"


@pytest.mark.parametrize(
    "question",
    [
        "What did Priya do at the weekend?",  # one person: her turns may fill the top
        "What did Sam and Priya do together at the weekend?",  # together: one can tell it
    ],
)
def test_a_question_not_about_each_person_keeps_its_order(memory: Memory, question: str) -> None:
    on = top_ids(memory.retriever, question, k=4)
    off = top_ids(with_boosts(memory, jointly=False), question, k=4)
    assert on == off
