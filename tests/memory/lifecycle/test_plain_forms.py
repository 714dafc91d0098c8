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
        "I went to the vegan cafe",
        "I don't eat meat" + " ago" * 200 + " X",  # long: left as said, promptly
        "",
    ],
)
def test_anything_else_is_left_as_said(said: str) -> None:
    assert plain_form(said) == said
