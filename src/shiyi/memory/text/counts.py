"""The numbers a statement names, however they are written: "2", "two", "twenty-one", "两只".

Two statements naming different numbers never say the same thing, however alike they embed:
"I have three cats now" after "I have two cats" was taken for a repeat of it (confirmed, no
copy made) and the three cats were lost, since only digits were compared.  Words and
Chinese numerals with a measure word count now too, as the value they name, so "2 cats" and
"two cats" still agree.
"""

from __future__ import annotations

import re

from shiyi.memory.text.chinese_numbers import NUMERAL, number
from shiyi.memory.text.short_cache import short_text_cache

_DIGITS = re.compile(r"\d+(?:[.,:]\d+)*")
_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "once": 1, "twice": 2, "dozen": 12, "hundred": 100, "thousand": 1000,
    "million": 1_000_000,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_WORDS = re.compile(
    rf"\b(?P<tens>{'|'.join(_TENS)})(?:[\s-](?P<unit>{'|'.join(list(_UNITS)[1:10])}))?\b"
    rf"|\b(?P<word>{'|'.join(_UNITS)})\b",
    re.IGNORECASE,
)
# A count in numerals before a measure word or unit: "两只猫", "三个孩子", "五岁", "七点".
_CHINESE = re.compile(
    rf"(?P<numeral>{NUMERAL})(?=[只个岁年月天次位本台辆条张件口套份点号元块斤]|公斤|公里|小时|分钟|周|星期)"
)


@short_text_cache
def numbers_in(text: str) -> tuple[str, ...]:
    """The numbers ``text`` names, in order, each as digits ("two cats" -> ("2",)).  Cached:
    a write compares the new value with every live fact of its slot, whose values repeat."""
    found: list[tuple[int, str]] = [(m.start(), m.group()) for m in _DIGITS.finditer(text)]
    for match in _WORDS.finditer(text):
        if tens := match.group("tens"):
            value = _TENS[tens.lower()] + (
                _UNITS[match.group("unit").lower()] if match.group("unit") else 0
            )
        else:
            value = _UNITS[match.group("word").lower()]
        found.append((match.start(), str(value)))
    for match in _CHINESE.finditer(text):
        counted = number(match.group("numeral"))
        if counted is not None:
            found.append((match.start(), f"{counted:g}"))
    return tuple(value for _, value in sorted(found))
