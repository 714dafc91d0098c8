"""Numbers as Chinese speakers write them in dates and spans: digits or numerals.

Shared by the question's time windows (:mod:`shiyi.memory.recall.chinese_time`) and the
dates a fact's wording is resolved to (:mod:`shiyi.memory.lifecycle.temporal`).
"""

from __future__ import annotations

_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
           "七": 7, "八": 8, "九": 9}  # fmt: skip
NUMERAL = "[一二两三四五六七八九十几半]{1,3}"
"""A count in numerals, as a regular expression: "三", "十二", "二十一", "两", "几", "半"."""


def number(text: str) -> float | None:
    """ "7", "七", "十二", "二十一", "两", "几" (a few: 3), "半" (0.5), "二〇二三"; None for
    anything else."""
    if text.isascii() and text.isdigit():
        return int(text)
    if text in ("半", "几"):
        return 0.5 if text == "半" else 3
    if "十" in text:
        tens, _, ones = text.partition("十")
        high = _DIGITS.get(tens) if tens else 1
        low = _DIGITS.get(ones) if ones else 0
        return None if high is None or low is None else high * 10 + low
    digits = [_DIGITS.get(char) for char in text]
    if not digits or any(d is None for d in digits):
        return None
    return int("".join(str(d) for d in digits))
