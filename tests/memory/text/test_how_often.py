"""Whether a turn says how often: phrasings written from everyday speech."""

from __future__ import annotations

import pytest

from shiyi.memory.text.how_often import says_how_often


@pytest.mark.parametrize(
    "text",
    [
        "We go once or twice a year.",
        "Three times a week; it keeps us on track.",
        "I see them at least once a week.",
        "we go a few times a week",
        "Three days a week, after work.",
        "I practise two hours a day.",
        "Tuesdays and Thursdays, with my brother.",
        "two or three times per month",
        "Every other Sunday we hike.",
        "I run every morning before work.",
        "We visit every two weeks.",
        "Every few months I get a haircut.",
        "I do yoga daily.",
        "We meet monthly at the library.",
        "On Sundays we have brunch with my parents.",
        "Most weekends I'm at the climbing gym.",
        "Once in a while we go out for sushi.",
        "I call her every now and then.",
        "From time to time I paint.",
        "I swim on a regular basis.",
        "我每周去两次健身房",
        "我们一周三次",
        "一个月一次就够了",
    ],
)
def test_a_turn_giving_a_rate(text: str) -> None:
    assert says_how_often(text)


@pytest.mark.parametrize(
    "text",
    [
        "Every time I see her I smile.",  # every occasion, not a rate
        "Each of them brought a gift.",
        "I went to the beach last week.",
        "It took a week to finish.",
        "I spent three days in Rome a week ago.",  # a stay, then a time
        "Yes, I went climbing for days a week ago.",
        "I love weekends.",
        "We met once at a party.",
        "I tried it twice.",
        "That was a long day.",
        "我昨天去了健身房",
    ],
)
def test_a_turn_that_does_not(text: str) -> None:
    assert not says_how_often(text)
