"""Statements naming other values of a closed set, or other names, never say the same thing;
a statement that says its value changed, and is otherwise the earlier sentence, replaces it.

Everyday phrasings written for this test (not from any dev set).
"""

from __future__ import annotations

import pytest

from shiyi.memory.text.contrasts import contrasted, frame, named_values, replaces_value


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I go running on Mondays", "I go running on Tuesdays"),
        ("Our anniversary is in March", "Our anniversary is in May"),
        ("My class is in the morning", "My class is in the evening"),
        ("I play on weekends", "I play on weekdays"),
        ("I sleep on the left side", "I sleep on the right side"),
        ("We meet for lunch", "We meet for dinner"),
        ("My favourite season is summer", "My favourite season is winter"),
        ("I run on Mondays", "I run on Mondays and Thursdays"),  # another schedule
        ("I work with Tom", "I work with Tim"),
        ("My sister Ana lives in Porto", "My sister Ana lives in Lisbon"),
    ],
)
def test_other_values_or_other_names_contrast(a: str, b: str) -> None:
    assert contrasted(a, b) and contrasted(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I live in Berlin", "I live in Berlin, Germany"),  # a detail added, nothing changed
        ("I still go running on Mondays", "I go running every Monday"),
        ("My favourite colour is green", "My favorite color is green"),
        ("You're right, I left Berlin", "I left Berlin"),  # "right" and "left": no sides
        ("I may go to Rome", "I might go to Rome"),  # "may": no month in small letters
        ("I like hiking", "I love hiking"),  # no value of a closed set: embeddings decide
    ],
)
def test_the_same_values_or_no_values_do_not_contrast(a: str, b: str) -> None:
    assert not contrasted(a, b) and not contrasted(b, a)


def test_values_are_read_in_small_letters_and_plurals() -> None:
    assert named_values("Lunch on MONDAYS, dinner in May") == {
        "weekday": frozenset({"monday"}),
        "meal": frozenset({"lunch", "dinner"}),
        "month": frozenset({"may"}),
    }


def test_the_frame_puts_each_value_as_its_set_and_drops_when_words() -> None:
    assert frame("I usually go running on Tuesdays now") == (
        "i", "usually", "go", "running", "<weekday>",
    )  # fmt: skip
    assert frame("I wake up at 6am") == frame("I wake up at 7 o'clock these days")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I usually go running on Mondays.", "I usually go running on Tuesdays now."),
        ("I wake up at 6am.", "I wake up at 7 now."),
        ("The standup is at 9:30.", "The standup is at 10:00 from now on."),
        ("I take 2 sugars in my tea.", "I take one sugar in my tea instead."),
        ("We have dinner at 8.", "We have lunch at 8 nowadays."),
    ],
)
def test_a_changed_value_replaces_the_same_sentence(old: str, new: str) -> None:
    assert replaces_value(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I have a meeting on Monday.", "I have a meeting on Tuesday."),  # not said to change
        ("I went running on Monday.", "I went running on Tuesday."),
        ("I usually go running on Mondays.", "I go swimming on Tuesdays now."),  # other frame
        ("I usually go running on Mondays.", "I usually go running on Mondays now."),  # same
        ("I'm learning Spanish.", "I'm learning Japanese now."),  # no closed set
        ("at 7", "at 8 now"),  # too little of a sentence to call it the same one
    ],
)
def test_anything_else_replaces_nothing(old: str, new: str) -> None:
    assert not replaces_value(new, old)
