"""Corrections and changes of mind, by their words alone; everyday phrasings written for
this test."""

from __future__ import annotations

import pytest

from shiyi.memory.text.corrections import corrected, plan, taking_back


@pytest.mark.parametrize(
    ("earlier", "correction", "believed"),
    [
        ("Yoga is on Thursdays at the community hall", "Oops, Fridays, not Thursdays",
         "Yoga is on Fridays at the community hall"),
        ("The parents' evening starts at 6:30pm", "sorry I meant 7:15pm",
         "The parents' evening starts at 7:15pm"),
        ("Our lease ends on the 28th", "Correction: it ends on the 30th",
         "Our lease ends on the 30th"),
        ("My car insurance is £420 a year", "make that £465",
         "My car insurance is £465 a year"),
        ("The wedding is in June", "No wait, it's in July", "The wedding is in July"),
        ("Lunch with Marco on Saturday", "Actually with Dario, not Marco",
         "Lunch with Dario on Saturday"),
        ("My daughter is 11", "Sorry, she's 12", "My daughter is 12"),
        ("We moved here in 2016", "My mistake, 2017", "We moved here in 2017"),
        ("The appointment is on the 3rd", "Not the 3rd, the 9th", "The appointment is on the 9th"),
    ],
)  # fmt: skip
def test_a_correction_puts_its_value_in_place_of_the_one_it_corrects(
    earlier: str, correction: str, believed: str
) -> None:
    taking = taking_back(correction)
    assert taking is not None and taking.how == "correction"
    assert corrected(taking.rest, earlier) == believed


@pytest.mark.parametrize(
    ("earlier", "said"),
    [
        ("I have 2 cats", "Actually I have 3 kids"),  # another thing counted
        ("I love sushi", "Actually I love ramen more"),  # a new preference, no value corrected
        ("The meeting is at 3pm", "Sorry I'm late"),  # an apology
        ("My son is 7 and my daughter is 9", "Sorry, he's 8"),  # two numbers: which one?
        ("The party is on Friday", "Actually it's on Friday, like I said"),  # the same value
    ],
)
def test_what_corrects_nothing_the_earlier_statement_holds_once(earlier: str, said: str) -> None:
    taking = taking_back(said)
    assert taking is None or not corrected(taking.rest, earlier)


@pytest.mark.parametrize(
    "said",
    ["Actually, I also have a brother", "Actually I have another dog too", "I meant to call you"],
)
def test_additions_and_ordinary_sentences_take_nothing_back(said: str) -> None:
    taking = taking_back(said)
    assert taking is None or not corrected(taking.rest, "I have a dog")


@pytest.mark.parametrize(
    "said",
    [
        "Changed my mind, I'm doing the half marathon instead",
        "Change of plans: we're driving to Cornwall",
        "We've changed our plans and are staying in a cottage",
        "On second thought, I'll take the job in Leeds",
        "Plans changed, the party's at Jo's now",
    ],
)
def test_a_change_of_mind_is_read(said: str) -> None:
    taking = taking_back(said)
    assert taking is not None and taking.how == "change of mind"


def test_plans_are_what_the_user_is_going_to_do() -> None:
    assert plan("I'm going to repaint the hallway next month")
    assert plan("We're planning a trip to Japan in April")
    assert plan("I'll sign up for the 10k in May")
    assert not plan("I repainted the hallway last month")
    assert not plan("My sister lives in Porto")
