"""Whether a turn says when something happened: the evidence a "when did ..." question needs.

Asked "When did Ana start the pottery class?", the turn that answers is the one placing it in
time ("I started a pottery class last week", "we moved in two months ago", "on Saturday I
finally ran my first 10k"), not the later turns that only mention the class.  People place
events by relative words (yesterday, last weekend, two weeks ago, this morning), by a weekday,
a month or a season, a date, or a year.  This module only tells whether a text does so; the
recall boost (:mod:`shiyi.memory.recall.boosts`) decides what it is worth.
"""

from __future__ import annotations

import re
from functools import lru_cache

from shiyi.memory.text.chinese_numbers import NUMERAL

MAX_CHARS = 1000
"""Only a text's opening is read: a turn tells when in its first sentences."""


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_WORD = re.compile(r"[a-z]+|\d+")
_ALONE = _set(
    "yesterday tonight today tomorrow recently lately ago fortnight christmas xmas easter"
    " thanksgiving halloween"
)
"""A holiday is a date ("we spent Christmas with my parents")."""
_UNITS = _set(
    "minute minutes hour hours day days night nights week weeks weekend weekends month months "
    "year years decade decades"
)
_WEEKDAYS = _set(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays "
    "thursdays fridays saturdays sundays mon tue tues wed thu thur thurs fri sat sun"
)
"""With the short forms people type ("last Fri"); a weekday counts only after "on" or a
relative word, so "sat" the verb and "the sun" are not days."""
_PARTS = _set("spring summer autumn fall winter morning afternoon evening night")
_MONTHS = _set(
    "january february march april may june july august september october november december"
)
_COUNTS = _set("a an one two three four five six seven eight nine ten few couple")
_RELATIVE = _set("last past previous this next coming")
_BEFORE_MONTH = _set("in since during by early late mid of")
_BEFORE_YEAR = _set("in since back around")
_AFTER_SPAN = _set("back before later earlier now already")
_BEFORE_SPAN = _set("for in within over")
"""How long, or how soon: "for four years", "in two weeks", "seven years now"."""
_JUST_DONE = _set(
    "got made went came did had saw took bought began started finished joined moved won lost"
    " met found left sent gave ran"
)
"""Past tenses that "just" turns into news ("I just got accepted"); any "-ed" word also."""
_LAST_TALK = _set("last spoke talked chatted met caught saw")
_TRIGGERS = (
    _ALONE
    | _UNITS
    | _WEEKDAYS
    | _MONTHS
    | _RELATIVE
    | {"day", "weekend", "holiday", "holidays", "just", "since"}
)
"""Words one of the rules of :func:`_placed_at` starts from (besides years)."""
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
        _placed_at(words, i)
        for i, word in enumerate(words)
        if word in _TRIGGERS or (len(word) == 4 and word.isdigit())
    )
    return placed or (not opening.isascii() and _CJK.search(opening) is not None)


def _placed_at(words: list[str], i: int) -> bool:
    word = words[i]
    before = words[i - 1] if i else ""
    after = words[i + 1] if i + 1 < len(words) else ""
    if word in _ALONE:
        return True
    if word in _RELATIVE:
        return after in _UNITS or after in _WEEKDAYS or after in _PARTS
    if word in _WEEKDAYS:
        return before == "on"
    if word in _MONTHS:  # "may" only beside a date word: it is mostly a verb
        return before in _BEFORE_MONTH or after.isdigit() or before.isdigit()
    if len(word) == 4 and word.isdigit() and word[:2] in ("19", "20"):
        return before in _BEFORE_YEAR
    if word in _UNITS and (before.isdigit() or before in _COUNTS):
        # "two weeks later", "seven years now", "for four years" ("ago" is found on its own)
        return after in _AFTER_SPAN or (i >= 2 and words[i - 2] in _BEFORE_SPAN)
    if word == "just":  # "I just got accepted": news of now
        return before in ("i", "we", "ve", "has", "have") and (
            after in _JUST_DONE or after.endswith("ed")
        )
    if word == "since":  # "since we last spoke": what happened between two chats
        return after in ("we", "i") and i + 2 < len(words) and words[i + 2] in _LAST_TALK
    if word == "day" and before in ("other", "next", "previous"):
        return i >= 2 and words[i - 2] == "the"
    return (
        word in ("weekend", "holidays", "holiday")
        and before == "the"
        and (i >= 2 and words[i - 2] in ("over", "during"))
    )
