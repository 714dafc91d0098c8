"""Roundabout statements are read as the plain statement they amount to, and only whole
sentences of those forms are.

Everyday phrasings written for this test (not from any dev set, and apart from the
statements bench's pairs).
"""

from __future__ import annotations

import pytest

from shiyi.memory.lifecycle.plain_forms import plain_form


@pytest.mark.parametrize(
    ("said", "plain"),
    [
        ("I went vegan", "I'm vegan"),
        ("I've become vegetarian recently", "I'm vegetarian"),
        ("I turned pescatarian last year", "I'm pescatarian"),
        ("I don't eat meat", "I'm vegetarian"),
        ("I no longer eat meat at all", "I'm vegetarian"),
        ("I stopped eating meat a couple of years ago", "I'm vegetarian"),
        ("I've given up meat", "I'm vegetarian"),
        ("I eat meat", "I'm an omnivore"),
        ("I started eating meat again", "I'm an omnivore"),
        ("I'm eating meat again these days", "I'm an omnivore"),
        ("I switched banks to Monzo", "my bank is Monzo"),
        ("I've just changed dentists to Dr Ferreira", "my dentist is Dr Ferreira"),
        ("I switched pharmacies to Boots", "my pharmacy is Boots"),
        ("I changed churches to St Anne's", "my church is St Anne's"),
        ("Dune has replaced Alien as my favourite film", "my favourite film is Dune"),
        ("I was promoted to head chef in June", "I work as a head chef"),
        ("I got promoted to head of science", "I work as a head of science"),
        ("Our landlord pushed the rent up to $2,300 from next month", "my rent is $2,300"),
        ("I've cut my hours down to 25 hours a week", "my hours is 25 hours a week"),
        ("I now report to Dana Whitfield", "my manager is Dana Whitfield"),
    ],
)
def test_a_roundabout_statement_reads_as_the_plain_one(said: str, plain: str) -> None:
    assert plain_form(said) == plain


@pytest.mark.parametrize(
    "said",
    [
        "I don't eat meat on Fridays",  # more than a diet
        "I stopped eating meat because of the price",
        "I eat meat and fish",
        "My sister went vegan",  # someone else
        "I switched jobs to become a teacher",  # no name switched to
        "I switched banks because of the fees",
        "I changed my mind",
        "They put the price up to $5",  # not the user's
        "I put the kettle on",
        "I report to the front desk",
        "I went to the vegan cafe",
        "I don't eat meat" + " ago" * 200 + " X",  # long: left as said, promptly
        "",
    ],
)
def test_anything_else_is_left_as_said(said: str) -> None:
    assert plain_form(said) == said
