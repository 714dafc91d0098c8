"""The numbers a statement names, in digits, words or Chinese numerals: two statements with
different numbers never repeat each other ("two cats" / "three cats"), while "2" and "two"
agree.  Phrasings written for this test."""

from __future__ import annotations

import pytest

from shiyi.memory.lifecycle.observations import alike
from shiyi.memory.text.counts import numbers_in

NUMBERS = {
    "I have two cats": ["2"],
    "I have 2 cats": ["2"],
    "She turned twenty-one in May": ["21"],
    "I'm forty two": ["42"],
    "I swim twice a week": ["2"],
    "a dozen eggs and 3 apples": ["12", "3"],
    "85kg, down from 90": ["85", "90"],
    "我有两只猫": ["2"],
    "我儿子十二岁": ["12"],
    "Someone said nothing": [],  # "one" inside a word is no number
}


@pytest.mark.parametrize(("text", "numbers"), NUMBERS.items())
def test_numbers_are_read_in_digits_words_and_numerals(text: str, numbers: list[str]) -> None:
    assert list(numbers_in(text)) == numbers


def test_statements_with_other_numbers_never_repeat_each_other() -> None:
    assert not alike("I have two cats", "I have three cats now")
    assert not alike("我有两只猫", "我有三只猫")
    assert alike("I have 2 cats", "I have two cats")
