"""A chatty message is read clause by clause, each with its dropped subject restored."""

from __future__ import annotations

import pytest

from shiyi.memory.text.chat_clauses import LONGEST, clauses


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "Sold the boat in May, way too much upkeep.",
            ("I sold the boat in May", "way too much upkeep."),
        ),
        (
            "Quit the choir; rehearsals clashed with work",
            ("I quit the choir", "rehearsals clashed with work"),
        ),
        ("Finally cancelled the gym membership!", ("I finally cancelled the gym membership",)),
        ("Well, swapped my Kia for a Skoda", ("I swapped my Kia for a Skoda",)),
        ("I sold my flat and bought a barge", ("I sold my flat", "I bought a barge")),
        ("Pat left the band, so I sing lead now", ("Pat left the band", "I sing lead now")),
    ],
)
def test_a_message_is_read_as_its_clauses(message: str, expected: tuple[str, ...]) -> None:
    assert clauses(message) == expected


@pytest.mark.parametrize(
    "message",
    [
        "I work at Marks and Spencer",
        "Jared moved to Derby",
        "I need a bigger desk",
        "I live in Hull",
    ],
)
def test_one_plain_clause_is_kept_as_it_is(message: str) -> None:
    assert clauses(message) == (message,)


def test_a_long_message_is_not_split() -> None:
    message = "Sold the boat, " + "and that was that " * (LONGEST // 10)
    assert clauses(message) == (message.strip(),)
