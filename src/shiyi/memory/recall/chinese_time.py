"""When a Chinese question asks about: dates and relative times as windows on event time.

The English reading lives in :mod:`shiyi.memory.recall.query_signals`; this is the same reading
for the ways people write time in Chinese, with the same window rules, so "我上周去了哪儿？"
is placed in time as "Where did I go last week?" is:

* **a day**: "2023年5月7日", "2023年5月7号", "二〇二三年五月七日";
* **a period**: "2023年5月" (the month), "2023年" / "2023年夏天" (the year);
* **a month of any year**: "五月", "5月份", "5月7号" (no year); a holiday ("国庆", "五一",
  "圣诞"; the lunar ones, "春节", "中秋", in the two months they fall in); "年初", "年底",
  "上半年";
* **counted back** from the date in the question, else from ``now``: "昨天", "前天", "今天",
  "上周", "上个星期", "上礼拜", "上周末", "上个月", "去年", "前年", "这周", "本月", "今年",
  "上周六" (both readings: the latest Saturday, and the Saturday of last week), "三天前",
  "两个多月前", "半年前", "前两天", "前一周"; "去年年底", "今年年初" (those months of that
  year, not the whole year); "3号" in a question about the past (the latest 3rd), "本月5号",
  "上个月5号";
* **counted on** from a date in the question only: "2023年5月5日两天后" (without a date,
  "三天后" is the future, which memory does not hold).

Numbers may be digits or Chinese numerals (一 to 三十一, 两, 几 as "a few", 半 as half).
Written from general usage, not from any data set.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta

from shiyi.memory.text.chinese_numbers import NUMERAL, number

Window = tuple[datetime, datetime]

_SPANS = {"天": 1, "日": 1, "周": 7, "星期": 7, "礼拜": 7, "月": 31, "年": 366}
"""Days per unit, as the English reading counts them ("a month": 31 days)."""
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

_NUM = r"([0-9]{1,2}|[一二三四五六七八九十]{1,3})"
_COUNT = rf"([0-9]{{1,3}}|{NUMERAL})"
_UNIT = r"(天|日|周|星期|礼拜|月|年)"
_WEEK = r"(?:周|星期|礼拜)"
_YEAR = r"((?:19|20)[0-9]{2}|[一二][〇零一二三四五六七八九]{3})\s*年"

_DATE = re.compile(rf"{_YEAR}(?:\s*{_NUM}\s*月(?:\s*{_NUM}\s*[日号])?)?")
"""A year, optionally with its month and day: "2023年", "2023年5月", "2023年5月7日"."""
_MONTH_ALONE = re.compile(rf"(?<![0-9一二三四五六七八九十个几每上下这本年]){_NUM}\s*月")
"""A month without a year ("五月", "5月份", "5月7号"); "三个月" (a span), "上个月" (relative)
and "每月" (every month) are not one."""

_HOLIDAY_MONTHS = {
    "元旦": (1,), "春节": (1, 2), "过年": (1, 2), "元宵": (2, 3), "情人节": (2,), "清明": (4,),
    "五一": (5,), "劳动节": (5,), "端午": (5, 6), "七夕": (7, 8), "中秋": (9, 10), "国庆": (10,),
    "万圣节": (10,), "感恩节": (11,), "圣诞": (12,), "平安夜": (12,),
}  # fmt: skip
"""The months a holiday falls in; the lunar ones move over two (中秋 is in September or
October)."""
_HOLIDAY = re.compile("|".join(_HOLIDAY_MONTHS))
_PART_MONTHS = {"初": (1, 2), "中": (6, 7), "底": (11, 12), "末": (11, 12)}
_PART_MONTHS |= {"上半年": (1, 6), "下半年": (7, 12)}
_PART_OF_YEAR = re.compile(
    r"(?:(前年|去年|今年)\s*|(?<![今去前]))(?:年(初|中|底|末)|(上半年|下半年))"
)
"""Part of a year: "年初", "去年年底", "今年上半年"; "今年中" ("during this year") is none
(this year's middle is "今年年中")."""
_DAY_OF_MONTH = re.compile(
    rf"(?:(本月|这个?月|上个?月)|(?<![0-9一二三四五六七八九十月])){_NUM}\s*号"
    r"(?![线楼房门口床车机位桌店馆院厅])"
)
"""A day of the month: "3号" (the latest 3rd), "本月5号", "上个月5号"; not "3号线" (a
subway line) or "3号楼" (a building), nor "5月7号" (a date, read above)."""
_PAST = re.compile(r"了|过|刚")
"""A bare "3号" is one gone by only in a question about the past ("3号做了什么"), not a plan
("3号要做什么")."""

_DAYS_BACK = {"大前天": 3, "前天": 2, "昨天": 1, "昨晚": 1, "昨日": 1, "今天": 0, "今晚": 0,
              "今早": 0, "今日": 0}  # fmt: skip
_DAY_WORD = re.compile(r"大前天|前天(?!气)|昨天|昨晚|昨日|今天|今晚|今早|今日")
_WEEKDAY = re.compile(
    r"(上上|上|这|本)个?(?:周([一二三四五六日])|(?:星期|礼拜)([一二三四五六日天]))"
)
"""A weekday with its week; "天" for Sunday only after 星期 or 礼拜 ("这周天气" is the weather)."""
_NOT_A_WEEK = "[一二三四五六日天末围]"
"""What after 周 makes it a weekday, a weekend or no week at all ("这周围": the surroundings)."""
_LAST_SPAN = re.compile(rf"(上上|上)个?(?:({_WEEK})(?!{_NOT_A_WEEK})|{_WEEK}末|(月))")
_THIS_SPAN = re.compile(rf"(?:这个?|本)(?:({_WEEK})(?!{_NOT_A_WEEK})|{_WEEK}末|(月))")
_YEAR_WORD = re.compile(r"前年|去年|今年")
_AGO = re.compile(
    rf"(?<![0-9]){_COUNT}\s*多?\s*个?\s*多?\s*{_UNIT}\s*多?\s*(?:以前|之前|前)(?![面边头])"
)
_BEFORE = re.compile(rf"前\s*{_COUNT}\s*个?\s*{_UNIT}")
""""前两天" (the last couple of days), "5月7日的前一周" (the week before it)."""
_AFTER = re.compile(rf"(?<![0-9]){_COUNT}\s*个?\s*{_UNIT}\s*(?:以后|之后|后)")
_RELATIVE = re.compile(
    "|".join(
        p.pattern
        for p in (
            _DAY_WORD,
            _WEEKDAY,
            _LAST_SPAN,
            _THIS_SPAN,
            _YEAR_WORD,
            _AGO,
            _BEFORE,
            _DAY_OF_MONTH,
            _PART_OF_YEAR,
        )
    )
)


def normal(text: str) -> str:
    """Full-width digits ("２０２３年５月") read as ASCII ones."""
    return unicodedata.normalize("NFKC", text)


def _day(year: float, month: float, day: float) -> Window | None:
    try:
        start = datetime(int(year), int(month), int(day), tzinfo=UTC)
    except ValueError:  # 2月30日: not a date
        return None
    return start, start + timedelta(days=1)


def _month(year: float, month: float) -> Window | None:
    if not 1 <= month <= 12:
        return None
    month, year = int(month), int(year)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return datetime(year, month, 1, tzinfo=UTC), end


def explicit_days(text: str) -> list[Window]:
    """One-day windows for the full dates in ``text``."""
    days = []
    for match in _DATE.finditer(normal(text)):
        year, month, day = (number(g) if g else None for g in match.groups())
        if year is not None and month is not None and day is not None:
            days.append(_day(year, month, day) or _month(year, month))
    return [d for d in days if d is not None]


def explicit_periods(text: str) -> list[Window]:
    """Whole months and years named with their year ("2023年5月", "2023年")."""
    periods = []
    for match in _DATE.finditer(normal(text)):
        year, month, day = (number(g) if g else None for g in match.groups())
        if year is None or day is not None:
            continue
        if month is None:
            start = datetime(int(year), 1, 1, tzinfo=UTC)
            periods.append((start, start.replace(year=start.year + 1)))
        elif (period := _month(year, month)) is not None:
            periods.append(period)
    return periods


def months(text: str) -> set[int]:
    """Months named without a year: that month of any year; a holiday's; a part of the year
    ("年底") without its year."""
    text = normal(text)
    found = (number(m[1]) for m in _MONTH_ALONE.finditer(text))
    named = {int(m) for m in found if m is not None and 1 <= m <= 12}
    named |= {month for m in _HOLIDAY.finditer(text) for month in _HOLIDAY_MONTHS[m[0]]}
    for match in _PART_OF_YEAR.finditer(text):
        if not match[1]:
            first, last = _PART_MONTHS[match[2] or match[3]]
            named |= set(range(first, last + 1))
    return named


def has_relative(text: str) -> bool:
    """Whether ``text`` counts time back from a moment (so ``now`` is worth asking for)."""
    return _RELATIVE.search(normal(text)) is not None


def _last_weekday(anchor: datetime, day: int, weeks_back: int) -> datetime:
    """The earlier of the two readings of "上周六": the latest Saturday before ``anchor``'s
    day, and the Saturday of the (Monday-based) week before ``anchor``'s."""
    latest = anchor - timedelta(days=(anchor.weekday() - day) % 7 or 7)
    monday = anchor - timedelta(days=anchor.weekday())
    of_last_week = monday - timedelta(days=7) + timedelta(days=day)
    return min(latest, of_last_week) - timedelta(days=7 * (weeks_back - 1))


def relative(text: str, anchor: datetime) -> list[Window]:
    """Windows counted back from ``anchor``; each includes the anchor day itself, as in the
    English reading (what happened "上周" is often told on the day asked about)."""
    text = normal(text)
    end = anchor + timedelta(days=1)
    found = _parts_of_years(text, anchor) + _days_of_month(text, anchor)
    # "去年年底" is its last months, not the whole year; "上个月5号" that day, not the month
    text = _DAY_OF_MONTH.sub(" ", _PART_OF_YEAR.sub(" ", text))
    found += [(anchor - timedelta(days=_DAYS_BACK[m[0]]), end) for m in _DAY_WORD.finditer(text)]
    for match in _WEEKDAY.finditer(text):
        day = _WEEKDAYS[match[2] or match[3]]
        if match[1] in ("上", "上上"):
            found.append((_last_weekday(anchor, day, len(match[1])), end))
        elif (this := anchor + timedelta(days=day - anchor.weekday())) <= anchor:
            found.append((this, end))
    for match in _LAST_SPAN.finditer(text):
        span = 31 if match[3] else 7 if match[2] else 3
        found.append((anchor - timedelta(days=(len(match[1]) + 1) * span), end))
    for match in _THIS_SPAN.finditer(text):
        span = 31 if match[2] else 7 if match[1] else 3
        found.append((anchor - timedelta(days=span), end))
    for match in _YEAR_WORD.finditer(text):
        if match[0] == "前年":
            found.append((anchor - timedelta(days=3 * 366), anchor - timedelta(days=366)))
        else:
            found.append((anchor - timedelta(days=(2 if match[0] == "去年" else 1) * 366), end))
    for match in _spans(_AGO, text):
        span, amount = _SPANS[match[2]], _amount(match)
        back = timedelta(days=amount * span)
        slack = timedelta(days=min(amount, 1) * span)  # "半年前": give or take half a year
        found.append((anchor - back - slack, anchor - back + slack))
    for match in _spans(_BEFORE, text):
        found.append((anchor - timedelta(days=_amount(match) * _SPANS[match[2]]), end))
    return found


def _parts_of_years(text: str, anchor: datetime) -> list[Window]:
    """ "去年年底", "今年年初", "今年上半年": those months of that year."""
    found = []
    for match in _PART_OF_YEAR.finditer(text):
        if match[1]:
            year = anchor.year - {"今年": 0, "去年": 1, "前年": 2}[match[1]]
            first, last = _PART_MONTHS[match[2] or match[3]]
            start, stop = _month(year, first), _month(year, last)
            if start is not None and stop is not None:
                found.append((start[0], stop[1]))
    return found


def _days_of_month(text: str, anchor: datetime) -> list[Window]:
    """ "本月5号", "上个月5号"; "3号" in a question about the past: the latest 3rd."""
    found = []
    past = _PAST.search(text) is not None  # once: per match it was quadratic in the text
    for match in _DAY_OF_MONTH.finditer(text):
        day = number(match[2])
        if day is None:
            continue
        month = anchor.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        if match[1] and match[1].startswith("上"):
            month = (month - timedelta(days=1)).replace(day=1)
        elif not match[1]:
            if not past:
                continue
            if day > anchor.day:  # not yet this month: last month's
                month = (month - timedelta(days=1)).replace(day=1)
        window = _day(month.year, month.month, day)
        if window is not None and window[0] <= anchor:
            found.append(window)
    return found


def after(text: str, anchor: datetime) -> list[Window]:
    """Windows counted on from an explicit day ("2023年5月5日两天后"), from the day itself."""
    return [
        (anchor, anchor + timedelta(days=_amount(m) * _SPANS[m[2]] + 1))
        for m in _spans(_AFTER, normal(text))
    ]


def _spans(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """Matches of a count and a unit that are a span of time: months only as "个月" or
    "半月", since "五月前" / "5月后" are before and after May."""
    return [m for m in pattern.finditer(text) if m[2] != "月" or "个" in m[0] or m[1] == "半"]


def _amount(match: re.Match[str]) -> float:
    return number(match[1]) or 1
