"""Relative dates ("last Saturday", "3 days ago", "上周六", "昨天") resolved against the
timestamp of the message that said them, never against the wall clock: an imported message
from 2023 that says "yesterday" means a day in 2023."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from shiyi.memory.text.chinese_numbers import NUMERAL, number

_WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6, "mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6,
}  # fmt: skip
_CJK_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3,
}  # fmt: skip
_UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}
_CJK_UNIT_DAYS = {
    "天": 1,
    "日": 1,
    "周": 7,
    "星期": 7,
    "个星期": 7,
    "个月": 30,
    "月": 30,
    "年": 365,
}

_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_SIMPLE = re.compile(
    r"\b(today|tonight|this morning|this afternoon|this evening|yesterday|last night|"
    r"tomorrow|"
    r"the day before yesterday|the day after tomorrow)\b",
    re.IGNORECASE,
)
_SIMPLE_OFFSETS = {
    "today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
    "yesterday": -1, "last night": -1, "tomorrow": 1, "the day before yesterday": -2,
    "the day after tomorrow": 2,
}  # fmt: skip
_WEEKDAY_PHRASE = re.compile(
    r"\b(last|this|next|on)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.IGNORECASE,
)
_AGO = re.compile(
    r"\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)\s+"
    r"(day|week|fortnight|month|year)s?\s+ago\b",
    re.IGNORECASE,
)
_IN = re.compile(
    r"\bin\s+(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)\s+"
    r"(day|week|fortnight|month|year)s?\b",
    re.IGNORECASE,
)
_LAST_UNIT = re.compile(r"\b(last|next)\s+(week|month|year)\b", re.IGNORECASE)
_CJK_SIMPLE = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "今天": 0, "今晚": 0,
               "明天": 1, "后天": 2, "大后天": 3}  # fmt: skip
_CJK_WEEKDAY = re.compile(r"(上上|上|这|本|下下|下)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])")
# (?<!\d): from inside a run of digits it would rescan the run.  Months only as "个月":
# "五月前" / "十一月后" are before May and after November.
_CJK_AGO = re.compile(
    rf"((?<!\d)\d+|{NUMERAL})\s*(个星期|个月|星期|天|日|周|年)(前|以前|之前|后|以后|之后)"
)
_CJK_LAST_UNIT = re.compile(r"(上|下)(?:个)?(周|星期|月)(?![一二三四五六日天])|(去年|明年|今年)")


@dataclass(slots=True, frozen=True)
class ResolvedDate:
    phrase: str
    day: date
    start: int
    end: int


def _day(ts: float) -> date:
    return datetime.fromtimestamp(ts, UTC).date()


def _count(word: str) -> float:
    word = word.lower()
    if word.isdigit():
        return int(word)
    return _NUMBERS.get(word) or number(word) or 1


def _weekday(anchor: date, target: int, relation: str) -> date:
    """``last Saturday``: the most recent one before today; ``next``: the first after this
    week's; ``this``/``on``: the one in the current week (Monday-based)."""
    relation = relation.lower()
    if relation in ("last", "上"):
        back = (anchor.weekday() - target) % 7 or 7
        return anchor - timedelta(days=back)
    if relation == "上上":
        return _weekday(anchor, target, "last") - timedelta(days=7)
    monday = anchor - timedelta(days=anchor.weekday())
    this_week = monday + timedelta(days=target)
    if relation in ("next", "下"):
        return this_week + timedelta(days=7)
    if relation == "下下":
        return this_week + timedelta(days=14)
    if relation == "on":
        # "on Saturday" said on a Monday: most likely the one just past.
        return _weekday(anchor, target, "last") if this_week > anchor else this_week
    return this_week


def find_dates(text: str, ts: float) -> list[ResolvedDate]:
    """Every date phrase in ``text`` with the calendar day it means at time ``ts`` (UTC)."""
    anchor = _day(ts)
    found: list[ResolvedDate] = []
    covered: set[int] = set()
    """Positions inside a found phrase: a set, as scanning ``found`` per match is quadratic."""

    def add(match: re.Match[str], day: date) -> None:
        found.append(ResolvedDate(match.group(0), day, match.start(), match.end()))
        covered.update(range(match.start(), match.end()))

    for m in _ISO.finditer(text):
        try:
            add(m, date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
        except ValueError:
            continue
    for m in _SIMPLE.finditer(text):
        add(m, anchor + timedelta(days=_SIMPLE_OFFSETS[" ".join(m.group(1).lower().split())]))
    for m in _WEEKDAY_PHRASE.finditer(text):
        add(m, _weekday(anchor, _WEEKDAYS[m.group(2).lower()], m.group(1)))
    for m in _AGO.finditer(text):
        add(m, anchor - timedelta(days=_count(m.group(1)) * _UNIT_DAYS[m.group(2).lower()]))
    for m in _IN.finditer(text):
        add(m, anchor + timedelta(days=_count(m.group(1)) * _UNIT_DAYS[m.group(2).lower()]))
    for m in _LAST_UNIT.finditer(text):
        sign = -1 if m.group(1).lower() == "last" else 1
        add(m, anchor + timedelta(days=sign * _UNIT_DAYS[m.group(2).lower()]))
    for phrase, offset in _CJK_SIMPLE.items():
        for m in re.finditer(phrase, text):
            if m.start() not in covered:
                add(m, anchor + timedelta(days=offset))
    for m in _CJK_WEEKDAY.finditer(text):
        add(m, _weekday(anchor, _CJK_WEEKDAYS[m.group(2)], m.group(1) or "这"))
    for m in _CJK_AGO.finditer(text):
        days = _count(m.group(1)) * _CJK_UNIT_DAYS[m.group(2)]
        add(m, anchor + timedelta(days=days if m.group(3) in ("后", "以后", "之后") else -days))
    for m in _CJK_LAST_UNIT.finditer(text):
        if m.group(3):
            shift = {"去年": -365, "明年": 365, "今年": 0}[m.group(3)]
        else:
            shift = (-1 if m.group(1) == "上" else 1) * _CJK_UNIT_DAYS[m.group(2)]
        add(m, anchor + timedelta(days=shift))
    return sorted(_without_overlaps(found), key=lambda f: f.start)


def _without_overlaps(found: list[ResolvedDate]) -> list[ResolvedDate]:
    # Longest phrase first: "the day before yesterday" beats "yesterday" inside it.
    kept: list[ResolvedDate] = []
    for item in sorted(found, key=lambda f: f.start - f.end):
        if all(item.end <= k.start or item.start >= k.end for k in kept):
            kept.append(item)
    return kept


def resolve_relative(text: str, ts: float) -> tuple[str, date | None]:
    """``text`` with each relative phrase followed by its date, and the first date found.

    "went hiking last Saturday" said on Monday 2026-11-23 becomes
    "went hiking last Saturday (2026-11-21)"; absolute dates are kept as they are.
    """
    dates = find_dates(text, ts)
    if not dates:
        return text, None
    out, cursor = [], 0
    for item in dates:
        out.append(text[cursor : item.end])
        if not _ISO.fullmatch(item.phrase):
            out.append(f" ({item.day.isoformat()})")
        cursor = item.end
    out.append(text[cursor:])
    return "".join(out), dates[0].day


def day_start(day: date) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
