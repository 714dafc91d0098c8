"""A statement about someone else is read as they would say it, with whom it is about.

Everyday phrasings written for this test (not from any dev set).
"""

from __future__ import annotations

import pytest

from shiyi.memory.text.first_person import said_by


@pytest.mark.parametrize(
    ("text", "who", "said"),
    [
        ("I sold my car.", "", "I sold my car."),
        ("We moved to Porto.", "", "We moved to Porto."),
        ("My car is a Honda Civic.", "", "My car is a Honda Civic."),  # not a person
        ("Sam and I broke up.", "", "Sam and I broke up."),
        ("My brother plays rugby.", "brother", "I play rugby."),
        ("My brother still plays rugby.", "brother", "I still play rugby."),
        ("My sister has a car.", "sister", "I have a car."),
        ("My mum is a member of the book club.", "mum", "I am a member of the book club."),
        ("My son goes to St Mary's.", "son", "I go to St Mary's."),
        ("My dad watches football.", "dad", "I watch football."),
        ("My aunt studies law.", "aunt", "I study law."),
        ("Ana cancelled her Spotify subscription.", "ana", "I cancelled my Spotify subscription."),
        ("My uncle sold his boat last summer.", "uncle", "I sold my boat last summer."),
        ("My sister and Tom broke up.", "sister", "Tom and I broke up."),
        ("My older brother quit his job.", "older brother", "I quit my job."),
    ],
)
def test_a_statement_is_read_as_its_subject_would_say_it(text: str, who: str, said: str) -> None:
    assert said_by(text) == (who, said)


@pytest.mark.parametrize(
    "text", ["It broke down.", "The club closed.", "He sold it.", "What did Ana sell?", ""]
)
def test_no_plain_subject_is_no_ones(text: str) -> None:
    assert said_by(text) is None
