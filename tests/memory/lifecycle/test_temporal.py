"""A fact's relative dates resolved against when they were said: Chinese counts written in
numerals of more than one character (十二, 二十) and half units; English phrases people use
every day ("last night", "a fortnight ago")."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shiyi.memory.lifecycle.temporal import find_dates

SAID = datetime(2026, 11, 23, 12, tzinfo=UTC).timestamp()  # a Monday


@pytest.mark.parametrize(
    ("text", "phrase", "day"),
    [
        ("十二天前我搬家了", "十二天前", "2026-11-11"),  # was read as "二天前": two days
        ("二十天前换了工作", "二十天前", "2026-11-03"),  # was read as "十天前"
        ("半个月前开始学游泳", "半个月前", "2026-11-08"),
        ("两个星期前去了医院", "两个星期前", "2026-11-09"),
        ("3个月后要出国", "3个月后", "2027-02-21"),
    ],
)
def test_a_count_in_numerals_is_read_whole(text: str, phrase: str, day: str) -> None:
    assert [(d.phrase, d.day.isoformat()) for d in find_dates(text, SAID)] == [(phrase, day)]


@pytest.mark.parametrize("text", ["十一月前要交报告", "5月前搬家", "三月后再说"])
def test_a_month_named_before_or_after_is_no_span(text: str) -> None:
    # before November, before May, after March: not "eleven months ago"
    assert find_dates(text, SAID) == []


@pytest.mark.parametrize(
    ("text", "phrase", "day"),
    [
        ("I watched Dune last night", "last night", "2026-11-22"),
        ("We moved in a fortnight ago", "a fortnight ago", "2026-11-09"),
        ("My sister visits in a fortnight", "in a fortnight", "2026-12-07"),
    ],
)
def test_everyday_english_phrases_are_dated(text: str, phrase: str, day: str) -> None:
    assert [(d.phrase, d.day.isoformat()) for d in find_dates(text, SAID)] == [(phrase, day)]
