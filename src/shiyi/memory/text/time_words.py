"""Whether a turn says when something happened: the evidence a "when did ..." question needs.

Asked "When did Ana start the pottery class?", the turn that answers is the one placing it in
time ("I started a pottery class last week", "we moved in two months ago", "on Saturday I
finally ran my first 10k"), not the later turns that only mention the class.  People place
events by relative words (yesterday, last weekend, two weeks ago, this morning), by a weekday,
a month or a season, a date, a year or a decade; by how long ("for a couple of years now", "a
month since I adopted her"); and by their own life: an age or a stage ("when I was ten", "as a
kid", "growing up", "back in college", "since high school"), an occasion ("on my birthday").
The phrasings are written from everyday speech, not from any data set.  This module only
tells whether a text does so; the recall boost (:mod:`shiyi.memory.recall.boosts`) decides
what it is worth.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from shiyi.memory.text.chinese_numbers import NUMERAL

MAX_CHARS = 1000
"""Only a text's opening is read: a turn tells when in its first sentences."""


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_WORD = re.compile(r"[a-z]+|\d+")
_ALONE = _set(
    "yesterday tonight today tomorrow recently lately ago fortnight christmas xmas easter"
    " thanksgiving halloween valentine valentines yday tonite tmrw tmr"
)
"""A holiday is a date ("we spent Christmas with my parents"); with the short forms people
type ("yday", "tonite")."""
_UNITS = _set(
    "minute minutes hour hours day days night nights week weeks weekend weekends month months "
    "year years decade decades hrs mins wks yrs wknd wknds nite nites"
)
_WEEKDAYS = _set(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays "
    "thursdays fridays saturdays sundays mon tue tues wed thu thur thurs fri sat sun"
)
"""With the short forms people type ("last Fri"); a weekday counts only after "on" or a
relative word, or before a part of the day ("Friday night"), so "sat" the verb and "the sun"
are not days."""
_SEASONS = _set("spring summer autumn fall winter")
_PARTS = _SEASONS | _set("morning afternoon evening night nite")
_MONTHS = _set(
    "january february march april may june july august september october november december"
)
_COUNTS = _set("a an one two three four five six seven eight nine ten few couple several many")
_RELATIVE = _set("last past previous this next coming following")
_BEFORE_MONTH = _set("in since during by early late mid of")
_BEFORE_YEAR = _set("in since back around")
_AFTER_SPAN = _set("back before later earlier now already since in")
"""After how long: "two weeks later", "seven years now", "a month since I adopted her",
"three weeks in"."""
_BEFORE_SPAN = _set("for in within over took spent been")
"""How long, or how soon: "for four years", "in two weeks", "it took two years", "it's been
three years"."""
_IN_SPAN = _COUNTS | _set(
    "of the over about around nearly almost more than last past next first me us him her them"
)
"""Words between a span's preposition and its unit: "for a couple of years", "in the last two
weeks", "for over a decade", "over the past few months"."""
_SPAN_FROM_NOW = _set("last past next")
_JUST_DONE = _set(
    "got made went came did had saw took bought began started finished joined moved won lost"
    " met found left sent gave ran"
)
"""Past tenses that "just" turns into news ("I just got accepted"); any "-ed" word also."""
_LAST_TALK = _set("last spoke talked chatted met caught saw")
_SINCE = _set("then college university uni school childhood birth")
"""What "since" starts from besides a date: "since high school", "since then"."""
_PRONOUNS = _set("i we he she they you")
_WAS = _set("was were")
_YOUNG = _COUNTS | _set("young younger little small kid kids child children teenager teen in at")
"""After "when I was": an age or a stage of life ("when I was ten", "when we were kids", "when
she was in college"), not a mood ("when I was tired")."""
_STAGES = _set("kid child teenager teen toddler student boy girl baby youngster")
_SCHOOLS = _set("college university uni kindergarten")
_SCHOOL_KINDS = _set("high middle elementary primary secondary grad graduate")
_AROUND = _set("in since after before during until till through throughout")
"""Before a stage of life that dates something: "in college", "after high school"."""
_BREAKS = _set("weekend wknd holidays holiday hols")
_BEFORE_THE_WEEKEND = _set("over during at on spent spend spending")
_OCCASIONS = _set("birthday bday anniversary graduation honeymoon retirement wedding")
_POSSESSIVE = _set("my our his her their your s")
_AT_OCCASION = _set("on for at after before since during until")
_ORDINAL = _set("st nd rd th")
_BEFORE_SEASON = _set("in during over since until through")
_TRIGGERS = (
    _ALONE
    | _UNITS
    | _WEEKDAYS
    | _MONTHS
    | _RELATIVE
    | _SEASONS
    | _SCHOOLS
    | _OCCASIONS
    | _BREAKS
    | {"school", "just", "since", "when", "as", "growing", "age", "aged", "new", "back", "while"}
    | {"morning", "evening", "semester", "term"}
)
"""Words one of the rules of :func:`_placed_at` starts from (besides numbers)."""
_CJK_NUMBER = rf"(?:[0-9]{{1,3}}|{NUMERAL})"
_CJK = re.compile(
    r"大前天|前天|昨天|昨晚|今天|今早|今晚|刚才|刚刚|明天|后天|去年|前年|今年|明年"
    r"|(?:[上下]{1,2}|这|本)个?(?:周(?!围)|星期|礼拜|月)"
    r"|(?:星期|礼拜)[一二三四五六日天]|(?<![0-9一二两三四五六七八九十几每])周[一二三四五六日]"
    r"|(?:19|20)[0-9]{2}\s*年"
    r"|(?<![0-9一二三四五六七八九十个几每上下这本])(?:[0-9]{1,2}|[一二三四五六七八九十]{1,3})\s*月"
    r"(?:份|初|中旬|底|[0-9一二三四五六七八九十]{1,3}\s*[日号])"
    rf"|{_CJK_NUMBER}\s*多?\s*个?\s*多?\s*(?:天|周|星期|礼拜|个月|年)\s*多?"
    r"(?:以前|之前|前|以后|之后|后|了|来)"
    r"|刚(?:买|搬|到|回|开始|拿到|收到|结婚|完成|换了|找到|考完|报名|加入|生了|去了)"
)
"""Chinese places an event by the same means: 昨天, 上周六, 三年前, 学了三年了 (how long),
2019年, 五月份, 5月7号, 刚搬家 (just moved).  A month needs 份/初/底 or its day ("五月天" is a
band), "周" a weekday after it ("一周" is a span)."""


@lru_cache(maxsize=8192)
def says_when(text: str) -> bool:
    """Whether ``text`` places something in time ("last weekend", "two months ago",
    "on Friday", "in March", "back in 2019").  Cached: the same turns are candidates of many
    searches."""
    opening = text[:MAX_CHARS].lower()
    words = _WORD.findall(opening)
    placed = any(
        _placed_at(words, i) for i, word in enumerate(words) if word in _TRIGGERS or word.isdigit()
    )
    return placed or (not opening.isascii() and _CJK.search(opening) is not None)


def _placed_at(words: list[str], i: int) -> bool:
    """Whether one of the rules below places something in time at ``words[i]``."""
    word = words[i]
    before = words[i - 1] if i else ""
    after = words[i + 1] if i + 1 < len(words) else ""
    if word in _ALONE:
        return True
    if word.isdigit():
        return _number(words, i)
    rule = _RULES.get(word)
    if rule is not None and rule(words, i):
        return True
    if word in _RELATIVE:  # "last March", not "this may take a while"
        named = after in _MONTHS and not (word == "this" and after == "may")
        return after in _UNITS or after in _WEEKDAYS or after in _PARTS or named
    if word in _WEEKDAYS:
        return before == "on" or after in _PARTS
    if word in _MONTHS:  # "may" only beside a date word: it is mostly a verb
        return before in _BEFORE_MONTH or after.isdigit() or before.isdigit()
    if word in _UNITS and _span(words, i):
        return True
    if word in _PART_OF and _part_of(words, i):
        return True
    if word in _SEASONS:  # "in spring", "during the summer"; "I love summer" is no time
        return before in _BEFORE_SEASON or (before == "the" and _at(words, i - 2) in _BEFORE_SEASON)
    if word in _SCHOOLS or word == "school":
        return _school(words, i)
    if word in _OCCASIONS:
        return _occasion(words, i)
    return word in _BREAKS and _the_weekend(words, i)


def _at(words: list[str], i: int) -> str:
    return words[i] if 0 <= i < len(words) else ""


def _number(words: list[str], i: int) -> bool:
    """A year ("back in 2019"), a decade ("in the 90s"), a day of the month ("on the 5th")."""
    word, before, after = words[i], _at(words, i - 1), _at(words, i + 1)
    if len(word) == 4 and word[:2] in ("19", "20") and before in _BEFORE_YEAR:
        return True
    if after == "s" and len(word) in (2, 4) and word.endswith("0"):
        return before in ("the", "in", "early", "late", "mid")
    if after in _ORDINAL and len(word) <= 2:
        return before == "on" or (before == "the" and _at(words, i - 2) == "on")
    return False


_PART_OF = _set("week month year semester term") | _SEASONS
_PARTS_OF = _set("beginning start end middle")
_THAT = _set("the this last that")


def _part_of(words: list[str], i: int) -> bool:
    """ "at the beginning of the year", "by the end of last month" ("the end of the day" is
    a saying, and "day" is left out)."""
    return (
        _at(words, i - 1) in _THAT and _at(words, i - 2) == "of" and _at(words, i - 3) in _PARTS_OF
    )


def _span(words: list[str], i: int) -> bool:
    """How long or how long ago: "two weeks later", "for a couple of years", "in the last
    two weeks", "a month since I adopted her" ("ago" is found on its own).  "I have 2 days
    off" is no time."""
    start = i
    while start > 0 and (words[start - 1] in _IN_SPAN or words[start - 1].isdigit()):
        start -= 1
    run = words[start:i]
    if not any(w in _COUNTS or w.isdigit() for w in run):
        return False
    return (
        _at(words, i + 1) in _AFTER_SPAN
        or _at(words, start - 1) in _BEFORE_SPAN
        or any(w in _SPAN_FROM_NOW for w in run)
    )


def _just(words: list[str], i: int) -> bool:
    """ "I just got accepted": news of now."""
    before, after = _at(words, i - 1), _at(words, i + 1)
    return before in ("i", "we", "ve", "has", "have") and (
        after in _JUST_DONE or after.endswith("ed")
    )


def _since(words: list[str], i: int) -> bool:
    """ "since we last spoke" (what happened between two chats), "since I was little",
    "since high school", "since then"."""
    after, then = _at(words, i + 1), _at(words, i + 2)
    if after in _PRONOUNS and (then in _LAST_TALK or then in _WAS):
        return True
    return after in _SINCE or (after in _SCHOOL_KINDS and then == "school")


def _when_young(words: list[str], i: int) -> bool:
    """ "when I was ten", "when we were kids", "when she was in college"."""
    return (
        _at(words, i + 1) in _PRONOUNS
        and _at(words, i + 2) in _WAS
        and (_at(words, i + 3) in _YOUNG or _at(words, i + 3).isdigit())
    )


def _as_young(words: list[str], i: int) -> bool:
    """ "as a kid", "as a teenager"."""
    return _at(words, i + 1) in ("a", "an") and _at(words, i + 2) in _STAGES


def _at_age(words: list[str], i: int) -> bool:
    """ "at age 12", "at the age of six", "aged 30"."""
    if words[i] == "aged":
        return _at(words, i + 1).isdigit() or _at(words, i + 1) in _COUNTS
    before = _at(words, i - 1)
    return before == "at" or (before == "the" and _at(words, i - 2) == "at")


def _school(words: list[str], i: int) -> bool:
    """ "in college", "after high school", "back in uni"."""
    if words[i] == "school":
        return _at(words, i - 1) in _SCHOOL_KINDS and _at(words, i - 2) in _AROUND
    return _at(words, i - 1) in _AROUND


def _occasion(words: list[str], i: int) -> bool:
    """ "on my birthday", "for our anniversary", "at my 18th birthday"."""
    j = i - 1
    while j > i - 4 and (words[j].isdigit() or words[j] in _ORDINAL or words[j] == "first"):
        j -= 1
    return _at(words, j) in _POSSESSIVE and _at(words, j - 1) in _AT_OCCASION


def _the_weekend(words: list[str], i: int) -> bool:
    """ "over the weekend", "at the weekend", "spent the weekend", "during the holidays",
    "all weekend"."""
    if _at(words, i - 1) == "all":
        return True
    return _at(words, i - 1) == "the" and _at(words, i - 2) in _BEFORE_THE_WEEKEND


def _day_before(words: list[str], i: int) -> bool:
    """ "the other day", "the night before", "the morning after"."""
    if words[i] == "day" and _at(words, i - 1) in ("other", "next", "previous"):
        return _at(words, i - 2) == "the"
    return _at(words, i - 1) == "the" and _at(words, i + 1) in ("before", "after")


_RULES: dict[str, Callable[[list[str], int], bool]] = {
    "just": _just,
    "since": _since,
    "when": _when_young,
    "as": _as_young,
    "age": _at_age,
    "aged": _at_age,
    "growing": lambda words, i: _at(words, i + 1) == "up",
    "new": lambda words, i: _at(words, i + 1) in ("year", "years"),  # New Year's Eve
    "back": lambda words, i: (
        _at(words, i + 1) == "in"
        and _at(words, i + 2) == "the"
        and _at(words, i + 3) in ("day", "days")
    ),
    "while": lambda words, i: _at(words, i - 1) == "a" and _at(words, i + 1) == "back",
    "day": _day_before,
    "night": _day_before,
    "morning": _day_before,
    "week": _day_before,
    "evening": _day_before,
}
"""Rules that start from a word of their own; a false one lets the general rules try."""
