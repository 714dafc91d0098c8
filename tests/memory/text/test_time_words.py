"""Which turns say when something happened: phrasings written from everyday speech."""

from __future__ import annotations

import pytest

from shiyi.memory.text.time_words import MAX_CHARS, says_when


@pytest.mark.parametrize(
    "text",
    [
        "I started a pottery class last week!",
        "We moved into the new flat two months ago.",
        "On Saturday I finally ran my first 10k.",
        "Back in 2019 I was still living in Oslo.",
        "Got my results on March 3rd, all good.",
        "I signed up on 14 June.",
        "Yesterday was wild, the whole office lost power.",
        "We went camping over the weekend with the kids.",
        "A few days ago I bumped into my old teacher.",
        "Two weeks later she called me back.",
        "The other day I met him at the market.",
        "This morning I adopted a rescue dog.",
        "Since April I've been going to a choir.",
        "我昨天去了博物馆。",
        "I'm starting the new job next Monday.",
    ],
)
def test_a_turn_placing_an_event_in_time(text: str) -> None:
    assert says_when(text)


@pytest.mark.parametrize(
    "text",
    [
        "I love pottery, it calms me down.",
        "That sounds amazing, tell me more!",
        "My sister may come along too.",  # "may" the verb, not the month
        "The march through the city was long.",
        "I have 2 days off and nothing planned.",  # a span, not a time
        "There are 1000 ways to cook rice.",
        "Saturday markets are the best.",  # a habit, not a moment
    ],
)
def test_a_turn_that_does_not(text: str) -> None:
    assert not says_when(text)


def test_only_the_opening_of_a_long_text_is_read() -> None:
    assert says_when("I started yesterday. " + "x " * MAX_CHARS)
    assert not says_when("x " * MAX_CHARS + "I started yesterday.")
