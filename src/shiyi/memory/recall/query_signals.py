"""Reading a memory query without a model: who it names, when it asks about, what it wants.

Seed 001 section 3.3 (adaptive retrieval by intent): the retriever changes what it favours by
what the question is, found with patterns in well under a millisecond, never an LLM call.

* **names**: every word of the query, lower-cased, so a speaker (``caroline``) or an entity
  named anywhere in it ("What did Caroline's sister say?") can be matched against events;
  in Chinese, which has no spaces, every two to four characters ("小明上周…" names 小明).
* **people**: the capitalised words inside its sentences that may name a person, matched
  against speakers through nicknames and spellings (:mod:`shiyi.memory.text.people`).
* **windows**: time ranges the question is about, on event time: "on May 3, 2023",
  "3 June, 2023", "2023/06/03", "6/3/2023" (both readings), "in December 2023", "between May
  and July 2023", "in 2022", "early 2022", "yesterday", "last Saturday", "last
  week/month/year", "a couple of weeks ago", "the week before August 3, 2023", "two days
  after May 5, 2023".  Relative ones count back from an explicit date in the question when
  there is one, else from ``now`` (for an imported history, its newest turn).  The same
  in Chinese ("2023年5月7日", "上周", "三天前", ...): :mod:`shiyi.memory.recall.chinese_time`.
* **months**: a month named without a year ("camping in June", "on May 7th"): that month
  in any year.
* **recent**: "recently", "latest", "these days", "currently": newer memories win ties.
* **intent**: temporal, multi_hop, preference, procedure, history or lookup; it picks
  which kinds of memory the retriever prefers (see :data:`INTENT_KINDS`); otherwise the
  message intent of :mod:`shiyi.memory.recall.intent` does, when a cue is clear (a query quoting
  an error favours past problems, one asking for new work favours facts and procedures).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal, TypeAlias

from shiyi.index.text import tokenize
from shiyi.memory.recall import chinese_time
from shiyi.memory.recall.intent import favoured_kinds
from shiyi.memory.text.people import han_grams, query_names

Intent: TypeAlias = Literal["temporal", "multi_hop", "preference", "procedure", "history", "lookup"]
INTENTS: tuple[Intent, ...] = (
    "temporal", "multi_hop", "preference", "procedure", "history", "lookup"
)  # fmt: skip

DAY = 86400.0
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_MONTH = (
    r"(january|february|march|april|may|june|july|august|september|october|november"
    r"|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_DAY_FIRST = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b")
_MONTH_FIRST = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b")
# The year looked for after a month is within 200 characters: an unbounded look ahead per
# month mention was quadratic in the text ("in may in may ...", issue 29).
_MONTH_ALONE = re.compile(
    rf"\b(?:in|during|since|by|until|of|on)\s+{_MONTH}(?!\w)(?![\w\s,]{{0,200}}\d{{4}})"
)
_SEASON = "(?:spring|summer|autumn|fall|winter)"
_YEAR = re.compile(
    rf"\b(?:in|during|since|of|by|early|late|mid|around|{_SEASON}"
    r"|christmas|easter|thanksgiving)[\s-]+((?:19|20)\d\d)\b"
)
_ISO_DAY = re.compile(r"\b((?:19|20)\d\d)[-/](\d{1,2})[-/](\d{1,2})\b")
_SLASH_DAY = re.compile(r"\b(\d{1,2})/(\d{1,2})/((?:19|20)\d\d)\b")
"""5/7/2023: May 7 in the US, 5 July elsewhere; both are searched."""
_MONTH_RANGE = re.compile(
    rf"\b(?:between|from)\s+{_MONTH}\s+(?:and|to|until|till|through)\s+{_MONTH},?\s+(\d{{4}})\b"
)
# English names, not ``calendar.day_name`` (it follows the process's locale)
_WEEKDAYS = {
    name: i
    for names in (
        "monday tuesday wednesday thursday friday saturday sunday",
        "mon tue wed thu fri sat sun",
    )
    for i, name in enumerate(names.split())
}
_WEEKDAYS |= {"tues": 1, "thur": 3, "thurs": 3}  # "last Fri", "on Tues": as people type
_WEEKDAY = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_SPANS = {"day": 1, "week": 7, "weekend": 3, "month": 31, "year": 366} | {
    name: 7 for name in _WEEKDAYS
}
_COUNT = r"(a\s+couple\s+of|couple\s+of|a\s+few|few|a|one|two|three|four|five|six|\d+)"
_BEFORE = re.compile(
    rf"\b(?:the\s+)?{_COUNT}?\s*(day|week|weekend|month|year|{_WEEKDAY})s?\s+before\b"
)
_LAST = re.compile(r"\b(?:last|past|previous)\s+(week|weekend|month|year)\b")
_LAST_WEEKDAY = re.compile(rf"\b(?:last|past|previous)\s+({_WEEKDAY})\b")
_THIS = re.compile(r"\bthis\s+(week|month|year)\b")
_AGO = re.compile(rf"\b{_COUNT}\s+(day|week|month|year)s?\s+ago\b")
_AFTER = re.compile(
    rf"\b(?:the\s+)?{_COUNT}?\s*(day|week|weekend|month|year|{_WEEKDAY})s?\s+after\b"
)
_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_COUNTS |= {"a couple of": 2, "couple of": 2, "a few": 3, "few": 3}
_YESTERDAY = re.compile(r"\byesterday\b")  # 昨天: :mod:`chinese_time`
_RECENT = re.compile(
    r"\b(recent|recently|lately|latest|newest|these days|nowadays|currently|current|now)\b"
    r"|最近|最新|现在|目前"
)
# Ways people ask when, how long or in what order, from general usage (not from any data
# set): "since when", "do you know when", "at what age", "how many weeks", "before or after".
_TEMPORAL = re.compile(
    r"^\s*(?:(?:and|so|roughly|about|around|approximately|exactly)\s+)?when\b"
    r"|\b(?:since|until|till|by|from)\s+when\b"
    r"|\b(?:know|tell\s+me|remind\s+me|remember|recall|ask(?:ed)?|wonder(?:ing)?)\s+when\b"
    r"|\b(?:what|which)\s+(?:date|day|month|year|time|week|weekend|season|age|decade)\b"
    r"|\bat\s+what\s+point\b"
    r"|\bhow\s+(?:long|old|soon|recently)\b"
    r"|\bhow\s+many\s+(?:minutes|hours|days|nights|weeks|weekends|months|years|decades)\b"
    r"|\bthe\s+date\s+of\b|\btimeline\b|\bbefore\s+or\s+after\b"
    r"|\b(?:came|happened)\s+first\b|\bwhich\s+was\s+first\b"
    rf"|\b{_SEASON}\s+or\s+{_SEASON}\b"
    r"|什么时候|啥时候|什么时间|哪天|哪一天|哪一年|哪年|哪个月|几月|几号|几点|何时|多久|多长时间"
    r"|多少年|几年|几个月|几个星期|几周|几天|几岁|多少岁|多大的时候|哪个季节|什么季节|先后"
    r"|之前还是之后|前还是后|哪个先|谁先"
)
_MULTI_HOP = re.compile(
    r"\bboth\b|\bin common\b|\ball\s+the\b"
    r"|\bhow many\b|\bwhich\s+\w+\s+(?:has|have)\b|\beach\b|都|共同"
)
# "what has X done": one "done" search after the first "what ... has", as ".*\bdone\b"
# after each of them was quadratic in the text ("what has what has ...", issue 29).
_WHAT_HAS = re.compile(r"\bwhat\s+(?:\w+\s+)?(?:has|have)\b")
_DONE = re.compile(r"\bdone\b")
_PREFERENCE = re.compile(
    r"\b(prefer|prefers|preferred|favou?rite|like|likes|love|loves|enjoy|enjoys|hate|hates"
    r"|dislike)\b|喜欢|偏好|讨厌"
)
_PROCEDURE = re.compile(r"^\s*how\s+(do|can|should|to)\b|\bsteps?\b|\bprocedure\b|怎么|如何|步骤")
_HISTORY = re.compile(
    r"\b(before|previous(ly)?|used to|formerly|earlier|old|history|past|originally|changed)\b"
    r"|以前|之前|原来|过去|曾经|以往|历史"
)
_WORD = re.compile(r"[^\W\d_]+")
_RELATIVE = re.compile(
    "|".join(p.pattern for p in (_YESTERDAY, _BEFORE, _LAST, _LAST_WEEKDAY, _THIS, _AGO))
)

INTENT_KINDS: dict[Intent, tuple[str, ...]] = {
    "procedure": ("procedural",),
    "preference": ("preference",),
}
"""Memory kinds an intent prefers (a boost, never a filter)."""


@dataclass(slots=True, frozen=True)
class QuerySignals:
    names: frozenset[str] = frozenset()
    people: frozenset[str] = frozenset()
    windows: tuple[tuple[float, float], ...] = ()
    months: frozenset[int] = frozenset()
    recent: bool = False
    intent: Intent = "lookup"
    history: bool = False
    kinds: tuple[str, ...] = field(default=())
    terms: frozenset[str] = frozenset()
    """The query's search terms with their stems, as the keyword index reads them."""

    @property
    def timed(self) -> bool:
        return bool(self.windows or self.months)


def _month(text: str) -> int:
    return _MONTHS[text.lower().rstrip(".")]


def _day_window(year: int, month: int, day: int) -> tuple[datetime, datetime] | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # "31 February": not a date, so no window
        return None
    return start, start + timedelta(days=1)


def _explicit_days(text: str) -> list[tuple[datetime, datetime]]:
    days = [_day_window(int(m[3]), _month(m[2]), int(m[1])) for m in _DAY_FIRST.finditer(text)]
    days += [_day_window(int(m[3]), _month(m[1]), int(m[2])) for m in _MONTH_FIRST.finditer(text)]
    days += [_day_window(int(m[1]), int(m[2]), int(m[3])) for m in _ISO_DAY.finditer(text)]
    for m in _SLASH_DAY.finditer(text):
        first, second, year = int(m[1]), int(m[2]), int(m[3])
        days += [_day_window(year, first, second)]
        days += [_day_window(year, second, first)] if first != second else []
    return [d for d in days if d is not None]


def _explicit_periods(text: str) -> list[tuple[datetime, datetime]]:
    periods = []
    for match in _MONTH_RANGE.finditer(text):
        year, first, last = int(match[3]), _month(match[1]), _month(match[2])
        if first <= last:
            end = datetime(year + last // 12, last % 12 + 1, 1, tzinfo=UTC)
            periods.append((datetime(year, first, 1, tzinfo=UTC), end))
    for match in _MONTH_YEAR.finditer(text):
        year, month = int(match[2]), _month(match[1])
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        periods.append((datetime(year, month, 1, tzinfo=UTC), end))
    for match in _YEAR.finditer(text):
        year = int(match[1])
        periods.append((datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)))
    return periods


def _count(word: str | None) -> int:
    if not word:
        return 1
    return int(word) if word.isdigit() else _COUNTS.get(word, 1)


def _after(text: str, anchor: datetime) -> list[tuple[datetime, datetime]]:
    """Windows counted on from an explicit day: "two days after May 5, 2023", "the week
    after"; from the day itself, which is often when the plan was told."""
    return [
        (anchor, anchor + timedelta(days=_count(match[1]) * _SPANS[match[2]] + 1))
        for match in _AFTER.finditer(text)
    ]


def _previous_weekday(anchor: datetime, name: str) -> datetime:
    """The latest ``name`` (a weekday) before ``anchor``'s day: "last Saturday"."""
    back = (anchor.weekday() - _WEEKDAYS[name]) % 7 or 7
    return anchor - timedelta(days=back)


def _relative(text: str, anchor: datetime) -> list[tuple[datetime, datetime]]:
    """Windows counted back from ``anchor``; each includes the anchor day itself, since what
    happened "last week" is usually told on the day it is asked about."""
    end = anchor + timedelta(days=1)
    found = []
    if _YESTERDAY.search(text):
        days = 2 if "day before yesterday" in text else 1
        found.append((anchor - timedelta(days=days), end))
    for match in _BEFORE.finditer(text):
        found.append((anchor - timedelta(days=_count(match[1]) * _SPANS[match[2]]), end))
    for match in _LAST.finditer(text):
        found.append((anchor - timedelta(days=2 * _SPANS[match[1]]), end))
    for match in _LAST_WEEKDAY.finditer(text):
        found.append((_previous_weekday(anchor, match[1]), end))
    for match in _THIS.finditer(text):
        found.append((anchor - timedelta(days=_SPANS[match[1]]), end))
    for match in _AGO.finditer(text):
        back = timedelta(days=_count(match[1]) * _SPANS[match[2]])
        slack = timedelta(days=_SPANS[match[2]])
        found.append((anchor - back - slack, anchor - back + slack))
    return found


def _relative_windows(text: str, anchor: datetime) -> list[tuple[datetime, datetime]]:
    return _relative(text, anchor) + chinese_time.relative(text, anchor)


def _what_done(text: str) -> bool:
    """ "what has X done" (``text`` is one line: :func:`understand` joins it)."""
    what = _WHAT_HAS.search(text)
    return what is not None and _DONE.search(text, what.end()) is not None


def _intent(text: str, timed: bool) -> Intent:
    if _PROCEDURE.search(text):
        return "procedure"
    if _TEMPORAL.search(text):
        return "temporal"
    if _MULTI_HOP.search(text) or _what_done(text):
        return "multi_hop"
    if _PREFERENCE.search(text):
        return "preference"
    if _HISTORY.search(text):
        return "history"
    return "temporal" if timed else "lookup"


def understand(query: str, now: float | Callable[[], float]) -> QuerySignals:
    """The signals of ``query``; ``now`` (epoch seconds, or a function giving them, called
    only when the query has a relative time) anchors relative times."""
    text = " ".join(query.lower().split())
    days = _explicit_days(text) + chinese_time.explicit_days(text)
    windows = days or _explicit_periods(text) + chinese_time.explicit_periods(text)
    if days:
        windows += _relative_windows(text, days[0][0]) + _after(text, days[0][0])
        windows += chinese_time.after(text, days[0][0])
    elif _RELATIVE.search(text) or chinese_time.has_relative(text):
        moment = now() if callable(now) else now
        windows += _relative_windows(text, datetime.fromtimestamp(moment, UTC))
    months = set()
    if not windows:
        months = {_month(m[1]) for m in _MONTH_ALONE.finditer(text)} | chinese_time.months(text)
    intent = _intent(text, bool(windows or months))
    return QuerySignals(
        names=frozenset(_WORD.findall(text)) | han_grams(text),
        people=query_names(query),
        windows=tuple((a.timestamp(), b.timestamp()) for a, b in windows),
        months=frozenset(months),
        recent=bool(_RECENT.search(text)),
        intent=intent,
        history=bool(_HISTORY.search(text)),
        kinds=INTENT_KINDS.get(intent, ()) or favoured_kinds(query),
        terms=frozenset(tokenize(query, stems=True)),
    )
