"""When an English question asks about: dates and relative times as windows on event time.

The same reading for Chinese is :mod:`shiyi.memory.recall.chinese_time`; both feed
:func:`shiyi.memory.recall.query_signals.understand`.  Texts arrive lower-cased, on one line.

* **a day**: "May 3, 2023", "3 May 2023", "the 3rd of May, 2023", "2023-05-03", "5/7/2023"
  (both readings), a holiday with its year ("Christmas 2022", "New Year's Eve 2022"); the
  week of a date ("the week of May 8, 2023": Monday to Sunday);
* **a period**: "December 2022", "between May and July 2023", "in 2022", "early 2023",
  "summer 2022" (the year: which months a season is depends on the hemisphere), "in '22";
* **a month of any year**: "in June", "in late June", "mid-June", "the end of May",
  "on May 7th", "June 5", "from June 1 to June 10", "on 3rd August", "on 7/15" (both
  readings where both are dates), "between May and July", "the start / middle / end of the
  year"; a holiday without a year ("on Christmas", "over Memorial Day weekend");
* **counted back** from the date in the question, else from ``now``: "yesterday",
  "last night", "today", "tonight", "this morning", "the day before yesterday", "the other
  day", "last week/weekend/month/year", "the week before last", "the past few days", "this
  week", "this month" / "this year" (since the 1st), "last Saturday", "on Friday", "over
  the weekend", "two days / a fortnight / a month and a half / two Fridays / three weekends
  ago" (or "back"), "last August", "last summer" (north and south of the equator), "last
  Christmas", "the week before", "on the 5th" (the latest 5th, in a question about the
  past), "the 21st of last month", "the end of last year";
* **counted on** from a date in the question only: "two days after May 5, 2023".

Each relative window includes the anchor day, since what happened "last week" is usually
told on the day it is asked about.  Written from general usage, not from any data set.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

Window = tuple[datetime, datetime]

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
MONTH = (
    r"(january|february|march|april|may|june|july|august|september|october|november"
    r"|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_YEAR_AHEAD = r"(?![\w\s,]{0,200}\d{4})"
"""No year within 200 characters: an unbounded look ahead per month mention was quadratic in
the text ("in may in may ...", issue 29)."""
_DAY_FIRST = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH},?\s+(\d{{4}})\b")
_MONTH_FIRST = re.compile(rf"\b{MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b{MONTH},?\s+(\d{{4}})\b")
_PART = r"(?:(?:early|mid|late|the\s+(?:start|beginning|middle|end)\s+of)[\s-]+)"
_MONTH_ALONE = re.compile(
    rf"\b(?:(?:in|during|since|by|until|of|on)\s+{_PART}?|{_PART}){MONTH}(?!\w){_YEAR_AHEAD}"
)
"""A month without a year: "in June", "in late June", "mid-June", "the end of May"."""
_MONTH_RANGE_ALONE = re.compile(
    rf"\b(?:between|from)\s+{MONTH}\s+(?:and|to|until|till|through)\s+{MONTH}(?!\w){_YEAR_AHEAD}"
)
""""between May and July", "from November to February": every month from one to the other."""
_DAY_MONTH = re.compile(
    rf"\b(?:(?:on|the)\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th))\s+(?:of\s+)?"
    rf"{MONTH}(?!\w){_YEAR_AHEAD}"
)
"""A day and month without a year: "on 3rd August", "on 3 May" (the month of any year)."""
SEASON = "(?:spring|summer|autumn|fall|winter)"
_YEAR = re.compile(
    rf"\b(?:in|during|since|of|by|early|late|mid|around|{SEASON})[\s-]+((?:19|20)\d\d)\b"
)
_SHORT_YEAR = re.compile(r"\b(?:in|since|of|by|around|during)\s+['’](\d\d)\b")
""""in '22": 2022 (00-68 are this century, as ``strptime``'s %y reads them)."""
_ISO_DAY = re.compile(r"\b((?:19|20)\d\d)[-/](\d{1,2})[-/](\d{1,2})\b")
_SLASH_DAY = re.compile(r"\b(\d{1,2})/(\d{1,2})/((?:19|20)\d\d)\b")
"""5/7/2023: May 7 in the US, 5 July elsewhere; both are searched."""
_SLASH_DAY_ALONE = re.compile(r"\bon\s+(\d{1,2})/(\d{1,2})\b(?![/\d])")
""""on 7/15": after "on", a month and a day without a year (a score "7/10" has no "on")."""
_MONTH_DAY_ALONE = re.compile(
    rf"\b{MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?![/:.,]?\d){_YEAR_AHEAD}"
)
""""June 5", "from June 1 to June 10": a month and its day without a year."""
_NTH_DAY = re.compile(
    r"\bon\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b"
    r"(?!\s+(?!(?:at|when|while|in|and|or|but|before|after|with|did|was|were)\b)[a-z])"
)
""""on the 5th": the latest 5th; not "on the 5th floor", "on the 2nd try", "the 5th of May"."""
_NTH_OF_MONTH = re.compile(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\s+of\s+(this|last)\s+month\b")
_YEAR_PART = re.compile(
    r"\b(?:the\s+)?(start|beginning|middle|end)\s+of\s+(the|this|last)\s+year\b"
)
_YEAR_PART_MONTHS = {"start": (1, 2), "beginning": (1, 2), "middle": (6, 7), "end": (11, 12)}
"""The months "the start / middle / end of the year" mean: a month either way (a plan for
"the end of the year" is often made in November)."""
_WEEK_OF = re.compile(r"\bweek\s+of\s+(?:the\s+)?$")
_MONTH_RANGE = re.compile(
    rf"\b(?:between|from)\s+{MONTH}\s+(?:and|to|until|till|through)\s+{MONTH},?\s+(\d{{4}})\b"
)

# English names, not ``calendar.day_name`` (it follows the process's locale)
WEEKDAYS = {
    name: i
    for names in (
        "monday tuesday wednesday thursday friday saturday sunday",
        "mon tue wed thu fri sat sun",
    )
    for i, name in enumerate(names.split())
}
WEEKDAYS |= {"tues": 1, "thur": 3, "thurs": 3}  # "last Fri", "on Tues": as people type
_WEEKDAY = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
SPANS = {"day": 1, "night": 1, "week": 7, "fortnight": 14, "weekend": 3, "month": 31}
SPANS |= {"year": 366, "decade": 3653} | {name: 7 for name in WEEKDAYS}
"""Days per unit ("a month": 31); a weekday recurs weekly."""
_UNIT = rf"(day|night|week|fortnight|weekend|month|year|decade|{_WEEKDAY})"
_COUNT = (
    r"(a\s+couple\s+of|couple\s+of|a\s+few|few|several|half\s+an?|an?|one|two|three|four"
    r"|five|six|seven|eight|nine|ten|eleven|twelve|\d+)"
)
_COUNTS: dict[str, float] = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
}
_COUNTS |= {"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_COUNTS |= {"a couple of": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3}
_COUNTS |= {"half a": 0.5, "half an": 0.5}

_DAY_WORD = re.compile(
    r"\b(?:(the\s+day\s+before\s+yesterday)|(yesterday|last\s+night)"
    r"|(today|tonight|this\s+(?:morning|afternoon|evening))|(the\s+other\s+day))\b"
)
_DAYS_BACK = (2, 1, 0, 10)
"""Per group of :data:`_DAY_WORD`: how many days back its window starts ("the other day":
some days ago, within a week or so)."""
_BEFORE = re.compile(
    rf"\b(?:the\s+)?{_COUNT}?\s*(day|week|weekend|month|year|{_WEEKDAY})s?\s+before\b"
    r"(?!\s+(?:last|yesterday)\b)"
)
"""Counted back from a date: "the week before August 3, 2023"."""
_BEFORE_LAST = re.compile(rf"\b(?:the\s+)?(week|weekend|month|year|{_WEEKDAY})\s+before\s+last\b")
_LAST = re.compile(r"\b(?:last|past|previous)\s+(week|weekend|month|year)\b")
_LAST_FEW = re.compile(rf"\b(?:last|past|previous)\s+{_COUNT}\s+(day|night|week|month|year)s\b")
""""the past few days", "the last two weeks": up to now."""
_LAST_WEEKDAY = re.compile(rf"\b(last|past|previous|this|on)\s+({_WEEKDAY})\b")
_WEEKEND = re.compile(r"\b(?:(?:over|on|at|during)\s+the|this(?:\s+past)?)\s+weekend\b")
_THIS = re.compile(r"\bthis\s+(week|month|year)\b")
_AGO = re.compile(rf"\b{_COUNT}\s+{_UNIT}s?(\s+and\s+a\s+half)?\s+(?:ago|back)\b")
_AFTER = re.compile(
    rf"\b(?:the\s+)?{_COUNT}?\s*(day|week|weekend|month|year|{_WEEKDAY})s?\s+after\b"
)
_LAST_MONTH_NAMED = re.compile(rf"\b(last|this)\s+{MONTH}(?!\w)")
_LAST_SEASON = re.compile(rf"\b(last|this)\s+({SEASON})\b")
_SEASONS = {"spring": (3, 9), "summer": (6, 12), "autumn": (9, 3), "fall": (9, 3)}
_SEASONS["winter"] = (12, 6)
"""The month each season starts in, north and south of the equator: "last summer" is
searched in both readings (as 5/7/2023 is), since the asker's hemisphere is not known, and
a season alone ("in the summer") names no months (half the year in one reading or the
other)."""
_PAST = re.compile(r"\b(?:did|was|were|had|happened|went|got|made|said|told)\b|[a-z]ed\b|'d\b")
"""A bare weekday is one gone by only in a question about the past: "What did Ana do on
Friday?", not "What is Ana doing on Friday?" (a plan, which memory cannot hold yet)."""

_HOLIDAY = re.compile(
    r"\b(christmas\s+eve|christmas|xmas|boxing\s+day|new\s+year['’]?s['’]?\s+eve|nye"
    r"|new\s+year['’]?s['’]?(?:\s+day)?|valentine['’]?s['’]?(?:\s+day)?|halloween"
    r"|thanksgiving|easter|memorial\s+day|labor\s+day|(?:the\s+)?(?:fourth|4th)\s+of\s+july"
    r"|(?:(?:st\.?|saint)\s+)?(?:patrick|paddy)['’]?s['’]?\s+day|father['’]?s['’]?\s+day)\b"
)
_HOLIDAY_YEAR = re.compile(rf"{_HOLIDAY.pattern}(?:\s+(?:of\s+)?((?:19|20)\d\d)\b)?")
_LAST_HOLIDAY = re.compile(rf"\b(last|this)\s+{_HOLIDAY.pattern}")


def _month(text: str) -> int:
    return _MONTHS[text.lower().rstrip(".")]


def _day_window(year: int, month: int, day: int) -> Window | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # "31 February": not a date, so no window
        return None
    return start, start + timedelta(days=1)


def _month_window(year: int, month: int) -> Window:
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return datetime(year, month, 1, tzinfo=UTC), end


def _easter(year: int) -> datetime:
    """Western Easter Sunday (the anonymous Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l_ = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * l_) // 451
    month, day = divmod(h + l_ - 7 * m + 114, 31)
    return datetime(year, month, day + 1, tzinfo=UTC)


def _nth_weekday(year: int, month: int, weekday: int, nth: int) -> datetime:
    """The ``nth`` ``weekday`` of ``month`` (Monday 0); ``nth`` -1: the last."""
    if nth < 0:
        last = datetime(year, month, calendar.monthrange(year, month)[1], tzinfo=UTC)
        return last - timedelta(days=(last.weekday() - weekday) % 7)
    first = datetime(year, month, 1, tzinfo=UTC)
    return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))


_MOVING = {"thanksgiving": (11, 3, 4), "memorial": (5, 0, -1), "labor": (9, 0, 1)}
_MOVING["father"] = (6, 6, 3)
"""Holidays on a weekday of a month (the United States' dates; Father's Day is also the
United Kingdom's): month, weekday, which one (-1 the last)."""


def _holiday(name: str, year: int) -> datetime:
    """The day of holiday ``name`` (a :data:`_HOLIDAY` match) in ``year``."""
    name = " ".join(name.split()).removeprefix("the ")
    if name == "easter":
        return _easter(year)
    moving = next((v for k, v in _MOVING.items() if name.startswith(k)), None)
    if moving is not None:
        return _nth_weekday(year, *moving)
    if "eve" in name or name == "nye":
        return datetime(year, 12, 24 if name.startswith("christmas") else 31, tzinfo=UTC)
    fixed = {"boxing": (12, 26), "new": (1, 1), "valentine": (2, 14), "halloween": (10, 31)}
    fixed |= {"fourth": (7, 4), "4th": (7, 4)}
    if "patrick" in name or "paddy" in name:
        return datetime(year, 3, 17, tzinfo=UTC)
    month, day = next((v for k, v in fixed.items() if name.startswith(k)), (12, 25))
    return datetime(year, month, day, tzinfo=UTC)


def _holiday_month(name: str) -> set[int]:
    """The months a holiday without its year falls in (Easter moves over two)."""
    if name == "easter":
        return {3, 4}
    return {_holiday(name, 2001).month}


def _in_its_week(text: str, match: re.Match[str], day: Window | None) -> Window | None:
    """The week (Monday on) of a date asked about as "the week of May 8, 2023"."""
    if day is None or not _WEEK_OF.search(text, max(0, match.start() - 12), match.start()):
        return day
    monday = day[0] - timedelta(days=day[0].weekday())
    return monday, monday + timedelta(days=7)


def explicit_days(text: str) -> list[Window]:
    """One-day windows for the full dates and the holidays with their year in ``text``; a
    week's for a date after "the week of"."""
    days = [
        _in_its_week(text, m, _day_window(int(m[3]), _month(m[2]), int(m[1])))
        for m in _DAY_FIRST.finditer(text)
    ]
    days += [
        _in_its_week(text, m, _day_window(int(m[3]), _month(m[1]), int(m[2])))
        for m in _MONTH_FIRST.finditer(text)
    ]
    days += [
        _in_its_week(text, m, _day_window(int(m[1]), int(m[2]), int(m[3])))
        for m in _ISO_DAY.finditer(text)
    ]
    for m in _SLASH_DAY.finditer(text):
        first, second, year = int(m[1]), int(m[2]), int(m[3])
        days += [_day_window(year, first, second)]
        days += [_day_window(year, second, first)] if first != second else []
    for m in _HOLIDAY_YEAR.finditer(text):
        if m[2]:
            day = _holiday(m[1], int(m[2]))
            days.append((day, day + timedelta(days=1)))
    return [d for d in days if d is not None]


def explicit_periods(text: str) -> list[Window]:
    """Whole months and years named with their year."""
    periods = []
    for match in _MONTH_RANGE.finditer(text):
        year, first, last = int(match[3]), _month(match[1]), _month(match[2])
        if first <= last:
            periods.append((_month_window(year, first)[0], _month_window(year, last)[1]))
    for match in _MONTH_YEAR.finditer(text):
        periods.append(_month_window(int(match[2]), _month(match[1])))
    years = [int(m[1]) for m in _YEAR.finditer(text)]
    years += [int(m[1]) + (2000 if int(m[1]) < 69 else 1900) for m in _SHORT_YEAR.finditer(text)]
    for year in years:
        periods.append((datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)))
    return periods


def months(text: str) -> set[int]:
    """Months of any year: a month or a holiday named without a year."""
    found = {_month(m[1]) for m in _MONTH_ALONE.finditer(text)}
    found |= {_month(m[1]) for m in _DAY_MONTH.finditer(text)}
    found |= {_month(m[1]) for m in _MONTH_DAY_ALONE.finditer(text) if 1 <= int(m[2]) <= 31}
    for match in _SLASH_DAY_ALONE.finditer(text):
        first, second = int(match[1]), int(match[2])
        found |= {m for m, d in ((first, second), (second, first)) if m <= 12 and 1 <= d <= 31}
    for match in _YEAR_PART.finditer(text):
        if match[2] == "the":
            found |= set(_YEAR_PART_MONTHS[match[1]])
    for match in _MONTH_RANGE_ALONE.finditer(text):
        first, last = _month(match[1]), _month(match[2])
        found |= {(first - 1 + i) % 12 + 1 for i in range((last - first) % 12 + 1)}
    for match in _HOLIDAY_YEAR.finditer(text):
        if not match[2]:
            found |= _holiday_month(match[1])
    return found


_RELATIVE = re.compile(
    "|".join(
        p.pattern
        for p in (
            _DAY_WORD, _BEFORE, _BEFORE_LAST, _LAST, _LAST_FEW, _LAST_WEEKDAY, _WEEKEND, _THIS,
            _AGO, _LAST_MONTH_NAMED, _LAST_SEASON, _LAST_HOLIDAY, _NTH_DAY, _NTH_OF_MONTH,
            _YEAR_PART,
        )
    )
)  # fmt: skip


def has_relative(text: str) -> bool:
    """Whether ``text`` counts time back from a moment (so ``now`` is worth asking for)."""
    return _RELATIVE.search(text) is not None


_EARLIER = re.compile(r"\bearlier\s+(?=today\b|tonight\b|this\b)")


def without_relative(text: str) -> str:
    """``text`` with its relative times blanked: "the week before last" and "earlier this
    month" ask about a time, not about what was before (the history reading)."""
    return _RELATIVE.sub(" ", _EARLIER.sub(" ", text))


def _count(word: str | None) -> float:
    if not word:
        return 1
    return int(word) if word.isdigit() else _COUNTS.get(" ".join(word.split()), 1)


def _latest(anchor: datetime, weekday: int) -> datetime:
    """The latest ``weekday`` on or before ``anchor``'s day."""
    day = anchor.replace(hour=0, minute=0, second=0, microsecond=0)
    return day - timedelta(days=(day.weekday() - weekday) % 7)


def previous_weekday(anchor: datetime, name: str) -> datetime:
    """The latest ``name`` (a weekday) before ``anchor``'s day: "last Saturday"."""
    back = (anchor.weekday() - WEEKDAYS[name]) % 7 or 7
    return anchor - timedelta(days=back)


def _latest_start(anchor: datetime, month: int, length: int) -> datetime:
    """The start of the latest period of ``length`` months from ``month`` that ended by
    ``anchor``: "last August", "last summer"."""
    start = datetime(anchor.year, month, 1, tzinfo=UTC)
    while _span_from(start, length)[1] > anchor:
        start = start.replace(year=start.year - 1)
    return start


def _this_start(anchor: datetime, month: int, length: int) -> datetime | None:
    """The start of this year's period ("this summer"; this winter began last December in
    January), or None while it is still ahead."""
    wraps = month + length > 13 and anchor.month < month + length - 12
    start = datetime(anchor.year - (1 if wraps else 0), month, 1, tzinfo=UTC)
    return start if start <= anchor else None


def _span_from(start: datetime, months_long: int) -> Window:
    end_month = start.month + months_long
    end = datetime(start.year + (end_month - 1) // 12, (end_month - 1) % 12 + 1, 1, tzinfo=UTC)
    return start, end


def relative(text: str, anchor: datetime) -> list[Window]:
    """Windows counted back from ``anchor``."""
    end = anchor + timedelta(days=1)
    found = _year_parts(text, anchor) + _days_of_month(text, anchor)
    # "the end of last year" is the year's last months, not the whole year ("last year")
    text = _NTH_OF_MONTH.sub(" ", _YEAR_PART.sub(" ", text))
    for match in _DAY_WORD.finditer(text):
        back = next(days for days, group in zip(_DAYS_BACK, match.groups(), strict=True) if group)
        found.append((anchor - timedelta(days=back), end))
    for match in _BEFORE.finditer(text):
        found.append((anchor - timedelta(days=_count(match[1]) * SPANS[match[2]]), end))
    for match in _BEFORE_LAST.finditer(text):
        if match[1] in WEEKDAYS:
            found.append((previous_weekday(anchor, match[1]) - timedelta(days=7), end))
        else:
            found.append((anchor - timedelta(days=3 * SPANS[match[1]]), end))
    for match in _LAST.finditer(text):
        found.append((anchor - timedelta(days=2 * SPANS[match[1]]), end))
    for match in _LAST_FEW.finditer(text):
        found.append((anchor - timedelta(days=_count(match[1]) * SPANS[match[2]] + 1), end))
    found += _weekdays(text, anchor, end)
    for _ in _WEEKEND.finditer(text):
        found.append((_latest(anchor, 5), end))
    for match in _THIS.finditer(text):
        if match[1] == "week":
            found.append((anchor - timedelta(days=7), end))
        else:
            start = anchor.replace(day=1) if match[1] == "month" else anchor.replace(month=1, day=1)
            found.append((start.replace(hour=0, minute=0, second=0, microsecond=0), end))
    found += [_ago(match, anchor) for match in _AGO.finditer(text)]
    found += _named_periods(text, anchor)
    return found


def _year_parts(text: str, anchor: datetime) -> list[Window]:
    """ "the end of last year", "the start of this year": those months of that year."""
    found = []
    for match in _YEAR_PART.finditer(text):
        if match[2] != "the":
            year = anchor.year - (match[2] == "last")
            first, last = _YEAR_PART_MONTHS[match[1]]
            found.append((_month_window(year, first)[0], _month_window(year, last)[1]))
    return found


def _days_of_month(text: str, anchor: datetime) -> list[Window]:
    """ "on the 5th" in a question about the past: the latest 5th by ``anchor``; "the 21st
    of last month"."""
    found = []
    if _PAST.search(text) is not None:
        for match in _NTH_DAY.finditer(text):
            found += _latest_day_of_month(anchor, int(match[1]))
    for match in _NTH_OF_MONTH.finditer(text):
        month = anchor.replace(day=1)
        if match[2] == "last":
            month = (month - timedelta(days=1)).replace(day=1)
        day = _day_window(month.year, month.month, int(match[1]))
        found += [day] if day is not None else []
    return found


def _latest_day_of_month(anchor: datetime, day: int) -> list[Window]:
    """The latest day numbered ``day`` on or before ``anchor``'s (a month without it, as
    February has no 30th, is passed over); none for a day no month has."""
    if not 1 <= day <= 31:
        return []
    month = anchor.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    for _ in range(3):
        window = _day_window(month.year, month.month, day)
        if window is not None and window[0] <= anchor:
            return [window]
        month = (month - timedelta(days=1)).replace(day=1)
    return []


def _weekdays(text: str, anchor: datetime, end: datetime) -> list[Window]:
    """ "last Saturday"; "on Friday" and "this Friday" in a question about the past."""
    found = []
    past = _PAST.search(text) is not None
    for match in _LAST_WEEKDAY.finditer(text):
        if match[1] in ("last", "past", "previous"):
            found.append((previous_weekday(anchor, match[2]), end))
        elif past:
            found.append((_latest(anchor, WEEKDAYS[match[2]]), end))
    return found


def _ago(match: re.Match[str], anchor: datetime) -> Window:
    """ "two weeks ago": give or take a week; "two Fridays ago", "two weekends ago": that day."""
    count = _count(match[1]) + (0.5 if match[3] else 0)
    unit = match[2]
    if unit in WEEKDAYS or unit == "weekend":
        day = _latest(anchor - timedelta(days=1), WEEKDAYS.get(unit, 5))
        day -= timedelta(days=7 * (max(count, 1) - 1))
        return day, day + timedelta(days=2 if unit == "weekend" else 1)
    back = timedelta(days=count * SPANS[unit])
    slack = timedelta(days=min(count, 1) * SPANS[unit])
    return anchor - back - slack, anchor - back + slack


def _named_periods(text: str, anchor: datetime) -> list[Window]:
    """ "last August", "this summer", "last Christmas": the latest one by ``anchor``."""
    found = []
    named = [(m[1], _month(m[2]), 1) for m in _LAST_MONTH_NAMED.finditer(text)]
    named += [(m[1], start, 3) for m in _LAST_SEASON.finditer(text) for start in _SEASONS[m[2]]]
    for which, month, length in named:
        start = (
            _latest_start(anchor, month, length)
            if which == "last"
            else _this_start(anchor, month, length)
        )
        if start is not None:
            found.append(_span_from(start, length))
    for match in _LAST_HOLIDAY.finditer(text):
        day = _holiday(match[2], anchor.year)
        if day > anchor:
            day = _holiday(match[2], anchor.year - 1)
        found.append((day, day + timedelta(days=1)))
    return found


def after(text: str, anchor: datetime) -> list[Window]:
    """Windows counted on from an explicit day: "two days after May 5, 2023", "the week
    after"; from the day itself, which is often when the plan was told."""
    return [
        (anchor, anchor + timedelta(days=_count(match[1]) * SPANS[match[2]] + 1))
        for match in _AFTER.finditer(text)
    ]
